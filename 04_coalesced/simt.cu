// Chapter 04 — the SIMT ladder: from chapter 03's tiled_2d (51% of cuBLAS) to the best SIMT
// kernel of the tutorial, one idea per step. One kernel, simt_kernel<Cfg, kBT>; each step
// changes one thing in its configuration (SimtConfig, simt.cuh):
//   simt_lds128   tiled_2d's 128 x 128 x 16 block and 8 x 8 micro-tile, but the A tile is
//                 stored transposed ([k][m]) and each micro-tile is made of float4 pieces, so
//                 every shared load is a 128-bit LDS.128 (tiled_2d: 8 + 8 scalar loads per k).
//   simt_vec      + 128-bit global loads (one float4 per piece instead of four floats).
//   simt_swizzle  + the XOR swizzle: the transposing store of A becomes conflict-free.
//   simt_warps    + warp tiling: block -> warp (64 x 32) -> thread; a warp reads fewer
//                 distinct float4s per k.
//   simt_bigtile  + a 128 x 256 block tile, 8 x 16 per thread (fewer loads per FMA; 1 block/SM).
//   simt          + double buffering: the next tile's global loads overlap this tile's math.
//                 It also picks the block tile from the shape (choose_simt_tile, simt.cuh);
//                 for sizes like 1536 and 3072 that is 96 x 192, run by two groups of 6 warps
//                 that share each K slab (SimtConfig's KSplit), so all 4 schedulers are busy.
//   simt_bt       the same for Bᵀ: the B tile goes through A's transposing, swizzled path.
// C = A * B, FP32; every M, N, K >= 1 (partial tiles zero-filled on load, masked on store;
// 128-bit accesses only where the row length keeps them aligned, scalar ones elsewhere).
//
// Build and run (from the repository root):
//   meson setup build && meson compile -C build
//   ./build/04_coalesced/coalesced --kernel simt_warps --size 4096
//   ./build/04_coalesced/coalesced --kernel simt_bt --m 4000 --n 3000 --k 2000
//   ./build/04_coalesced/coalesced --kernel sweep --size 4096     # the tile sweep
//   ./build/04_coalesced/coalesced --kernel simt_bt_96x192,simt_bt_96x192_w6 --size 1536 --bench
// Explanation and measurements: 04_coalesced/README.md, "The SIMT ladder".
#include "04_coalesced/simt.cuh"

#include <cstdint>

#include "common/device.h"

namespace {

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
}

// Loads float4 piece `f` of the (BX, BK) tile of a K-major operand X (rows x of length K,
// i.e. A or Bᵀ) starting at (x0, k0): row x = f / (BK / 4), columns k4 * 4 .. k4 * 4 + 3.
// One 16-byte load where the piece is inside and aligned, else element by element, with 0
// outside the matrix.
template <int BK>
__device__ __forceinline__ float4 load_kmajor_piece(const float* __restrict__ X, int rows, int K,
                                                    int x0, int k0, int f, bool vec_ok) {
  const int x = x0 + f / (BK / 4), k = k0 + (f % (BK / 4)) * 4;
  const float* p = X + static_cast<size_t>(x) * K + k;
  if (vec_ok && x < rows && k + 3 < K) return *reinterpret_cast<const float4*>(p);
  float4 v;
  v.x = (x < rows && k + 0 < K) ? p[0] : 0.0f;
  v.y = (x < rows && k + 1 < K) ? p[1] : 0.0f;
  v.z = (x < rows && k + 2 < K) ? p[2] : 0.0f;
  v.w = (x < rows && k + 3 < K) ? p[3] : 0.0f;
  return v;
}

// Writes that piece transposed into the (BK, BX) shared tile: four 4-byte stores, one per k,
// at swizzled columns (kSwizzle) so that the warp's 32 stores of each hit 32 different banks.
template <int BK, int BX, bool kSwizzle>
__device__ __forceinline__ void store_kmajor_piece(float* tile, int f, float4 v) {
  const int x = f / (BK / 4), k = (f % (BK / 4)) * 4;
  auto col = [&](int kk) { return kSwizzle ? kmajor_swizzle<BK>(kk, x) : x; };
  tile[(k + 0) * BX + col(k + 0)] = v.x;
  tile[(k + 1) * BX + col(k + 1)] = v.y;
  tile[(k + 2) * BX + col(k + 2)] = v.z;
  tile[(k + 3) * BX + col(k + 3)] = v.w;
}

