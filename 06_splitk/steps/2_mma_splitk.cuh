// Chapter 06, step 2: splitk_mma_atomic and splitk_mma. The same split as step 1, on chapter
// 05's mma.sync kernel (05_tensorcore/steps/4_mma_ldmatrix.cuh, swizzled tile): block (x, y, z)
// of the grid over (N tiles, M tiles, S) computes tile (y, x) over the K range
// splitk_slice(K, BK, S, z) and writes its partial tile to slice z of the workspace (splitk_mma)
// or adds it into C with atomicAdd (splitk_mma_atomic). The plan and the reduction are
// splitk.cuh and splitk.cu, shared with the FP32 kernel; mma (Role::kPrevious) is this kernel
// with S = 1 on MmaBest, chapter 05's mma_tuned.
//
//   ./build/06_splitk/splitk_bf16 --kernel splitk_mma --m 256 --n 256 --k 65536 --bench
//   tools/steps.py diff splitk_mma_atomic     # what split-K adds to chapter 05's kernel
//
// Included once, by 06_splitk/mma_kernels.cu.
#pragma once

#include "shared/tensorcore/mma_ptx.cuh"
#include "shared/tensorcore/tensorcore.cuh"
#include "shared/tensorcore/tile_loader.cuh"
#include "shared/tensorcore/splitk.cuh"

// Block z of S writes its partial tile to C + z * slice_stride (the workspace), or, kAtomic,
// adds it into C (slice_stride 0).
template <typename Cfg, TileLayout L, bool kAtomic>
__global__ void __launch_bounds__(Cfg::kThreads, mma_min_blocks<Cfg>())
    splitk_mma_kernel(int M, int N, int K, const bf16* __restrict__ A,
                      const bf16* __restrict__ Bt, float* __restrict__ C, size_t slice_stride) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  using ATile = SmemTile<BM, BK, L>;
  using BTile = SmemTile<BN, BK, L>;
  // Dynamic shared memory: its size depends on Cfg (MmaBest's 96 KiB is more than the 48 KiB a
  // static array may have).
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* As = reinterpret_cast<bf16*>(smem);  // 2 stages of (BM, BK)
  bf16* Bs = As + 2 * ATile::kElems;         // 2 stages of (BN, BK)

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
  const bool a_vec = K % 8 == 0 && aligned(A, 16), b_vec = K % 8 == 0 && aligned(Bt, 16);

  // Per-lane shared offsets (elements) of the ldmatrix rows of this warp's first fragments,
  // one per k16 step. Fragment i of A is 16 i rows further, which is 16 i * BK elements
  // further in both layouts (MmaConfig's static_assert; tested), so it is an immediate offset.
  constexpr int KS = BK / 16;
  int a_off[KS], b_off[KS];
#pragma unroll
  for (int s = 0; s < KS; ++s) {
    a_off[s] = ATile::offset(wm + Ldmatrix::a_row(lane), 16 * s + Ldmatrix::a_col(lane));
    b_off[s] = BTile::offset(wn + Ldmatrix::b_row(lane), 16 * s + Ldmatrix::b_col(lane));
  }

  float acc[MI][NI][4] = {};  // C fragments: MI x NI tiles of (16, 8), 4 FP32 a lane each

  // Chapter 04's double buffering: the next tile's loads are in flight while this one is
  // computed, then stored into the other stage.
  // This block's slice of K: [kr.begin, kr.end), whole BK tiles but for the last slice's end
  // (zero-filled by the loads, as K's end was). An empty slice (S > K tiles) computes zeros.
  TileLoader<BM, BK, L, Cfg::kThreads> a_ld;
  TileLoader<BN, BK, L, Cfg::kThreads> b_ld;
  const KRange kr = splitk_slice(K, BK, gridDim.z, blockIdx.z);
  const int tiles = ceil_div(kr.end - kr.begin, BK);
  a_ld.load(A, M, K, m0, kr.begin, K, a_vec);
  b_ld.load(Bt, N, K, n0, kr.begin, K, b_vec);
  a_ld.store(As);
  b_ld.store(Bs);
  __syncthreads();  // stage 0 is complete before any warp reads it

  for (int t = 0; t < tiles; ++t) {
    const int stage = t % 2;
    if (t + 1 < tiles) {
      a_ld.load(A, M, K, m0, kr.begin + (t + 1) * BK, K, a_vec);
      b_ld.load(Bt, N, K, n0, kr.begin + (t + 1) * BK, K, b_vec);
    }
    const bf16* as = As + stage * ATile::kElems;
    const bf16* bs = Bs + stage * BTile::kElems;
#pragma unroll
    for (int s = 0; s < KS; ++s) {  // k16 steps
      uint32_t a[MI][4], b[NI][2];
      // A fragment i: one ldmatrix.x4, 16 i rows below the first.
#pragma unroll
      for (int i = 0; i < MI; ++i)
        ldmatrix_x4(a[i], smem_addr(as + a_off[s] + 16 * i * ATile::kRowElems));
      // B fragments of n-tiles j and j + 1 (16 rows of Bᵀ): one ldmatrix.x4.
#pragma unroll
      for (int j = 0; j < NI; j += 2) {
        uint32_t r[4];
        ldmatrix_x4(r, smem_addr(bs + b_off[s] + 8 * j * BTile::kRowElems));
        b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], a[i], b[j]);
    }
    // The other stage was last read in iteration t - 1, which every warp has finished.
    if (t + 1 < tiles) {
      a_ld.store(As + (1 - stage) * ATile::kElems);
      b_ld.store(Bs + (1 - stage) * BTile::kElems);
    }
    __syncthreads();  // the next stage is complete, and this one is free to be overwritten
  }

  // Epilogue, straight from the registers: c0, c1 (and c2, c3, 8 rows down) are adjacent
  // columns, one 8-byte store where the row allows it. A quad of lanes writes 32 bytes of a row.
  // The partial tile goes to this slice's M x N layer; atomic adds are scalar (REDG.ADD.F32).
  C += blockIdx.z * slice_stride;
  const bool c_vec = !kAtomic && N % 2 == 0 && aligned(C, 8);
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = m0 + wm + 16 * i + Mma16816::c_row(lane, 2 * h);
        const int n = n0 + wn + 8 * j + Mma16816::c_col(lane, 0);
        if (m >= M) continue;
        float* c = C + static_cast<int64_t>(m) * N + n;
        if (c_vec && n + 1 < N) {
          *reinterpret_cast<float2*>(c) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (n < N) splitk_store<kAtomic>(&c[0], acc[i][j][2 * h]);
          if (n + 1 < N) splitk_store<kAtomic>(&c[1], acc[i][j][2 * h + 1]);
        }
      }
}

