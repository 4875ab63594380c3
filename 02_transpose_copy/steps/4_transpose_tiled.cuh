// Chapter 02, step 4: transpose_smem, transpose_padded, transpose_swizzled. Step 3's transpose
// turned around in shared memory: the block loads its input tile row by row (coalesced reads),
// then writes the mirrored tile row by row (coalesced writes), so in between each warp reads a
// COLUMN of the tile. One kernel over the tile's layout (transpose.cuh): unpadded (a 32-way
// bank conflict), padded and XOR-swizzled (none).
//
//   ./build/02_transpose_copy/transpose --kernel transpose_padded --size 8192 --bench
//   tools/steps.py diff transpose_smem        # against step 3's naive transpose
//   tools/steps.py diff transpose_padded      # the layout only
//
// Included once, by 02_transpose_copy/kernels.cu.
#pragma once

#include "02_transpose_copy/transpose.cuh"

// Layout::offset is the only difference between the three transposes (SmemUnpadded,
// SmemPadded, SmemSwizzled); all the index arithmetic is in transpose_step, which the host
// tests run over whole grids. Output row j of the tile is input column j:
//
//   phase 1: warp ty reads in[tile row r][0..31]  -> tile[r][0..31]    (r = ty + 8 i)
//   phase 2: warp ty reads tile[0..31][r]         -> out[tile row r][0..31]
//
// SmemUnpadded: the 32 floats of a tile column are 32 floats apart, all in one bank, so the
// read in phase 2 is a 32-way bank conflict (32 wavefronts instead of 1). SmemPadded and
// SmemSwizzled spread a column over the 32 banks: 1 wavefront.
template <class Layout>
__global__ void transpose_tiled_kernel(int rows, int cols, const float* __restrict__ in,
                                       float* __restrict__ out) {
  __shared__ float tile[Layout::kWords];  // (32, 32) tile, tile row = input row, at Layout::offset

  for (int i = 0; i < kRowsPerThread; ++i) {
    const TransposeStep s =
        transpose_step<Layout>(rows, cols, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    if (s.in_index >= 0) tile[s.smem_store] = in[s.in_index];  // a warp writes a tile row
  }
  __syncthreads();  // phase 2 reads elements that other warps stored in phase 1

  for (int i = 0; i < kRowsPerThread; ++i) {
    const TransposeStep s =
        transpose_step<Layout>(rows, cols, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    if (s.out_index >= 0) out[s.out_index] = tile[s.smem_load];  // a warp reads a tile column
  }
}

// One block of 32 x 8 threads per 32 x 32 input tile, rounded up; x runs over columns.
// rows <= 2^20 (cli.h), so grid.y <= 32768, within CUDA's 65,535.
template <class Layout>
static void launch_transpose_tiled(int rows, int cols, const float* in, float* out) {
  dim3 block(kTile, kBlockRows);
  dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTile));
  transpose_tiled_kernel<Layout><<<grid, block>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

void launch_transpose_smem(int rows, int cols, const float* in, float* out) {
  launch_transpose_tiled<SmemUnpadded>(rows, cols, in, out);
}
void launch_transpose_padded(int rows, int cols, const float* in, float* out) {
  launch_transpose_tiled<SmemPadded>(rows, cols, in, out);
}
void launch_transpose_swizzled(int rows, int cols, const float* in, float* out) {
  launch_transpose_tiled<SmemSwizzled>(rows, cols, in, out);
}
