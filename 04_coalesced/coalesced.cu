// Chapter 04 — B stored transposed: coalesced loads, the bank-conflict trap, the fix, and the
// best SIMT kernel.
//
// New since chapter 03: B is given as Bᵀ (N x K, row-major, "K-major", the layout of a
// Linear layer's weight), so both operands are read along rows of K.
//   tiled_bt_trap      03's tiled_smem reading Bᵀ: loads coalesced, the tile kept as loaded
//                      and read down its columns in the inner loop: 32-way bank conflicts.
//   tiled_bt_padded    the same with the tile padded to 33 words a row: conflict-free.
//   tiled_bt_swizzled  the same with an XOR swizzle instead of padding: conflict-free.
// The SIMT ladder from chapter 03's tiled_2d to the best kernel (simt, simt_bt): simt.cu.
// C = A * B, FP32; every M, N, K >= 1 (partial tiles zero-filled on load, masked on store).
//
// Build and run (from the repository root):
//   meson setup build && meson compile -C build
//   ./build/04_coalesced/coalesced                    # check, then bench at the default sizes
//   ./build/04_coalesced/coalesced --kernel simt_bt --m 4000 --n 3000 --k 2000
//   meson test -C build --suite 04_coalesced
// Explanation and measurements: 04_coalesced/README.md
#include "04_coalesced/coalesced.cuh"

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
// sm_86 and sm_89 hold 1536 threads per SM, so one block of 1024 at most there, for every
// layout alike (and asking ptxas for two is an error under -Werror).
constexpr int kBtThreads = kBtTile * kBtTile;
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
constexpr int kBtMinBlocks = 1;
#else
constexpr int kBtMinBlocks = 2;
#endif
template <BtLayout L>
__global__ void __launch_bounds__(kBtThreads, kBtMinBlocks)
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
