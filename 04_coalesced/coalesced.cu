// Chapter 04 — B stored transposed: coalesced loads, the bank-conflict trap, the fix, and the
// best SIMT kernel.
//
// New since chapter 03: B is given as Bᵀ (N x K, row-major, "K-major", the layout of a
// Linear layer's weight), so both operands are read along rows of K.
//   tiled_bt_trap      03's tiled_smem reading Bᵀ: loads coalesced, the tile kept as loaded
//                      and read down its columns in the inner loop: 32-way bank conflicts.
//   tiled_bt_padded    the same with the tile padded to 33 words a row: conflict-free.
//   tiled_bt_swizzled  the same with an XOR swizzle instead of padding: conflict-free.
//   simt, simt_bt      the best SIMT kernel, for B and for Bᵀ: 128-bit global loads, K-major
//                      tiles transposed on their way into shared memory (swizzled, so the
//                      store is conflict-free), 128-bit shared loads, block -> warp -> thread
//                      tiling, and double buffering (the next tile's loads are in flight
//                      while this one is computed).
// C = A * B, FP32; every M, N, K >= 1 (partial tiles zero-filled on load, masked on store;
// 128-bit accesses only where the row length keeps them aligned, scalar ones elsewhere).
//
// Build and run (from the repository root):
//   meson setup build && meson compile -C build
//   ./build/04_coalesced/coalesced                    # check, then bench at the default sizes
//   ./build/04_coalesced/coalesced --kernel simt_bt --m 4000 --n 3000 --k 2000
//   meson test -C build --suite 04_coalesced
// Explanation and measurements: 04_coalesced/README.md
#include "04_coalesced/coalesced.cuh"

#include <cstdint>

// ---------------------------------------------------------------------------------------------
// The trap and its fixes.
// ---------------------------------------------------------------------------------------------

