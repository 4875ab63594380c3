// Chapter 01, step 1: naive_uncoalesced. One thread per element of C, every operand read
// straight from global memory; consecutive threads of a warp take consecutive ROWS of one
// column of C, so each of their loads of A and stores of C is a sector of its own.
//
//   ./build/01_naive/naive --kernel naive_uncoalesced --size 2048 --bench
//
// Included once, by 01_naive/kernels.cu. The mapping (naive_uncoalesced_element) is in
// naive.cuh, where the host tests call it too.
#pragma once

#include "01_naive/naive.cuh"

__global__ void naive_uncoalesced_kernel(int M, int N, int K, const float* __restrict__ A,
                                         const float* __restrict__ B, float* __restrict__ C) {
  const RowCol e = naive_uncoalesced_element(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
  if (e.row >= M || e.col >= N) return;  // the grid is rounded up to whole blocks
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += A[e.row * K + k] * B[k * N + e.col];  // A: 32 rows apart per warp -> 32 sectors
  C[e.row * N + e.col] = acc;                    // strided store: 32 sectors per warp
}

// The grid covers C with 32 x 32 blocks, rounded up; x runs over rows. M <= 2^20 (cli.h), so
// grid.x <= 32768.
void launch_naive_uncoalesced(int M, int N, int K, const float* A, const float* B, float* C) {
  dim3 block(kNaiveBlock, kNaiveBlock);
  dim3 grid(ceil_div(M, kNaiveBlock), ceil_div(N, kNaiveBlock));
  naive_uncoalesced_kernel<<<grid, block>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}
