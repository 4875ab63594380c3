// Chapter 04, step 4: simt_swizzle, simt_warps, simt_bigtile. The XOR swizzle on the
// transposing store of A: stored plain, a warp's four 4-byte stores of its A pieces land 4
// threads to a bank (4-way conflicts); kmajor_swizzle (simt.cuh) moves each group of 4 k to
// other banks, conflict-free, while the float4 reads of one k stay whole. The inner loop reads
// through it at no cost: lane part in registers, piece part a constant (swizzle_lane_part).
// Two more steps share this kernel and change only its configuration (simt.cuh):
//   simt_warps    SimtStepWarps: warp tiling, block -> warp (64 x 32) -> thread (8 x 4 lanes)
//   simt_bigtile  SimtStepBigTile: a 128 x 256 tile, 8 x 16 per thread, 1 block per SM
//
//   ./build/04_coalesced/coalesced --kernel simt_swizzle --size 4096 --bench
//   ./build/04_coalesced/coalesced --kernel simt_warps,simt_bigtile --size 4096 --bench
//   tools/steps.py diff simt_swizzle          # what this step adds
//
// Included once, by 04_coalesced/kernels.cu.
#pragma once

#include "shared/simt/simt.cuh"
#include "shared/simt/simt_load.cuh"

template <typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    simt_swizzle_kernel(int M, int N, int K, const float* __restrict__ A,
                        const float* __restrict__ B, float* __restrict__ C) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int kThreads = Cfg::kThreads;
  static_assert(Cfg::kVecLoads && Cfg::kSwizzle && !Cfg::kDoubleBuffer && Cfg::kKSplit == 1,
                "this step: 128-bit global loads, the swizzle, one stage, one warp group");
  // float4 pieces of each tile, and per thread.
  constexpr int kAPieces = BM * BK / 4, kBPieces = BN * BK / 4;
  static_assert(kAPieces % kThreads == 0 && kBPieces % kThreads == 0,
                "the threads load whole tiles in equal shares");
  constexpr int kALoads = kAPieces / kThreads, kBLoads = kBPieces / kThreads;

  // A (BK, BM) tile of A and a (BK, BN) tile of B, both indexed [k][m or n].
  extern __shared__ __align__(16) float smem[];
  float* As = smem;            // [BK][BM]: A transposed on its way in, swizzled
  float* Bs = smem + BK * BM;  // [BK][BN]: B as it is

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  // Block -> warp -> thread: this warp's (WM, WN) tile at (wm, wn), and this thread's place
  // (lr, lc) in its grid of lanes (SimtThread, simt.cuh). Without warp tiling (WM = BM, WN = BN)
  // the block's threads form one grid, as in tiled_2d, and wm = wn = 0.
  const SimtThread<Cfg> th(tid);
  const int wm = th.wm, wn = th.wn, lr = th.lr, lc = th.lc;

  // 16-byte loads need every row to start 16-byte aligned: row lengths a multiple of 4.
  const bool a_vec = K % 4 == 0 && aligned16(A);
  const bool b_vec = N % 4 == 0 && aligned16(B);

  float4 a_next[kALoads], b_next[kBLoads];  // the tile, in registers on its way to smem
  auto load_tile = [&](int k0) {
#pragma unroll
    for (int p = 0; p < kALoads; ++p) {
      const int f = tid + p * kThreads;
      a_next[p] = load_kmajor_piece<BK>(A, M, K, m0, k0, f, a_vec);
    }
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      const int f = tid + p * kThreads;
      b_next[p] = load_nmajor_piece<BN>(B, K, N, k0, n0, f, b_vec);
    }
  };
  auto store_tile = [&]() {
#pragma unroll
    for (int p = 0; p < kALoads; ++p) {
      const int f = tid + p * kThreads;
      store_kmajor_piece<BK, BM, /*kSwizzle=*/true>(As, f, a_next[p]);  // transposed
    }
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      const int f = tid + p * kThreads;
      store_nmajor_piece<BN>(Bs, f, b_next[p]);
    }
  };

  // Word offsets, within the tiles, of A's piece i and B's piece j at k = kk: TM / 4 float4s
  // of A along M, kPieceStrideM apart; TN / 4 of B along N, kPieceStrideN apart. The part
  // that depends on the thread's lane is computed once, into registers, one per group of 4 k.
  // A's is kk * BM + kmajor_swizzle(kk, wm + i * kPieceStrideM + lr * 4), split (simt.cuh): the
  // lane part depends on k / 4, the piece part is a compile-time constant in the unrolled loop.
  int a_lane[BK / 4], b_lane[BK / 4];
#pragma unroll
  for (int q = 0; q < BK / 4; ++q) {
    a_lane[q] = swizzle_lane_part<BK, Cfg::kLaneRows>(4 * q, lr);
    b_lane[q] = lc * 4;
  }
  auto a_at = [&](int kk, int i) {
    return kk * BM + (wm + a_lane[kk / 4] + swizzle_piece_part<BK, Cfg::kLaneRows>(kk, i));
  };
  auto b_at = [&](int kk, int j) {
    return kk * BN + (wn + b_lane[kk / 4] + j * Cfg::kPieceStrideN);
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

  // One stage, as in tiled_2d: load, wait, compute, wait.
  const int tiles = ceil_div(K, BK);
  for (int t = 0; t < tiles; ++t) {
    load_tile(t * BK);
    store_tile();
    __syncthreads();  // the tile is complete before anyone computes on it
    compute_tile(As, Bs);
    __syncthreads();  // everyone is done with the tile before the next one overwrites it
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

template <typename Cfg>
static void launch_simt_swizzle_cfg(int M, int N, int K, const float* A, const float* B, float* C) {
  static_assert(Cfg::kSmemBytes <= 48 * 1024, "above 48 KiB a kernel must opt in");
  dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM));
  simt_swizzle_kernel<Cfg><<<grid, Cfg::kThreads, Cfg::kSmemBytes>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}

void launch_simt_swizzle(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_simt_swizzle_cfg<SimtStepSwizzle>(M, N, K, A, B, C);
}
// Warp tiling: the same kernel with 64 x 32 warp tiles (SimtStepWarps, simt.cuh).
void launch_simt_warps(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_simt_swizzle_cfg<SimtStepWarps>(M, N, K, A, B, C);
}
// The big tile: 128 x 256, 64 x 64 warp tiles, 8 x 16 per thread (SimtStepBigTile).
void launch_simt_bigtile(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_simt_swizzle_cfg<SimtStepBigTile>(M, N, K, A, B, C);
}