// Row-major B (K x N): piece f of the (BK, BN) tile: row k = f / (BN / 4), columns n4 * 4...
template <int BN>
__device__ __forceinline__ float4 load_nmajor_piece(const float* __restrict__ B, int K, int N,
                                                    int k0, int n0, int f, bool vec_ok) {
  const int k = k0 + f / (BN / 4), n = n0 + (f % (BN / 4)) * 4;
  const float* p = B + static_cast<size_t>(k) * N + n;
  if (vec_ok && k < K && n + 3 < N) return *reinterpret_cast<const float4*>(p);
  float4 v;
  v.x = (k < K && n + 0 < N) ? p[0] : 0.0f;
  v.y = (k < K && n + 1 < N) ? p[1] : 0.0f;
  v.z = (k < K && n + 2 < N) ? p[2] : 0.0f;
  v.w = (k < K && n + 3 < N) ? p[3] : 0.0f;
  return v;
}

// ... stored as it is: a warp writes 512 contiguous bytes of one row k (conflict-free).
template <int BN>
__device__ __forceinline__ void store_nmajor_piece(float* tile, int f, float4 v) {
  *reinterpret_cast<float4*>(&tile[f * 4]) = v;  // row f / (BN/4), column (f % (BN/4)) * 4
}

}  // namespace

template <typename Cfg, bool kBT>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    simt_kernel(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                float* __restrict__ C) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int kThreads = Cfg::kThreads;
  constexpr bool kSwz = Cfg::kSwizzle;
  // float4 pieces of each tile, and per thread (the last share may be partial: guarded).
  constexpr int kAPieces = BM * BK / 4, kBPieces = BN * BK / 4;
  constexpr int kALoads = ceil_div(kAPieces, kThreads), kBLoads = ceil_div(kBPieces, kThreads);

  // kStages stages of (BK, BM) tiles of A and (BK, BN) tiles of B, both indexed [k][m or n].
  extern __shared__ __align__(16) float smem[];
  float* As = smem;                           // [kStages][BK][BM], swizzled if kSwz
  float* Bs = smem + Cfg::kStages * BK * BM;  // [kStages][BK][BN], like As if kBT, else plain

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  // Block -> warp -> thread: this warp's (WM, WN) tile, and this thread's place (lr, lc) in it.
  const SimtThread<Cfg> th(tid);
  const int wm = th.wm, wn = th.wn, lr = th.lr, lc = th.lc;

  // 16-byte loads need every row to start 16-byte aligned: row lengths a multiple of 4.
  const bool a_vec = Cfg::kVecLoads && K % 4 == 0 && aligned16(A);
  const bool b_vec = Cfg::kVecLoads && (kBT ? K % 4 == 0 : N % 4 == 0) && aligned16(B);

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
        store_kmajor_piece<BK, BM, kSwz>(As + stage * BK * BM, f, a_next[p]);
    }
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      const int f = tid + p * kThreads;
      if (kBPieces % kThreads == 0 || f < kBPieces) {
        if constexpr (kBT)
          store_kmajor_piece<BK, BN, kSwz>(Bs + stage * BK * BN, f, b_next[p]);
        else
          store_nmajor_piece<BN>(Bs + stage * BK * BN, f, b_next[p]);
      }
    }
  };

  // Where the inner loop reads. One warp group: the lane parts of the swizzled offsets, one per
  // group of 4 k (see simt.cuh), in registers; the piece parts are compile-time constants. Two
  // groups (kKSplit): this thread's group takes k = k_first ... k_first + KG - 1 of every slab,
  // and SimtReadOffsets (simt.cuh) keeps what depends on the group in registers.
  constexpr int KG = Cfg::kGroupK;
  int a_lane[BK / 4], b_lane[BK / 4];
