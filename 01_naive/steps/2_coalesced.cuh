// Chapter 01, step 2: naive_coalesced. The same kernel, with one thing changed: consecutive
// threads of a warp take consecutive COLUMNS of one row of C. A warp now reads one float of A
// (a broadcast) and 128 contiguous bytes of B, and stores 128 contiguous bytes of C.
//
//   ./build/01_naive/naive --kernel naive_coalesced --size 2048 --bench
//   tools/steps.py diff naive_coalesced       # what changed since step 1
//
// Included once, by 01_naive/kernels.cu. The mapping (naive_coalesced_element) is in
// naive.cuh, where the host tests call it too.
#pragma once

#include "01_naive/naive.cuh"

__global__ void naive_coalesced_kernel(int M, int N, int K, const float* __restrict__ A,
                                       const float* __restrict__ B, float* __restrict__ C) {
  const RowCol e = naive_coalesced_element(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
  if (e.row >= M || e.col >= N) return;  // the grid is rounded up to whole blocks
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += A[e.row * K + k] * B[k * N + e.col];  // A: one address per warp (broadcast);
                                                 // B: 32 consecutive floats -> 4 sectors
  C[e.row * N + e.col] = acc;                    // 128 contiguous bytes per warp
}

// The grid covers C with 32 x 32 blocks, rounded up; x runs over columns. M <= 2^20 (cli.h),
// so grid.y <= 32768.
void launch_naive_coalesced(int M, int N, int K, const float* A, const float* B, float* C) {
  dim3 block(kNaiveBlock, kNaiveBlock);
  dim3 grid(ceil_div(N, kNaiveBlock), ceil_div(M, kNaiveBlock));
  naive_coalesced_kernel<<<grid, block>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}