// The body of the kernels below: 03_tiled's tiled_smem_kernel, except for the lines marked
// "changed". Unroll: how many steps of the k loop are unrolled (see there).
template <BtLayout L, int Unroll>
__device__ __forceinline__ void tiled_bt_body(int M, int N, int K, const float* __restrict__ A,
                                              const float* __restrict__ Bt,
                                              float* __restrict__ C) {
  constexpr int T = kBtTile;
  using Tile = BtTile<L>;
  __shared__ float As[T][T];           // (T, T) tile of A
  __shared__ float Bts[Tile::kWords];  // (T, T) tile of Bᵀ as loaded: element (n, k)

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T + ty;
  const int col = blockIdx.x * T + tx;
  const int n_load = blockIdx.x * T + ty;  // changed: thread (tx, ty) loads Bᵀ[n0 + ty][k0 + tx]
  float acc = 0.0f;

  for (int k0 = 0; k0 < K; k0 += T) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    // changed: a warp reads 32 consecutive floats of one row of Bᵀ (coalesced, like A).
    Bts[Tile::offset(ty, tx)] = (n_load < N && k0 + tx < K) ? Bt[n_load * K + k0 + tx] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them

    // changed: Unroll = 16 steps at a time in tiled_bt_kernel, not all 32. Fully unrolled,
    // ptxas keeps the swizzled layout's 32 offsets (k ^ tx) in registers across the k0 loop
    // and, held to 32 registers, spills them; 16 at a time no layout spills.
#pragma unroll Unroll
    for (int k = 0; k < T; ++k)
      // changed: B(k0 + k, col) = Bᵀ(col, k0 + k) is tile element (tx, k): the 32 lanes read
      // down a column of the tile. Plain layout: words 32 apart, one bank, 32 wavefronts.
      acc += As[ty][k] * Bts[Tile::offset(tx, k)];
    __syncthreads();  // everyone is done reading before the next iteration overwrites the tiles
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

// The trap and its fixes at equal occupancy: blocks of 1024 threads, 2 of them per SM
// (__launch_bounds__), so ptxas holds every layout to 32 registers a thread and each runs 64
// warps per SM, the most an SM holds. The layout is then the only difference.
constexpr int kBtThreads = kBtTile * kBtTile;
template <BtLayout L>
__global__ void __launch_bounds__(kBtThreads, 2)
    tiled_bt_kernel(int M, int N, int K, const float* __restrict__ A,
                    const float* __restrict__ Bt, float* __restrict__ C) {
  tiled_bt_body<L, 16>(M, N, K, A, Bt, C);
}

// The first version of this chapter, kept for the README's side note on the confound: no
// __launch_bounds__ and the k loop fully unrolled, so ptxas picks each layout's register count
// (40, 32 and 64 on sm_90) and the blocks per SM follow from it (1, 2 and 1).
template <BtLayout L>
__global__ void tiled_bt_free_kernel(int M, int N, int K, const float* __restrict__ A,
                                     const float* __restrict__ Bt, float* __restrict__ C) {
  tiled_bt_body<L, kBtTile>(M, N, K, A, Bt, C);
}

template <BtLayout L, bool kEqualOccupancy = true>
static void launch_tiled_bt(int M, int N, int K, const float* A, const float* Bt, float* C) {
  dim3 block(kBtTile, kBtTile);
  dim3 grid(ceil_div(N, kBtTile), ceil_div(M, kBtTile));
  if (kEqualOccupancy)
    tiled_bt_kernel<L><<<grid, block>>>(M, N, K, A, Bt, C);
  else
    tiled_bt_free_kernel<L><<<grid, block>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}

void launch_tiled_bt_trap(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_tiled_bt<BtLayout::kPlain>(M, N, K, A, Bt, C);
}
void launch_tiled_bt_padded(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_tiled_bt<BtLayout::kPadded>(M, N, K, A, Bt, C);
}
void launch_tiled_bt_swizzled(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_tiled_bt<BtLayout::kSwizzled>(M, N, K, A, Bt, C);
}

// The side note: registers left to ptxas, occupancy as it falls.
void launch_tiled_bt_trap_free(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_tiled_bt<BtLayout::kPlain, false>(M, N, K, A, Bt, C);
}
void launch_tiled_bt_padded_free(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_tiled_bt<BtLayout::kPadded, false>(M, N, K, A, Bt, C);
}
void launch_tiled_bt_swizzled_free(int M, int N, int K, const float* A, const float* Bt,
                                   float* C) {
  launch_tiled_bt<BtLayout::kSwizzled, false>(M, N, K, A, Bt, C);
}

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

template <typename Cfg, bool kBT>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    simt_kernel(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                float* __restrict__ C) {
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
  const int tiles = ceil_div(K, BK);
  load_tile(0);
  store_tile(0);
  __syncthreads();  // stage 0 is complete before anyone computes on it

  for (int t = 0; t < tiles; ++t) {
    const int stage = t % 2;
    // Issue the next tile's global loads now; they complete while this tile is computed.
    if (t + 1 < tiles) load_tile((t + 1) * BK);

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
  const bool c_vec = N % 4 == 0 && aligned16(C);
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

// The sweep's configurations: SimtConfig<BM, BN, BK, WM, WN, TM, TN, MinBlocks>.
using Simt128x128x8 = SimtConfig<128, 128, 8, 64, 32, 8, 8, 2>;
using Simt128x128x8r = SimtConfig<128, 128, 8, 64, 32, 8, 8, 1>;
using Simt128x128x16 = SimtConfig<128, 128, 16, 64, 32, 8, 8, 2>;
using Simt128x128x16r = SimtConfig<128, 128, 16, 64, 32, 8, 8, 1>;
using Simt128x128x32r = SimtConfig<128, 128, 32, 64, 32, 8, 8, 1>;
using Simt128x64x16 = SimtConfig<128, 64, 16, 64, 32, 8, 8, 2>;
using Simt64x128x16 = SimtConfig<64, 128, 16, 32, 64, 8, 8, 2>;
using Simt256x128x16 = SimtConfig<256, 128, 16, 64, 32, 8, 8, 1>;
using Simt128x256x16 = SimtConfig<128, 256, 16, 64, 64, 8, 16, 1>;
using Simt128x256x8 = SimtConfig<128, 256, 8, 64, 64, 8, 16, 1>;
using Simt128x128x16w = SimtConfig<128, 128, 16, 32, 64, 8, 8, 1>;  // 32 x 64 warp tiles

// The winner of the sweep (04_coalesced/README.md).
using SimtBest = Simt128x256x16;

void launch_simt(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_simt_cfg<SimtBest, false>(M, N, K, A, B, C);
}
void launch_simt_bt(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_simt_cfg<SimtBest, true>(M, N, K, A, Bt, C);
}

// "r" (registers): MinBlocks = 1, up to 255 registers a thread, one block of 256 per SM.
const SweepEntry kSimtSweep[] = {
    {"sweep_128x128x8", launch_simt_cfg<Simt128x128x8, true>},
    {"sweep_128x128x8r", launch_simt_cfg<Simt128x128x8r, true>},
    {"sweep_128x128x16", launch_simt_cfg<Simt128x128x16, true>},
    {"sweep_128x128x16r", launch_simt_cfg<Simt128x128x16r, true>},
    {"sweep_128x128x32r", launch_simt_cfg<Simt128x128x32r, true>},
    {"sweep_128x64x16", launch_simt_cfg<Simt128x64x16, true>},
    {"sweep_64x128x16", launch_simt_cfg<Simt64x128x16, true>},
    {"sweep_256x128x16", launch_simt_cfg<Simt256x128x16, true>},
    {"sweep_128x256x16", launch_simt_cfg<Simt128x256x16, true>},
    {"sweep_128x256x8", launch_simt_cfg<Simt128x256x8, true>},
    {"sweep_128x128x16_w32x64", launch_simt_cfg<Simt128x128x16w, true>},
};
const int kSimtSweepSize = sizeof(kSimtSweep) / sizeof(kSimtSweep[0]);