#pragma unroll
  for (int q = 0; q < BK / 4; ++q) {
    a_lane[q] = kSwz ? swizzle_lane_part<BK, Cfg::kLaneRows>(4 * q, lr) : lr * 4;
    b_lane[q] = kSwz && kBT ? swizzle_lane_part<BK, Cfg::kLaneCols>(4 * q, lc) : lc * 4;
  }
  const int k_first = KG * th.group;
  const SimtReadOffsets<BK, BM, KG, Cfg::kKSplit, Cfg::kLaneRows, TM / 4, Cfg::kPieceStrideM,
                        kSwz>
      a_rd(k_first, wm, lr);
  const SimtReadOffsets<BK, BN, KG, Cfg::kKSplit, Cfg::kLaneCols, TN / 4, Cfg::kPieceStrideN,
                        kSwz && kBT>
      b_rd(k_first, wn, lc);
  // Word offsets, within a stage's tile, of A's piece i and B's piece j at k_first + kk; with
  // one group, kk * BM + kmajor_swizzle(kk, wm + i * kPieceStrideM + lr * 4) and the like.
  auto a_at = [&](int kk, int i) {
    if constexpr (Cfg::kKSplit == 1)
      return kk * BM + (wm + a_lane[kk / 4] +
                        (kSwz ? swizzle_piece_part<BK, Cfg::kLaneRows>(kk, i)
                              : i * Cfg::kPieceStrideM));
    else
      return a_rd.at(kk, i);
  };
  auto b_at = [&](int kk, int j) {
    if constexpr (Cfg::kKSplit == 1)
      return kk * BN + (wn + b_lane[kk / 4] +
                        (kSwz && kBT ? swizzle_piece_part<BK, Cfg::kLaneCols>(kk, j)
                                     : j * Cfg::kPieceStrideN));
    else
      return b_rd.at(kk, j);
  };

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

  const int tiles = ceil_div(K, BK);
  if constexpr (!Cfg::kDoubleBuffer) {
    // One stage, as in tiled_2d: load, wait, compute, wait.
    for (int t = 0; t < tiles; ++t) {
      load_tile(t * BK);
      store_tile(0);
      __syncthreads();  // the tile is complete before anyone computes on it
      compute_tile(As, Bs);
      __syncthreads();  // everyone is done with the tile before the next one overwrites it
    }
  } else {
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
  }

  if constexpr (Cfg::kKSplit > 1) {
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

// --- The ladder -------------------------------------------------------------------------------
void launch_simt_lds128(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_simt_cfg<SimtStepLds128, false>(M, N, K, A, B, C);
}
void launch_simt_vec(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_simt_cfg<SimtStepVec, false>(M, N, K, A, B, C);
}
void launch_simt_swizzle(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_simt_cfg<SimtStepSwizzle, false>(M, N, K, A, B, C);
}
void launch_simt_warps(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_simt_cfg<SimtStepWarps, false>(M, N, K, A, B, C);
}
void launch_simt_bigtile(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_simt_cfg<SimtStepBigTile, false>(M, N, K, A, B, C);
}

// --- The best kernel: one launcher per block tile of kSimtTileOptions, in its order ---------
template <bool kBT>
static constexpr SimtLauncher kTileLaunchers[] = {
    launch_simt_cfg<SimtBest, kBT>,  launch_simt_cfg<Simt128x128, kBT>,
    launch_simt_cfg<Simt64x128, kBT>, launch_simt_cfg<Simt96x192, kBT>,
    launch_simt_cfg<Simt64x64, kBT>,  launch_simt_cfg<Simt32x64, kBT>,
};
template <typename Cfg>
constexpr bool is_option(int i) {
  return Cfg::BM == kSimtTileOptions[i].bm && Cfg::BN == kSimtTileOptions[i].bn;
}
static_assert(sizeof(kTileLaunchers<false>) / sizeof(SimtLauncher) == kSimtTileOptionCount &&
                  is_option<SimtBest>(0) && is_option<Simt128x128>(1) &&
                  is_option<Simt64x128>(2) && is_option<Simt96x192>(3) &&
                  is_option<Simt64x64>(4) && is_option<Simt32x64>(5),
              "one launcher per option of the heuristic, in its order");

// Blocks of each option's kernel that fit on one SM, and the SM count, read once per layout
// (outside any timed region: the first call is a verification run).
template <typename Cfg, bool kBT>
static int blocks_per_sm() {
  auto kernel = simt_kernel<Cfg, kBT>;
  if (Cfg::kSmemBytes > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    Cfg::kSmemBytes));
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, Cfg::kThreads,
                                                           Cfg::kSmemBytes));
  return n;
}

