// Exercise (chapter 03): the inner loop of the 2-D register tile. A DELIBERATELY WRONG BODY
// (tests/meson.build expects it to fail). The outer product takes the fragments by the wrong
// index, a_frag[j] * b_frag[i] (TM = TN = 8, so it compiles): acc[i][j] sums the products of
// row j and column i, each thread's 8 x 8 micro-tile of C comes out transposed, and every
// element off its diagonal is wrong, on every run alike.
//
// tiled_2d's kernel with its inner loop taken out: the tiles of A and B are loaded into shared
// memory, the accumulators wait in registers, the epilogue stores them. Write the loop over k
// that reads each thread's TM values of A and TN values of B from the shared tiles into
// registers and adds their outer product into acc.
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_REGISTER_TILE` below.
//   2. Write the loop between the "your code" lines of ex_register_tile_kernel.
//   3. meson test -C build --suite exercises       # correct at every test shape? then its speed
//      ./build/03_tiled/tiled --kernel ex_register_tile,tiled_2d --size 4096 --bench
//   4. Compare with 03_tiled/steps/3_tiled_2d.cuh.
//
// Hint (README, "Why"): per k, TM + TN shared loads feed TM * TN multiply-adds. Tile2d
// (tiled.cuh) gives the words to read: a_word<BK>(tid, i, k) in As, b_word(tid, j, k) in Bs.
// Without #pragma unroll on the k loop every step waits for its own loads.
// Done when: PASS at every shape, and about the speed of tiled_2d (its row in the chapter README's
// Results table). `meson test` times it next to tiled_2d and prints the ratio; more than 1.5x
// slower FAILS, with a sentence on what the lesson is about (tests/exercise.py).
#pragma once

#include "03_tiled/tiled.cuh"
#include "common/exercise.h"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(Tile2d<BM, BN, TM, TN>::kThreads)
    ex_register_tile_kernel(int M, int N, int K, const float* __restrict__ A,
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

    // ---- your code: the inner loop over the BK values of k in the tiles ----
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      for (int i = 0; i < TM; ++i) a_frag[i] = (&As[0][0])[Tile::template a_word<BK>(tid, i, k)];
      for (int j = 0; j < TN; ++j) b_frag[j] = (&Bs[0][0])[Tile::b_word(tid, j, k)];
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[j] * b_frag[i];  // WRONG: j, i
    }
    // ---- end of your code ----
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

// tiled_2d's configuration: (128, 128) block tiles, BK = 16, 8 x 8 per thread, 256 threads.
void launch_ex_register_tile(int M, int N, int K, const float* A, const float* B, float* C) {
#ifdef EXERCISE_NOT_WRITTEN_REGISTER_TILE
  exercise_not_written("03_tiled/exercises/register_tile.cuh");
#endif
  constexpr int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8;
  dim3 grid(ceil_div(N, BN), ceil_div(M, BM));
  ex_register_tile_kernel<BM, BN, BK, TM, TN><<<grid, Tile2d<BM, BN, TM, TN>::kThreads>>>(
      M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}
