// Chapter 02, step 5: transpose_tall. Step 4's padded transpose with tall (128, 32) input
// tiles: each output row segment a block writes is 128 floats (512 bytes) instead of 32. When
// `rows` is not a multiple of 32, output rows do not start on 128-byte boundaries and every
// segment begins and ends inside a 32-byte sector; longer segments mean fewer such partial
// sectors per byte.
//
//   ./build/02_transpose_copy/transpose --kernel transpose_tall --shapes 8191x4097 --bench
//   tools/steps.py diff transpose_tall        # against step 4's tiled transpose
//
// Included once, by 02_transpose_copy/kernels.cu.
#pragma once

#include "02_transpose_copy/transpose.cuh"

// The layout is SmemPadded's, with 128 rows; the cells come from tall_in_cell and
// tall_out_cell, which the host tests check (conflict-free, every cell once, whole 128-float
// output rows). A thread handles 16 cells in each phase:
//
//   phase 1: warp ty reads in[tile row r][0..31]  -> tile[r][0..31]    (r = ty + 8 i)
//   phase 2: warp ty reads tile[0..127][c], 32 rows per step, 4 steps
//                                                 -> out[tile row c][0..127]  (c = ty + 8 (i / 4))
__global__ void transpose_tall_kernel(int rows, int cols, const float* __restrict__ in,
                                      float* __restrict__ out) {
  __shared__ float tile[kTallRows * kPaddedStride];  // (128, 33), row-major; tile row = input row
  const int r0 = blockIdx.y * kTallRows, c0 = blockIdx.x * kTile;  // the tile's input corner

  for (int i = 0; i < kTallSteps; ++i) {
    const Cell t = tall_in_cell(threadIdx.x, threadIdx.y, i);
    if (r0 + t.row < rows && c0 + t.col < cols)
      tile[SmemPadded::offset(t.row, t.col)] = in[(r0 + t.row) * cols + c0 + t.col];
  }
  __syncthreads();  // phase 2 reads elements that other warps stored in phase 1

  for (int i = 0; i < kTallSteps; ++i) {
    const Cell t = tall_out_cell(threadIdx.x, threadIdx.y, i);  // (input column, input row)
    if (c0 + t.row < cols && r0 + t.col < rows)
      out[(c0 + t.row) * rows + r0 + t.col] = tile[SmemPadded::offset(t.col, t.row)];
  }
}

// One block of 32 x 8 threads per 128 x 32 input tile, rounded up; x runs over columns.
// rows <= 2^20 (cli.h), so grid.y <= 8192, within CUDA's 65,535.
void launch_transpose_tall(int rows, int cols, const float* in, float* out) {
  dim3 block(kTile, kBlockRows);
  dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTallRows));
  transpose_tall_kernel<<<grid, block>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}
