// Chapter 03, step 1: tiled_smem. Chapter 01's coalesced kernel with shared-memory tiling:
// block (32, 32) computes a (32, 32) tile of C, walking K in steps of 32; each step stages a
// (32, 32) tile of A and one of B in shared memory, so an element is loaded from global memory
// once per block instead of once per thread.
//
//   ./build/03_tiled/tiled --kernel tiled_smem --size 4096 --bench
//   tools/steps.py diff tiled_smem            # against 01_naive/steps/2_coalesced.cuh
//
// Included once, by 03_tiled/kernels.cu.
#pragma once

#include "03_tiled/tiled.cuh"

__global__ void tiled_smem_kernel(int M, int N, int K, const float* __restrict__ A,
                                  const float* __restrict__ B, float* __restrict__ C) {
  constexpr int T = kSmemTile;
  __shared__ float As[T][T];  // (T, T) tile of A: rows of C's tile, a K-slab
  __shared__ float Bs[T][T];  // (T, T) tile of B: a K-slab, columns of C's tile

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T + ty;  // as in 01's coalesced kernel: threadIdx.x walks a row
  const int col = blockIdx.x * T + tx;
  float acc = 0.0f;

  for (int k0 = 0; k0 < K; k0 += T) {
    // Each thread loads one element of each tile; a warp reads 32 consecutive floats of a row
    // of A and of B (coalesced). Outside the matrix: 0, which adds nothing to the sum.
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them

    for (int k = 0; k < T; ++k)
      acc += As[ty][k] * Bs[k][tx];  // As: one word per warp (broadcast); Bs: 32 banks
    __syncthreads();  // everyone is done reading before the next iteration overwrites the tiles
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

void launch_tiled_smem(int M, int N, int K, const float* A, const float* B, float* C) {
  dim3 block(kSmemTile, kSmemTile);
  dim3 grid(ceil_div(N, kSmemTile), ceil_div(M, kSmemTile));
  tiled_smem_kernel<<<grid, block>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}
