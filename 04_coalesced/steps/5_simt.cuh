// Chapter 04, step 5: simt and simt_bt. Double buffering: two shared stages; the next tile's
// global loads are issued before this tile's math and stored to the other stage after it, so
// the loads are in flight while the FMAs run, and one barrier per K slab remains. On the big
// tile of step 4 (SimtBest: 128 x 256 x 16, 8 x 16 per thread), at every shape.
// simt_bt shares the kernel (kBT = true): B given as Bᵀ (N x K) takes A's path, loaded along
// K, stored transposed and swizzled, read through the swizzle.
//
//   ./build/04_coalesced/coalesced --kernel simt,simt_bt --size 4096 --bench
//   tools/steps.py diff simt                  # what this step adds
//
// Included once, by 04_coalesced/kernels.cu (steps/6_simt_auto.cuh and the experiments
// launch this kernel with other tiles). Chapter 06 copies it for split-K.
#pragma once

#include "shared/simt/simt.cuh"
#include "shared/simt/simt_load.cuh"

template <typename Cfg, bool kBT>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    simt_kernel(int M, int N, int K, const float* __restrict__ A,
                const float* __restrict__ B, float* __restrict__ C) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int kThreads = Cfg::kThreads;
  static_assert(Cfg::kVecLoads && Cfg::kSwizzle && Cfg::kDoubleBuffer && Cfg::kKSplit == 1,
                "this step: 128-bit global loads, the swizzle, two stages, one warp group");
  // float4 pieces of each tile, and per thread.
  constexpr int kAPieces = BM * BK / 4, kBPieces = BN * BK / 4;
  static_assert(kAPieces % kThreads == 0 && kBPieces % kThreads == 0,
                "the threads load whole tiles in equal shares");
  constexpr int kALoads = kAPieces / kThreads, kBLoads = kBPieces / kThreads;

  // Two stages of (BK, BM) tiles of A and (BK, BN) tiles of B, both indexed [k][m or n].
  extern __shared__ __align__(16) float smem[];
  float* As = smem;                // [2][BK][BM]: A transposed on its way in, swizzled
  float* Bs = smem + 2 * BK * BM;  // [2][BK][BN]: B as it is; Bᵀ (kBT) like A

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  // Block -> warp -> thread: this warp's (WM, WN) tile at (wm, wn), and this thread's place
  // (lr, lc) in its grid of lanes (SimtThread, simt.cuh). Without warp tiling (WM = BM, WN = BN)
  // the block's threads form one grid, as in tiled_2d, and wm = wn = 0.
  const SimtThread<Cfg> th(tid);
  const int wm = th.wm, wn = th.wn, lr = th.lr, lc = th.lc;

  // 16-byte loads need every row to start 16-byte aligned: row lengths a multiple of 4.
  const bool a_vec = K % 4 == 0 && aligned16(A);
  const bool b_vec = (kBT ? K % 4 == 0 : N % 4 == 0) && aligned16(B);

  float4 a_next[kALoads], b_next[kBLoads];  // the next tile, in registers on its way to smem
  auto load_tile = [&](int k0) {
#pragma unroll
    for (int p = 0; p < kALoads; ++p) {
      const int f = tid + p * kThreads;
      a_next[p] = load_kmajor_piece<BK>(A, M, K, m0, k0, f, a_vec);
    }
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      const int f = tid + p * kThreads;
      b_next[p] = kBT ? load_kmajor_piece<BK>(B, N, K, n0, k0, f, b_vec)
                      : load_nmajor_piece<BN>(B, K, N, k0, n0, f, b_vec);
    }
  };
  auto store_tile = [&](int stage) {
#pragma unroll
    for (int p = 0; p < kALoads; ++p) {
      const int f = tid + p * kThreads;
      store_kmajor_piece<BK, BM, /*kSwizzle=*/true>(As + stage * BK * BM, f, a_next[p]);
    }
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      const int f = tid + p * kThreads;
      if constexpr (kBT)
        store_kmajor_piece<BK, BN, /*kSwizzle=*/true>(Bs + stage * BK * BN, f, b_next[p]);
      else
        store_nmajor_piece<BN>(Bs + stage * BK * BN, f, b_next[p]);
    }
  };

  // Word offsets, within the tiles, of A's piece i and B's piece j at k = kk: TM / 4 float4s
  // of A along M, kPieceStrideM apart; TN / 4 of B along N, kPieceStrideN apart. The part
  // that depends on the thread's lane is computed once, into registers, one per group of 4 k.
  // A's is kk * BM + kmajor_swizzle(kk, wm + i * kPieceStrideM + lr * 4), split (simt.cuh): the
  // lane part depends on k / 4, the piece part is a compile-time constant in the unrolled loop.
  // Bᵀ's (kBT) likewise, with its lanes along N.
  int a_lane[BK / 4], b_lane[BK / 4];
