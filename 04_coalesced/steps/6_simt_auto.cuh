// Chapter 04, step 6: simt_auto and simt_bt_auto, the chapter's kernel for every size. A grid
// runs on the SMs in waves, and one block tile cannot fill them at every size: the launchers
// pick the tile per shape (choose_simt_tile over kSimtTileOptions, simt.cuh, host-tested).
// The one-group tiles run step 5's simt_kernel. The 96 x 192 tile, for sizes with a factor 3,
// has 6 warp tiles, which would leave two of the SM's 4 schedulers with one warp: it runs
// twice the warps in two groups that split each K slab between them and add their partial
// tiles at the end (simt_groups_kernel below: SimtConfig's KSplit = 2).
//
//   ./build/04_coalesced/coalesced --kernel simt_auto,simt_bt_auto --size 1536 --bench
//   tools/steps.py diff simt_auto             # what this step adds
//
// Included once, by 04_coalesced/kernels.cu.
#pragma once

#include "shared/simt/simt.cuh"
#include "shared/simt/simt_load.cuh"
#include "04_coalesced/steps/5_simt.cuh"
#include "common/device.h"

template <typename Cfg, bool kBT>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    simt_groups_kernel(int M, int N, int K, const float* __restrict__ A,
                       const float* __restrict__ B, float* __restrict__ C) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int kThreads = Cfg::kThreads;
  static_assert(Cfg::kVecLoads && Cfg::kSwizzle && Cfg::kDoubleBuffer && Cfg::kKSplit == 2,
                "this step: 128-bit global loads, the swizzle, two stages, two warp groups");
  // float4 pieces of each tile, and per thread (the last share may be partial: guarded; in
  // Simt96x192 the 384 threads load A's 192 pieces, one each for half of them).
  constexpr int kAPieces = BM * BK / 4, kBPieces = BN * BK / 4;
  constexpr int kALoads = ceil_div(kAPieces, kThreads), kBLoads = ceil_div(kBPieces, kThreads);

  // Two stages of (BK, BM) tiles of A and (BK, BN) tiles of B, both indexed [k][m or n].
  extern __shared__ __align__(16) float smem[];
  float* As = smem;                // [2][BK][BM]: A transposed on its way in, swizzled
  float* Bs = smem + 2 * BK * BM;  // [2][BK][BN]: B as it is; Bᵀ (kBT) like A
  // (After the loop, the same memory carries group 1's partial tile to group 0.)

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
      if (kAPieces % kThreads == 0 || f < kAPieces)
        a_next[p] = load_kmajor_piece<BK>(A, M, K, m0, k0, f, a_vec);
    }
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      const int f = tid + p * kThreads;
      if (kBPieces % kThreads == 0 || f < kBPieces)
        b_next[p] = kBT ? load_kmajor_piece<BK>(B, N, K, n0, k0, f, b_vec)
                        : load_nmajor_piece<BN>(B, K, N, k0, n0, f, b_vec);
    }
  };
  auto store_tile = [&](int stage) {
#pragma unroll
    for (int p = 0; p < kALoads; ++p) {
      const int f = tid + p * kThreads;
      if (kAPieces % kThreads == 0 || f < kAPieces)
        store_kmajor_piece<BK, BM, /*kSwizzle=*/true>(As + stage * BK * BM, f, a_next[p]);
    }
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      const int f = tid + p * kThreads;
      if (kBPieces % kThreads == 0 || f < kBPieces) {
        if constexpr (kBT)
          store_kmajor_piece<BK, BN, /*kSwizzle=*/true>(Bs + stage * BK * BN, f, b_next[p]);
        else
          store_nmajor_piece<BN>(Bs + stage * BK * BN, f, b_next[p]);
      }
    }
  };

  // Where the inner loop reads. This thread's group takes k = k_first ... k_first + KG - 1 of
  // every slab, which makes the swizzle's XOR mask a run-time value: SimtReadOffsets (simt.cuh)
  // keeps what depends on the group in registers, the rest stays a compile-time constant.
  constexpr int KG = Cfg::kGroupK;
  const int k_first = KG * th.group;
  const SimtReadOffsets<BK, BM, KG, Cfg::kKSplit, Cfg::kLaneRows, TM / 4, Cfg::kPieceStrideM,
                        true>
      a_rd(k_first, wm, lr);
  const SimtReadOffsets<BK, BN, KG, Cfg::kKSplit, Cfg::kLaneCols, TN / 4, Cfg::kPieceStrideN,
                        kBT>
      b_rd(k_first, wn, lc);
  // Word offsets, within a stage's tile, of A's piece i and B's piece j at k_first + kk.
  auto a_at = [&](int kk, int i) { return a_rd.at(kk, i); };
  auto b_at = [&](int kk, int j) { return b_rd.at(kk, j); };

  float acc[TM][TN] = {};
  // The outer products of this group's k of one (BK, BM) x (BK, BN) pair of tiles.
  auto compute_tile = [&](const float* as, const float* bs) {
#pragma unroll
    for (int kk = 0; kk < KG; ++kk) {
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

  // The groups' partial tiles add up: group 1 leaves its values in shared memory (free now:
  // the loop ended on a barrier), value (i, j) of group thread t at (i * TN + j) * G + t, so
  // that consecutive threads write consecutive words; group 0 adds them and stores C.
  constexpr int G = Cfg::kGroupThreads;
  const int t = tid % G;
  if (th.group == 1) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) smem[(i * TN + j) * G + t] = acc[i][j];
  }
  __syncthreads();  // group 1's partial tile is in shared memory
  if (th.group == 1) return;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] += smem[(i * TN + j) * G + t];

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
static void launch_simt_groups_cfg(int M, int N, int K, const float* A, const float* B, float* C) {
  auto kernel = simt_groups_kernel<Cfg, kBT>;
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

// --- One launcher per block tile of kSimtTileOptions, in its order ----------------------------
template <bool kBT>
static constexpr SimtLauncher kSimtAutoLaunchers[] = {
    launch_simt_cfg<SimtBest, kBT>,   launch_simt_cfg<Simt128x128, kBT>,
    launch_simt_cfg<Simt64x128, kBT>, launch_simt_groups_cfg<Simt96x192, kBT>,
    launch_simt_cfg<Simt64x64, kBT>,  launch_simt_cfg<Simt32x64, kBT>,
};
template <typename Cfg>
constexpr bool is_simt_option(int i) {
  return Cfg::BM == kSimtTileOptions[i].bm && Cfg::BN == kSimtTileOptions[i].bn;
}
static_assert(sizeof(kSimtAutoLaunchers<false>) / sizeof(SimtLauncher) == kSimtTileOptionCount &&
                  is_simt_option<SimtBest>(0) && is_simt_option<Simt128x128>(1) &&
                  is_simt_option<Simt64x128>(2) && is_simt_option<Simt96x192>(3) &&
                  is_simt_option<Simt64x64>(4) && is_simt_option<Simt32x64>(5),
              "one launcher per option of the heuristic, in its order");

// Blocks of an option's kernel that fit on one SM (registers and shared memory decide).
template <typename Cfg, typename Kernel>
static int simt_auto_blocks_per_sm(Kernel kernel) {
  if (Cfg::kSmemBytes > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    Cfg::kSmemBytes));
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, Cfg::kThreads,
                                                           Cfg::kSmemBytes));
  return n;
}

