// Chapter 02, step 3: transpose_naive. Step 1's copy with the write transposed: out (cols x
// rows) at (c, r) = in at (r, c). A warp still reads 32 consecutive floats of an input row (4
// sectors), but writes them down an output column, `rows` floats apart: 32 sectors, each
// carrying 4 useful bytes of its 32.
//
//   ./build/02_transpose_copy/transpose --kernel transpose_naive --size 8192 --bench
//   tools/steps.py diff transpose_naive       # against step 1's tiled copy
//
// Included once, by 02_transpose_copy/kernels.cu.
#pragma once

#include "02_transpose_copy/transpose.cuh"

// Tiles at the right and bottom edges may be partial, hence the bounds check on every global
// access.
__global__ void transpose_naive_kernel(int rows, int cols, const float* __restrict__ in,
                                       float* __restrict__ out) {
  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell g = tile_cell(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    if (g.row < rows && g.col < cols)
      out[g.col * rows + g.row] = in[g.row * cols + g.col];  // a warp: 32 sectors written
  }
}

// One block of 32 x 8 threads per 32 x 32 input tile, rounded up; x runs over columns.
// rows <= 2^20 (cli.h), so grid.y <= 32768, within CUDA's 65,535.
void launch_transpose_naive(int rows, int cols, const float* in, float* out) {
  dim3 block(kTile, kBlockRows);
  dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTile));
  transpose_naive_kernel<<<grid, block>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}
