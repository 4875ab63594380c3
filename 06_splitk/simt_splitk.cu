// Chapter 06 — split-K on chapter 04's best SIMT kernel (FP32).
//
// New since chapter 04: simt_kernel below is chapter 04's, copied, with one change: block z of
// a grid of S slices computes only the K range splitk_slice(K, BK, S, z) of its tile, and
// writes the partial tile to its own slice of the output (C + z * slice_stride: the workspace)
// or adds it into C (kAtomic). Everything else (tiles, swizzle, double buffering) is as in 04:
//   diff -u 04_coalesced/coalesced.cu 06_splitk/simt_splitk.cu
// The split and the reduction are not here: they are splitk.cuh / splitk.cu, for any base kernel.
//   splitk_simt         workspace variant, deterministic (partials, then a fixed-order reduction)
//   splitk_simt_atomic  atomic variant (C zeroed, every slice atomicAdds its tile)
//   simt_bt             this kernel with S = 1 on chapter 04's tile: chapter 04's simt_bt
//
// Build and run (from the repository root):
//   meson setup build && meson compile -C build
//   ./build/06_splitk/splitk                       # check, then bench at the five shapes
//   ./build/06_splitk/splitk --kernel splitk_simt --m 256 --n 256 --k 65536 --splits 32
//   meson test -C build --suite 06_splitk
// Explanation and measurements: 06_splitk/README.md
#include "06_splitk/simt_splitk.cuh"

#include <cstdint>

#include "04_coalesced/simt.cuh"
#include "06_splitk/splitk.cuh"

// ---------------------------------------------------------------------------------------------
// The best SIMT kernel.
// ---------------------------------------------------------------------------------------------
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
// at swizzled columns so that the warp's 32 stores of each hit 32 different banks.
template <int BK, int BX>
__device__ __forceinline__ void store_kmajor_piece(float* tile, int f, float4 v) {
  const int x = f / (BK / 4), k = (f % (BK / 4)) * 4;
  tile[(k + 0) * BX + kmajor_swizzle<BK>(k + 0, x)] = v.x;
  tile[(k + 1) * BX + kmajor_swizzle<BK>(k + 1, x)] = v.y;
  tile[(k + 2) * BX + kmajor_swizzle<BK>(k + 2, x)] = v.z;
  tile[(k + 3) * BX + kmajor_swizzle<BK>(k + 3, x)] = v.w;
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
// changed: blockIdx.z is the slice: its K range, and where its partial tile goes.
template <typename Cfg, bool kBT, bool kAtomic>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    simt_kernel(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                float* __restrict__ C, size_t slice_stride) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int kThreads = Cfg::kThreads;
  constexpr int kALoads = BM * BK / 4 / kThreads;  // float4 pieces of A per thread per tile
  constexpr int kBLoads = BN * BK / 4 / kThreads;

  // Two stages of (BK, BM) tiles of A and (BK, BN) tiles of B, both indexed [k][m or n].
  extern __shared__ __align__(16) float smem[];
  float* As = smem;                 // [2][BK][BM], swizzled (kmajor_swizzle)
  float* Bs = smem + 2 * BK * BM;   // [2][BK][BN], swizzled if kBT, plain if B is row-major

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  // Block -> warp -> thread: this warp's (WM, WN) tile, and this lane's place in it.
  const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
  const int lr = lane % Cfg::kLaneRows, lc = lane / Cfg::kLaneRows;

  // 16-byte loads need every row to start 16-byte aligned: row lengths a multiple of 4.
  const bool a_vec = K % 4 == 0 && aligned16(A);
  const bool b_vec = (kBT ? K % 4 == 0 : N % 4 == 0) && aligned16(B);

  float4 a_next[kALoads], b_next[kBLoads];  // the next tile, in registers on its way to smem
  auto load_tile = [&](int k0) {
#pragma unroll
    for (int p = 0; p < kALoads; ++p)
      a_next[p] = load_kmajor_piece<BK>(A, M, K, m0, k0, tid + p * kThreads, a_vec);
#pragma unroll
    for (int p = 0; p < kBLoads; ++p)
      b_next[p] = kBT ? load_kmajor_piece<BK>(B, N, K, n0, k0, tid + p * kThreads, b_vec)
                      : load_nmajor_piece<BN>(B, K, N, k0, n0, tid + p * kThreads, b_vec);
  };
  auto store_tile = [&](int stage) {
#pragma unroll
    for (int p = 0; p < kALoads; ++p)
      store_kmajor_piece<BK, BM>(As + stage * BK * BM, tid + p * kThreads, a_next[p]);
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      if constexpr (kBT)
        store_kmajor_piece<BK, BN>(Bs + stage * BK * BN, tid + p * kThreads, b_next[p]);
      else
        store_nmajor_piece<BN>(Bs + stage * BK * BN, tid + p * kThreads, b_next[p]);
    }
  };

  // The lane parts of the swizzled read offsets, one per group of 4 k (see coalesced.cuh).
  int a_lane[BK / 4], b_lane[BK / 4];
