// Chapter 04, experiment: the occupancy confound. The first version of step 1 had no
// __launch_bounds__ and unrolled the k loop fully, so ptxas picked each layout's register count
// (40, 32 and 64 on sm_90) and the blocks per SM followed from it (1, 2 and 1): the trap looked
// slower than its layout alone makes it, and the swizzle slower than the padding for a reason
// that is not the layout. README, "The occupancy confound"; the measured table is in NOTES.md.
// tiled_bt_free_kernel is steps/1_tiled_bt.cuh's kernel without its two occupancy changes.
//
//   ./build/04_coalesced/coalesced --kernel tiled_bt_trap_free,tiled_bt_trap --size 4096 --bench
//
// Included once, by 04_coalesced/kernels.cu, after the steps.
#pragma once

#include "04_coalesced/coalesced.cuh"

template <BtLayout L>
__global__ void tiled_bt_free_kernel(int M, int N, int K, const float* __restrict__ A,
                                     const float* __restrict__ Bt, float* __restrict__ C) {
  constexpr int T = kBtTile;
  using Tile = BtTile<L>;
  __shared__ float As[T][T];           // (T, T) tile of A: rows of C's tile, a K-slab
  __shared__ float Bts[Tile::kWords];  // (T, T) tile of Bᵀ as loaded: element (n, k)

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T + ty;
  const int col = blockIdx.x * T + tx;
  const int n_load = blockIdx.x * T + ty;  // thread (tx, ty) loads Bᵀ[n0 + ty][k0 + tx]
  float acc = 0.0f;

  for (int k0 = 0; k0 < K; k0 += T) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bts[Tile::offset(ty, tx)] = (n_load < N && k0 + tx < K) ? Bt[n_load * K + k0 + tx] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them

    // Fully unrolled: the swizzled layout's 32 offsets (k ^ tx) stay in registers (64 a thread).
#pragma unroll 32
    for (int k = 0; k < T; ++k) acc += As[ty][k] * Bts[Tile::offset(tx, k)];
    __syncthreads();  // everyone is done reading before the next iteration overwrites the tiles
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

template <BtLayout L>
static void launch_tiled_bt_free(int M, int N, int K, const float* A, const float* Bt, float* C) {
  dim3 block(kBtTile, kBtTile);
  dim3 grid(ceil_div(N, kBtTile), ceil_div(M, kBtTile));
  tiled_bt_free_kernel<L><<<grid, block>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}

void launch_tiled_bt_trap_free(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_tiled_bt_free<BtLayout::kPlain>(M, N, K, A, Bt, C);
}
void launch_tiled_bt_padded_free(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_tiled_bt_free<BtLayout::kPadded>(M, N, K, A, Bt, C);
}
void launch_tiled_bt_swizzled_free(int M, int N, int K, const float* A, const float* Bt,
                                   float* C) {
  launch_tiled_bt_free<BtLayout::kSwizzled>(M, N, K, A, Bt, C);
}