#pragma unroll
  for (int q = 0; q < BK / 4; ++q) {
    a_lane[q] = swizzle_lane_part<BK, Cfg::kLaneRows>(4 * q, lr);
    b_lane[q] = kBT ? swizzle_lane_part<BK, Cfg::kLaneCols>(4 * q, lc) : lc * 4;
  }
  auto a_at = [&](int kk, int i) {
    return kk * BM + (wm + a_lane[kk / 4] + swizzle_piece_part<BK, Cfg::kLaneRows>(kk, i));
  };
  auto b_at = [&](int kk, int j) {
    return kk * BN + (wn + b_lane[kk / 4] +
                      (kBT ? swizzle_piece_part<BK, Cfg::kLaneCols>(kk, j)
                           : j * Cfg::kPieceStrideN));
  };

  float acc[TM][TN] = {};
  // The outer products of one (BK, BM) x (BK, BN) pair of tiles.
  auto compute_tile = [&](const float* as, const float* bs) {
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM / 4; ++i) {  // TM values of A for this k: TM/4 float4 loads
        const float4 v = *reinterpret_cast<const float4*>(&as[a_at(kk, i)]);
        a[4 * i + 0] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN / 4; ++j) {  // TN values of B for this k
        const float4 v = *reinterpret_cast<const float4*>(&bs[b_at(kk, j)]);
        b[4 * j + 0] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);  // outer product
    }
  };

  // Two stages: while one tile is computed, the next is on its way from global memory.
  const int tiles = ceil_div(K, BK);
  load_tile(0);
  store_tile(0);
  __syncthreads();  // stage 0 is complete before anyone computes on it

  for (int t = 0; t < tiles; ++t) {
    const int stage = t % 2;
    // Issue the next tile's global loads now; they complete while this tile is computed.
    if (t + 1 < tiles) load_tile((t + 1) * BK);

    compute_tile(As + stage * BK * BM, Bs + stage * BK * BN);

    // The other stage was last read in iteration t - 1, which every thread has finished
    // (the barrier below): it can be overwritten with the tile loaded above.
    if (t + 1 < tiles) store_tile(1 - stage);
    __syncthreads();  // the next stage is complete, and this one is free to be overwritten
  }

  // Epilogue: float4 stores where the row of C allows (N % 4 == 0), else masked scalars.
  const bool c_vec = N % 4 == 0 && aligned16(C);
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + th.row(i);
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < TN / 4; ++j) {
      const int n = n0 + th.col(4 * j);
      float* c = C + static_cast<size_t>(m) * N + n;
      if (c_vec && n + 3 < N) {
        *reinterpret_cast<float4*>(c) =
            make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (n + q < N) c[q] = acc[i][4 * j + q];
      }
    }
  }
}

template <typename Cfg, bool kBT>
static void launch_simt_cfg(int M, int N, int K, const float* A, const float* B, float* C) {
  auto kernel = simt_kernel<Cfg, kBT>;
  // Above 48 KiB of dynamic shared memory a kernel must opt in; once per kernel, so that no
  // host call sits between the timing events and the launch.
  static const bool opted_in = [&] {
    if (Cfg::kSmemBytes > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      Cfg::kSmemBytes));
    return true;
  }();
  (void)opted_in;
  dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM));
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}

// The 128 x 256 tile (SimtBest, simt.cuh) at every shape; steps/6_simt_auto.cuh picks a tile
// for the shape.
void launch_simt(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_simt_cfg<SimtBest, false>(M, N, K, A, B, C);
}
void launch_simt_bt(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_simt_cfg<SimtBest, true>(M, N, K, A, Bt, C);
}
