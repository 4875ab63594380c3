// Chapter 03, step 3: tiled_2d. Register blocking in two dimensions: block tile (BM, BN), K
// slab BK; each thread computes a (TM, TN) micro-tile as outer products of register-cached
// slices of A and B: per k, TM + TN shared loads for TM * TN FMAs instead of 1 + TM for TM.
// The thread-to-element map is Tile2d (tiled.cuh, host-tested).
//
//   ./build/03_tiled/tiled --kernel tiled_2d --size 4096 --bench
//   tools/steps.py diff tiled_2d
//
// Included once, by 03_tiled/kernels.cu (experiments/bk_sweep.cuh instantiates the kernel
// with other K slabs).
#pragma once

#include "03_tiled/tiled.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(Tile2d<BM, BN, TM, TN>::kThreads)
    tiled_2d_kernel(int M, int N, int K, const float* __restrict__ A,
                    const float* __restrict__ B, float* __restrict__ C) {
  using Tile = Tile2d<BM, BN, TM, TN>;
  constexpr int kThreads = Tile::kThreads;
  static_assert(BM % TM == 0 && BN % TN == 0, "micro-tiles divide the block tile");
  static_assert((BM * BK) % kThreads == 0 && (BK * BN) % kThreads == 0,
                "the threads load whole tiles in equal shares");
  static_assert(kThreads % BK == 0 && kThreads % BN == 0, "loader rows are whole");
  __shared__ float As[BM][BK];  // (BM, BK) tile of A
  __shared__ float Bs[BK][BN];  // (BK, BN) tile of B

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  float acc[TM][TN] = {};
  float a_frag[TM], b_frag[TN];

  for (int k0 = 0; k0 < K; k0 += BK) {
    // Each thread loads (BM * BK) / kThreads elements of A: consecutive threads along a row.
    for (int e = tid; e < BM * BK; e += kThreads) {
      const int r = e / BK, c = e % BK;
      As[r][c] = (m0 + r < M && k0 + c < K) ? A[(m0 + r) * K + k0 + c] : 0.0f;
    }
    for (int e = tid; e < BK * BN; e += kThreads) {
      const int r = e / BN, c = e % BN;
      Bs[r][c] = (k0 + r < K && n0 + c < N) ? B[(k0 + r) * N + n0 + c] : 0.0f;
    }
    __syncthreads();  // tiles complete before use

    // Unrolled: the loads of step k + 1 can be issued while step k's FMAs run. Without the
    // pragma nvcc unrolls the i and j loops but keeps this one, and every step waits for its
    // own loads (seen in the SASS: one copy of the 16 LDS and 64 FFMA, in a loop).
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      for (int i = 0; i < TM; ++i) a_frag[i] = (&As[0][0])[Tile::template a_word<BK>(tid, i, k)];
      for (int j = 0; j < TN; ++j) b_frag[j] = (&Bs[0][0])[Tile::b_word(tid, j, k)];
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];  // outer product
    }
    __syncthreads();  // tiles consumed before they are overwritten
  }

  for (int i = 0; i < TM; ++i) {
    const int m = m0 + Tile::row(tid, i);
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + Tile::col(tid, j);
      if (m < M && n < N) C[m * N + n] = acc[i][j];
    }
  }
}

template <int BK>
void launch_tiled_2d_bk(int M, int N, int K, const float* A, const float* B, float* C) {
  constexpr int BM = 128, BN = 128, TM = 8, TN = 8;
  dim3 grid(ceil_div(N, BN), ceil_div(M, BM));
  tiled_2d_kernel<BM, BN, BK, TM, TN><<<grid, Tile2d<BM, BN, TM, TN>::kThreads>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}

// The configuration tiled_2d runs: BK = 16. In the K-slab sweep (experiments/bk_sweep.cuh,
// NOTES.md) BK = 16 and 32 are within 1% of each other; 16 needs half the shared memory.
void launch_tiled_2d(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_tiled_2d_bk<16>(M, N, K, A, B, C);
}
