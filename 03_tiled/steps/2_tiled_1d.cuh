// Chapter 03, step 2: tiled_1d. Register blocking in one dimension: block tile (BM, BN) =
// (64, 64), K slab BK = 8, 512 threads; thread t computes TM = 8 rows of one column of C, so
// one value of B read from shared memory feeds TM multiply-adds from a register.
//
//   ./build/03_tiled/tiled --kernel tiled_1d --size 4096 --bench
//   tools/steps.py diff tiled_1d
//
// Included once, by 03_tiled/kernels.cu.
#pragma once

#include "03_tiled/tiled.cuh"

__global__ void __launch_bounds__(k1dThreads)
    tiled_1d_kernel(int M, int N, int K, const float* __restrict__ A,
                    const float* __restrict__ B, float* __restrict__ C) {
  constexpr int BM = k1dBM, BN = k1dBN, BK = k1dBK, TM = k1dTM;
  static_assert(BM * BK == k1dThreads && BK * BN == k1dThreads,
                "each thread loads exactly one element of each tile");
  __shared__ float As[BM][BK];  // (BM, BK) tile of A
  __shared__ float Bs[BK][BN];  // (BK, BN) tile of B

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tcol = tid % BN;        // this thread's column of the block tile
  const int trow = tid / BN * TM;   // first of its TM rows; a warp (32 < BN) shares it
  // Loader coordinates: one element of each tile per thread, consecutive threads along a row.
  const int a_r = tid / BK, a_c = tid % BK;
  const int b_r = tid / BN, b_c = tid % BN;

  float acc[TM] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    As[a_r][a_c] = (m0 + a_r < M && k0 + a_c < K) ? A[(m0 + a_r) * K + k0 + a_c] : 0.0f;
    Bs[b_r][b_c] = (k0 + b_r < K && n0 + b_c < N) ? B[(k0 + b_r) * N + n0 + b_c] : 0.0f;
    __syncthreads();  // tiles complete before use

    for (int k = 0; k < BK; ++k) {
      const float b = Bs[k][tcol];  // kept in a register for TM multiply-adds
      for (int i = 0; i < TM; ++i) acc[i] += As[trow + i][k] * b;  // broadcast within a warp
    }
    __syncthreads();  // tiles consumed before they are overwritten
  }
  for (int i = 0; i < TM; ++i)
    if (m0 + trow + i < M && n0 + tcol < N) C[(m0 + trow + i) * N + n0 + tcol] = acc[i];
}

void launch_tiled_1d(int M, int N, int K, const float* A, const float* B, float* C) {
  dim3 grid(ceil_div(N, k1dBN), ceil_div(M, k1dBM));
  tiled_1d_kernel<<<grid, k1dThreads>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}
