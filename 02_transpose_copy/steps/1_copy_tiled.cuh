// Chapter 02, step 1: copy_tiled. A plain copy with the thread layout of every tiled kernel in
// this chapter: a block of 32 x 8 threads moves one 32 x 32 tile, a warp one tile row (128
// contiguous bytes), each thread 4 rows of its column, 8 apart (tile_cell). Whatever the
// transposes lose against it is the cost of transposing, not of this layout.
//
//   ./build/02_transpose_copy/transpose --kernel copy_tiled --size 8192 --bench
//
// Included once, by 02_transpose_copy/kernels.cu.
#pragma once

#include "02_transpose_copy/transpose.cuh"

// Tiles at the right and bottom edges may be partial, hence the bounds check on every global
// access.
__global__ void copy_tiled_kernel(int rows, int cols, const float* __restrict__ in,
                                  float* __restrict__ out) {
  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell g = tile_cell(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    if (g.row < rows && g.col < cols)
      out[g.row * cols + g.col] = in[g.row * cols + g.col];  // a warp: 128 contiguous bytes
  }
}

// One block of 32 x 8 threads per 32 x 32 input tile, rounded up; x runs over columns.
// rows <= 2^20 (cli.h), so grid.y <= 32768, within CUDA's 65,535.
void launch_copy_tiled(int rows, int cols, const float* in, float* out) {
  dim3 block(kTile, kBlockRows);
  dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTile));
  copy_tiled_kernel<<<grid, block>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}