template <bool kBT>
static int choose_tile(int M, int N) {
  static const int fit[kSimtTileOptionCount] = {
      blocks_per_sm<SimtBest, kBT>(),   blocks_per_sm<Simt128x128, kBT>(),
      blocks_per_sm<Simt64x128, kBT>(), blocks_per_sm<Simt96x192, kBT>(),
      blocks_per_sm<Simt64x64, kBT>(),  blocks_per_sm<Simt32x64, kBT>(),
  };
  return choose_simt_tile(M, N, device_sm_count(), fit);
}

void launch_simt(int M, int N, int K, const float* A, const float* B, float* C) {
  kTileLaunchers<false>[choose_tile<false>(M, N)](M, N, K, A, B, C);
}
void launch_simt_bt(int M, int N, int K, const float* A, const float* Bt, float* C) {
  kTileLaunchers<true>[choose_tile<true>(M, N)](M, N, K, A, Bt, C);
}

const SimtNamedLauncher kSimtTiles[] = {
    {"simt_128x256", false, kTileLaunchers<false>[0]},
    {"simt_bt_128x256", true, kTileLaunchers<true>[0]},
    {"simt_128x128", false, kTileLaunchers<false>[1]},
    {"simt_bt_128x128", true, kTileLaunchers<true>[1]},
    {"simt_64x128", false, kTileLaunchers<false>[2]},
    {"simt_bt_64x128", true, kTileLaunchers<true>[2]},
    {"simt_96x192", false, kTileLaunchers<false>[3]},
    {"simt_bt_96x192", true, kTileLaunchers<true>[3]},
    // The 96 x 192 tile with one group of 6 warps (README: why two groups).
    {"simt_96x192_w6", false, launch_simt_cfg<Simt96x192w6, false>},
    {"simt_bt_96x192_w6", true, launch_simt_cfg<Simt96x192w6, true>},
    {"simt_64x64", false, kTileLaunchers<false>[4]},
    {"simt_bt_64x64", true, kTileLaunchers<true>[4]},
    {"simt_32x64", false, kTileLaunchers<false>[5]},
    {"simt_bt_32x64", true, kTileLaunchers<true>[5]},
};
const int kSimtTilesSize = sizeof(kSimtTiles) / sizeof(kSimtTiles[0]);

// --- The tile-shape sweep behind SimtBest (Bᵀ) --------------------------------------------------
// SimtConfig<BM, BN, BK, WM, WN, TM, TN, MinBlocks>; "r" (registers): MinBlocks = 1, up to 255
// registers a thread, one block of 256 per SM. Two configurations of the README's table,
// 128 x 128 x 16 with 2 blocks/SM and 256 x 128 x 16, spilled registers and are no longer built
// (tests/check_spills.py refuses any kernel that spills).
using Sweep128x128x8 = SimtConfig<128, 128, 8, 64, 32, 8, 8, 2>;
using Sweep128x128x8r = SimtConfig<128, 128, 8, 64, 32, 8, 8, 1>;
using Sweep128x128x32r = SimtConfig<128, 128, 32, 64, 32, 8, 8, 1>;
using Sweep128x64x16 = SimtConfig<128, 64, 16, 64, 32, 8, 8, 2>;
using Sweep64x128x16 = SimtConfig<64, 128, 16, 32, 64, 8, 8, 2>;
using Sweep128x256x8 = SimtConfig<128, 256, 8, 64, 64, 8, 16, 1>;
using Sweep128x128x16w = SimtConfig<128, 128, 16, 32, 64, 8, 8, 1>;  // 32 x 64 warp tiles

const SimtNamedLauncher kSimtSweep[] = {
    {"sweep_128x128x8", true, launch_simt_cfg<Sweep128x128x8, true>},
    {"sweep_128x128x8r", true, launch_simt_cfg<Sweep128x128x8r, true>},
    {"sweep_128x128x16r", true, launch_simt_cfg<Simt128x128, true>},
    {"sweep_128x128x32r", true, launch_simt_cfg<Sweep128x128x32r, true>},
    {"sweep_128x64x16", true, launch_simt_cfg<Sweep128x64x16, true>},
    {"sweep_64x128x16", true, launch_simt_cfg<Sweep64x128x16, true>},
    {"sweep_128x256x16", true, launch_simt_cfg<SimtBest, true>},
    {"sweep_128x256x8", true, launch_simt_cfg<Sweep128x256x8, true>},
    {"sweep_128x128x16_w32x64", true, launch_simt_cfg<Sweep128x128x16w, true>},
};
const int kSimtSweepSize = sizeof(kSimtSweep) / sizeof(kSimtSweep[0]);
