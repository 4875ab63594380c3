// Chapter 06, step 1: splitk_simt_atomic and splitk_simt. Split-K on chapter 04's double-
// buffered SIMT kernel (04_coalesced/steps/5_simt.cuh, run with Bᵀ): the grid gets a third
// dimension of S slices; block (x, y, z) computes tile (y, x) over the K range
// splitk_slice(K, BK, S, z) only, and writes its partial tile to slice z of a workspace
// (splitk_simt: splitk_gemm then adds the slices in a fixed order) or adds it into C with
// atomicAdd (splitk_simt_atomic). The plan (tile, S) and the reduction are splitk.cuh and
// splitk.cu; simt_bt (Role::kPrevious) is this kernel with S = 1.
//
//   ./build/06_splitk/splitk --kernel splitk_simt --m 256 --n 256 --k 65536 --bench
//   tools/steps.py diff splitk_simt_atomic    # what split-K adds to chapter 04's kernel
//
// Included once, by 06_splitk/simt_kernels.cu.
#pragma once

#include "shared/simt/simt.cuh"
#include "shared/simt/simt_load.cuh"
#include "shared/tensorcore/splitk.cuh"

// Block z of S writes its partial tile to C + z * slice_stride (the workspace), or, kAtomic,
// adds it into C (slice_stride 0).
template <typename Cfg, bool kBT, bool kAtomic>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    splitk_simt_kernel(int M, int N, int K, const float* __restrict__ A,
                       const float* __restrict__ B, float* __restrict__ C, size_t slice_stride) {
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
  // This block's slice of K: [kr.begin, kr.end), whole BK tiles but for the last slice's end
  // (zero-filled by the loads, as K's end was). An empty slice (S > K tiles) computes zeros.
  const KRange kr = splitk_slice(K, BK, gridDim.z, blockIdx.z);
  const int tiles = ceil_div(kr.end - kr.begin, BK);
  load_tile(kr.begin);
  store_tile(0);
  __syncthreads();  // stage 0 is complete before anyone computes on it

  for (int t = 0; t < tiles; ++t) {
    const int stage = t % 2;
    // Issue the next tile's global loads now; they complete while this tile is computed.
    if (t + 1 < tiles) load_tile(kr.begin + (t + 1) * BK);

    compute_tile(As + stage * BK * BM, Bs + stage * BK * BN);

    // The other stage was last read in iteration t - 1, which every thread has finished
    // (the barrier below): it can be overwritten with the tile loaded above.
    if (t + 1 < tiles) store_tile(1 - stage);
    __syncthreads();  // the next stage is complete, and this one is free to be overwritten
  }

  // Epilogue: float4 stores where the row of C allows (N % 4 == 0), else masked scalars.
  // The partial tile goes to this slice's M x N layer; atomic adds are scalar (REDG.ADD.F32).
  C += blockIdx.z * slice_stride;
  const bool c_vec = !kAtomic && N % 4 == 0 && aligned16(C);
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
          if (n + q < N) splitk_store<kAtomic>(&c[q], acc[i][4 * j + q]);
      }
    }
  }
}

// The grid over (N tiles, M tiles, S): block z computes slice z of its tile's K.
template <typename Cfg, bool kBT, bool kAtomic>
static void launch_splitk_simt_cfg(int M, int N, int K, const float* A, const float* B, float* C,
                                   int splits, size_t slice_stride) {
  auto kernel = splitk_simt_kernel<Cfg, kBT, kAtomic>;
  // Above 48 KiB of dynamic shared memory a kernel must opt in; once per kernel, so that no
  // host call sits between the timing events and the launch.
  static const bool opted_in = [&] {
    if (Cfg::kSmemBytes > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      Cfg::kSmemBytes));
    return true;
  }();
  (void)opted_in;
  dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM), splits);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes>>>(M, N, K, A, B, C, slice_stride);
  CUDA_CHECK_LAUNCH();
}

// The base-kernel side of SplitKBase (splitk.cuh): the launcher, on Bᵀ, for either store ...
template <typename Cfg>
static void launch_splitk_simt_base(int M, int N, int K, const float* A, const float* Bt,
                                    float* out, int splits, size_t slice_stride, bool atomic) {
  if (atomic)
    launch_splitk_simt_cfg<Cfg, /*kBT=*/true, true>(M, N, K, A, Bt, out, splits, slice_stride);
  else
    launch_splitk_simt_cfg<Cfg, /*kBT=*/true, false>(M, N, K, A, Bt, out, splits, slice_stride);
}

// ... and the blocks of the kernel an SM holds (the plan's capacity), asked once.
template <typename Cfg>
static int splitk_simt_blocks_per_sm() {
  static const int n = [] {
    int blocks = 0;
    // The plain-store kernel stands for both: the atomic one has the same tile and threads.
    auto kernel = splitk_simt_kernel<Cfg, true, false>;
    if (Cfg::kSmemBytes > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      Cfg::kSmemBytes));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, Cfg::kThreads,
                                                             Cfg::kSmemBytes));
    return blocks;
  }();
  return n;
}

template <typename Cfg>
constexpr SplitKBase<float> splitk_simt_base() {
  return {{Cfg::BM, Cfg::BN, Cfg::BK, 0}, launch_splitk_simt_base<Cfg>,
          splitk_simt_blocks_per_sm<Cfg>};
}
// The tiles the plan chooses from (simt.cuh): chapter 04's 128 x 256 x 16 (SimtBest), and its
// 128 x 128 x 16 for shapes that would leave half of a 128 x 256 tile empty (128 x 128 x
// 131072). Both run one block per SM (registers).
const SplitKBase<float> kSimtBases[] = {splitk_simt_base<SimtBest>(),
                                        splitk_simt_base<Simt128x128>()};
const int kSimtBaseCount = 2;

int g_simt_splits = 0;

// S = 1 on the 128 x 256 tile: chapter 04's simt_bt, the kernel split-K starts from.
void launch_simt_bt_unsplit(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_splitk_simt_base<SimtBest>(M, N, K, A, Bt, C, 1, 0, false);
}
// The plan's tile and S (splitk_gemm); C zeroed, then every slice adds its partial tile.
void launch_splitk_simt_atomic(int M, int N, int K, const float* A, const float* Bt, float* C) {
  splitk_gemm(kSimtBases, kSimtBaseCount, SplitMode::kAtomic, g_simt_splits, M, N, K, A, Bt, C);
}
// The plan's tile and S; the partial tiles into the workspace, then added in slice order.
void launch_splitk_simt(int M, int N, int K, const float* A, const float* Bt, float* C) {
  splitk_gemm(kSimtBases, kSimtBaseCount, SplitMode::kWorkspace, g_simt_splits, M, N, K, A, Bt, C);
}