// The grid over (N tiles, M tiles, S): block z computes slice z of its tile's K.
template <typename Cfg, TileLayout L, bool kAtomic>
void launch_splitk_mma_cfg(int M, int N, int K, const bf16* A, const bf16* Bt, float* C,
                           int splits, size_t slice_stride) {
  constexpr int kSmemBytes =  // 2 stages of BF16 tiles
      2 * (SmemTile<Cfg::BM, Cfg::BK, L>::kElems + SmemTile<Cfg::BN, Cfg::BK, L>::kElems) * 2;
  auto kernel = splitk_mma_kernel<Cfg, L, kAtomic>;
  // Above 48 KiB of dynamic shared memory (MmaBest: 96 KiB) a kernel must opt in; once per
  // kernel, so that no host call sits between the timing events and the launch.
  static const bool opted_in = [&] {
    if (kSmemBytes > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      kSmemBytes));
    return true;
  }();
  (void)opted_in;
  dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM), splits);
  kernel<<<grid, Cfg::kThreads, kSmemBytes>>>(M, N, K, A, Bt, C, slice_stride);
  CUDA_CHECK_LAUNCH();
}

// The base-kernel side of SplitKBase (splitk.cuh): the launcher, on the swizzled tile, for
// either store ...
template <typename Cfg>
static void launch_splitk_mma_base(int M, int N, int K, const bf16* A, const bf16* Bt,
                                   float* out, int splits, size_t slice_stride, bool atomic) {
  if (atomic)
    launch_splitk_mma_cfg<Cfg, TileLayout::kSwizzled, true>(M, N, K, A, Bt, out, splits,
                                                            slice_stride);
  else
    launch_splitk_mma_cfg<Cfg, TileLayout::kSwizzled, false>(M, N, K, A, Bt, out, splits,
                                                             slice_stride);
}

// ... and the blocks of the kernel an SM holds (the plan's capacity), asked once.
template <typename Cfg>
static int splitk_mma_blocks_per_sm() {
  static const int n = [] {
    constexpr TileLayout L = TileLayout::kSwizzled;
    constexpr int kSmemBytes =  // as in launch_splitk_mma_cfg
        2 * (SmemTile<Cfg::BM, Cfg::BK, L>::kElems + SmemTile<Cfg::BN, Cfg::BK, L>::kElems) * 2;
    // The plain-store kernel stands for both: the atomic one has the same tile and threads.
    auto kernel = splitk_mma_kernel<Cfg, L, false>;
    if (kSmemBytes > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      kSmemBytes));
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, Cfg::kThreads,
                                                             kSmemBytes));
    return blocks;
  }();
  return n;
}

template <typename Cfg>
constexpr SplitKBase<bf16> splitk_mma_base() {
  return {{Cfg::BM, Cfg::BN, Cfg::BK, 0}, launch_splitk_mma_base<Cfg>,
          splitk_mma_blocks_per_sm<Cfg>};
}
// The tiles the plan chooses from (tensorcore.cuh): chapter 05's best configuration (MmaBest,
// 128 x 256 x 64, one block per SM), and its ladder's 128 x 128 x 32 (MmaStep, two blocks per
// SM) for shapes that would leave half of a wider tile empty.
const SplitKBase<bf16> kMmaBases[] = {splitk_mma_base<MmaBest>(), splitk_mma_base<MmaStep>()};
const int kMmaBaseCount = 2;

int g_mma_splits = 0;

// S = 1 on MmaBest: chapter 05's mma_tuned, the kernel split-K starts from.
void launch_mma_unsplit(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_splitk_mma_base<MmaBest>(M, N, K, A, Bt, C, 1, 0, false);
}
// The plan's tile and S (splitk_gemm); C zeroed, then every slice adds its partial tile.
void launch_splitk_mma_atomic(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  splitk_gemm(kMmaBases, kMmaBaseCount, SplitMode::kAtomic, g_mma_splits, M, N, K, A, Bt, C);
}
// The plan's tile and S; the partial tiles into the workspace, then added in slice order.
void launch_splitk_mma(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  splitk_gemm(kMmaBases, kMmaBaseCount, SplitMode::kWorkspace, g_mma_splits, M, N, K, A, Bt, C);
}