// The option for an M x N output. The blocks per SM and the SM count are read once per layout
// (outside any timed region: the first call is a verification run).
template <bool kBT>
static int simt_auto_tile(int M, int N) {
  static const int fit[kSimtTileOptionCount] = {
      simt_auto_blocks_per_sm<SimtBest>(simt_kernel<SimtBest, kBT>),
      simt_auto_blocks_per_sm<Simt128x128>(simt_kernel<Simt128x128, kBT>),
      simt_auto_blocks_per_sm<Simt64x128>(simt_kernel<Simt64x128, kBT>),
      simt_auto_blocks_per_sm<Simt96x192>(simt_groups_kernel<Simt96x192, kBT>),
      simt_auto_blocks_per_sm<Simt64x64>(simt_kernel<Simt64x64, kBT>),
      simt_auto_blocks_per_sm<Simt32x64>(simt_kernel<Simt32x64, kBT>),
  };
  return choose_simt_tile(M, N, device_sm_count(), fit);
}

void launch_simt_auto(int M, int N, int K, const float* A, const float* B, float* C) {
  kSimtAutoLaunchers<false>[simt_auto_tile<false>(M, N)](M, N, K, A, B, C);
}
void launch_simt_bt_auto(int M, int N, int K, const float* A, const float* Bt, float* C) {
  kSimtAutoLaunchers<true>[simt_auto_tile<true>(M, N)](M, N, K, A, Bt, C);
}
