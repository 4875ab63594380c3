// Exercise (chapter 01): the coalesced thread mapping. A DELIBERATELY WRONG BODY
// (tests/meson.build expects it to fail). x and y swapped: threadIdx.x and blockIdx.x walk the
// rows, but the launcher's grid runs x over the columns and y over the rows, so only rows below
// ceil(N / 32) * 32 and columns below ceil(M / 32) * 32 are computed: a C taller than it is
// wide (1024x1x513), or 127x129x131 (column 128), keeps elements no thread writes. It fails on
// every run alike.
//
// Write which element of C each thread computes, so that the 32 threads of a warp (consecutive
// threadIdx.x, one threadIdx.y) take 32 consecutive COLUMNS of one row of C. The loop, the
// bounds test and the launcher are written; only `row` and `col` are yours.
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_COALESCED_MAPPING` below.
//   2. Replace the two `0` placeholders in ex_coalesced_mapping_kernel.
//   3. meson test -C build --suite exercises       # correct at every test shape? then its speed
//      ./build/01_naive/naive --kernel ex_coalesced_mapping,naive_coalesced --size 4096 --bench
//   4. Compare with 01_naive/steps/2_coalesced.cuh (naive_coalesced_element in naive.cuh).
//
// Hint (README, "Why"): a warp issues one load for its 32 threads; it costs one transaction
// per distinct 32-byte sector touched. B[k * N + col] is contiguous in col, A[row * K + k] in
// k only: give the warp one row and 32 columns. The launcher's grid runs x over the columns.
// Done when: PASS at every shape, and about the speed of naive_coalesced (its row in the chapter
// README's Results table). `meson test` times it next to naive_coalesced and prints the ratio; more
// than 1.5x slower FAILS, with a sentence on what the lesson is about (tests/exercise.py).
#pragma once

#include "01_naive/naive.cuh"
#include "common/exercise.h"

__global__ void ex_coalesced_mapping_kernel(int M, int N, int K, const float* __restrict__ A,
                                            const float* __restrict__ B,
                                            float* __restrict__ C) {
  // ---- your code: the element (row, col) of C this thread computes ----
  const int row = blockIdx.x * kNaiveBlock + threadIdx.x;  // WRONG: x and y swapped
  const int col = blockIdx.y * kNaiveBlock + threadIdx.y;
  // ---- end of your code ----
  if (row >= M || col >= N) return;  // the grid is rounded up to whole blocks
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

// 32 x 32 blocks; x runs over the columns of C, y over its rows.
void launch_ex_coalesced_mapping(int M, int N, int K, const float* A, const float* B, float* C) {
#ifdef EXERCISE_NOT_WRITTEN_COALESCED_MAPPING
  exercise_not_written("01_naive/exercises/coalesced_mapping.cuh");
#endif
  dim3 block(kNaiveBlock, kNaiveBlock);
  dim3 grid(ceil_div(N, kNaiveBlock), ceil_div(M, kNaiveBlock));
  ex_coalesced_mapping_kernel<<<grid, block>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}