#pragma unroll
  for (int q = 0; q < BK / 4; ++q) {
    a_lane[q] = swizzle_lane_part<BK, Cfg::kLaneRows>(4 * q, lr);
    b_lane[q] = swizzle_lane_part<BK, Cfg::kLaneCols>(4 * q, lc);
  }

  float acc[TM][TN] = {};
  // changed: this slice's K range, [kr.begin, kr.end), whole BK tiles but for the last slice.
  // Tiles past K are zero-filled by the loads as before; an empty slice computes zeros.
  const KRange kr = splitk_slice(K, BK, gridDim.z, blockIdx.z);
  const int tiles = ceil_div(kr.end - kr.begin, BK);
  load_tile(kr.begin);
  store_tile(0);
  __syncthreads();  // stage 0 is complete before anyone computes on it

  for (int t = 0; t < tiles; ++t) {
    const int stage = t % 2;
    // Issue the next tile's global loads now; they complete while this tile is computed.
    if (t + 1 < tiles) load_tile(kr.begin + (t + 1) * BK);  // changed: from the slice's start

    const float* as = As + stage * BK * BM;
    const float* bs = Bs + stage * BK * BN;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM / 4; ++i) {  // TM values of A for this k: TM/4 float4 loads
        // = kmajor_swizzle(k, wm + i * kPieceStrideM + lr * 4), without address arithmetic
        const int m = wm + swizzle_piece_part<BK, Cfg::kLaneRows>(k, i) + a_lane[k / 4];
        const float4 v = *reinterpret_cast<const float4*>(&as[k * BM + m]);
        a[4 * i + 0] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN / 4; ++j) {  // TN values of B for this k
        const int col = kBT ? wn + swizzle_piece_part<BK, Cfg::kLaneCols>(k, j) + b_lane[k / 4]
                            : wn + j * Cfg::kPieceStrideN + lc * 4;
        const float4 v = *reinterpret_cast<const float4*>(&bs[k * BN + col]);
        b[4 * j + 0] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);  // outer product
    }

    // The other stage was last read in iteration t - 1, which every thread has finished
    // (the barrier below): it can be overwritten with the tile loaded above.
    if (t + 1 < tiles) store_tile(1 - stage);
    __syncthreads();  // the next stage is complete, and this one is free to be overwritten
  }

  // Epilogue: float4 stores where the row of C allows (N % 4 == 0), else masked scalars.
  // changed: slice z writes its partial tile to C + z * slice_stride (its own M x N slice of
  // the workspace), or, kAtomic, adds it into C element by element.
  C += blockIdx.z * slice_stride;
  const bool c_vec = !kAtomic && N % 4 == 0 && aligned16(C);
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + wm + (i / 4) * Cfg::kPieceStrideM + lr * 4 + i % 4;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < TN / 4; ++j) {
      const int n = n0 + wn + j * Cfg::kPieceStrideN + lc * 4;
      float* c = C + static_cast<size_t>(m) * N + n;
      if (c_vec && n + 3 < N) {
        *reinterpret_cast<float4*>(c) =
            make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (n + q < N) splitk_store<kAtomic>(&c[q], acc[i][4 * j + q]);  // changed
      }
    }
  }
}

// The base-kernel side of SplitKBase (splitk.cuh): grid (N tiles, M tiles, splits).
template <typename Cfg, bool kAtomic>
static void launch_simt_slices(int M, int N, int K, const float* A, const float* Bt, float* out,
                               int splits, size_t slice_stride) {
  auto kernel = simt_kernel<Cfg, /*kBT=*/true, kAtomic>;
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
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes>>>(M, N, K, A, Bt, out, slice_stride);
  CUDA_CHECK_LAUNCH();
}

template <typename Cfg>
static void launch_simt_base(int M, int N, int K, const float* A, const float* Bt, float* out,
                             int splits, size_t slice_stride, bool atomic) {
  if (atomic)
    launch_simt_slices<Cfg, true>(M, N, K, A, Bt, out, splits, slice_stride);
  else
    launch_simt_slices<Cfg, false>(M, N, K, A, Bt, out, splits, slice_stride);
}

template <typename Cfg>
static int simt_blocks_per_sm() {
  static const int n = [] {
    int blocks = 0;
    // The plain-store kernel stands for both: the atomic one has the same tile and threads.
    auto kernel = simt_kernel<Cfg, true, false>;
    if (Cfg::kSmemBytes > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      Cfg::kSmemBytes));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, Cfg::kThreads,
                                                             Cfg::kSmemBytes));
    return blocks;
  }();
  return n;
}

// The two tiles the heuristic chooses from, SimtConfig<BM, BN, BK, WM, WN, TM, TN, MinBlocks>:
// chapter 04's winner, and its sweep's best 128 x 128 tile, for shapes whose N would leave half
// of a 128 x 256 tile empty (128 x 128 x 131072). Both run one block per SM (registers).
using SimtBest = SimtConfig<128, 256, 16, 64, 64, 8, 16, 1>;  // chapter 04's simt_bt
using Simt128 = SimtConfig<128, 128, 16, 64, 32, 8, 8, 1>;    // chapter 04's sweep_128x128x16r

template <typename Cfg>
constexpr SplitKBase<float> simt_base() {
  return {{Cfg::BM, Cfg::BN, Cfg::BK, 0}, launch_simt_base<Cfg>, simt_blocks_per_sm<Cfg>};
}
const SplitKBase<float> kSimtBases[] = {simt_base<SimtBest>(), simt_base<Simt128>()};
const int kSimtBaseCount = 2;

int g_simt_splits = 0;

void launch_simt_bt_unsplit(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_simt_base<SimtBest>(M, N, K, A, Bt, C, 1, 0, false);
}
void launch_splitk_simt(int M, int N, int K, const float* A, const float* Bt, float* C) {
  splitk_gemm(kSimtBases, kSimtBaseCount, SplitMode::kWorkspace, g_simt_splits, M, N, K, A, Bt, C);
}
void launch_splitk_simt_atomic(int M, int N, int K, const float* A, const float* Bt, float* C) {
  splitk_gemm(kSimtBases, kSimtBaseCount, SplitMode::kAtomic, g_simt_splits, M, N, K, A, Bt, C);
}
