// Chapter 03, experiment: the K-slab sweep behind tiled_2d's BK = 16 (NOTES.md has its table).
// The (128, 128) block tile and 8 x 8 per thread of steps/3_tiled_2d.cuh at BK = 8, 16, 32.
//
//   ./build/03_tiled/tiled --kernel sweep --size 4096 --bench
//
// Included once, by 03_tiled/kernels.cu, after the step it instantiates.
#pragma once

#include "03_tiled/steps/3_tiled_2d.cuh"

void launch_tiled_2d_bk8(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_tiled_2d_bk<8>(M, N, K, A, B, C);
}
void launch_tiled_2d_bk16(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_tiled_2d_bk<16>(M, N, K, A, B, C);
}
void launch_tiled_2d_bk32(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_tiled_2d_bk<32>(M, N, K, A, B, C);
}
