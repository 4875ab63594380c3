// Exercise (chapter 02): the conflict-free tile of the shared-memory transpose. A DELIBERATELY
// WRONG BODY (tests/meson.build expects it to fail). The tile is padded, and phase 1 stores
// row r at 33 r, but phase 2 reads with rows of 32 (t.col * kTile): word 32 c + r holds tile
// element (c, r - c) where r >= c, and another row's element or a padding word where r < c, so
// every element with c > 0 is wrong: it fails on every run.
//
// transpose_smem's kernel with its tile taken out: the two phases, the bounds checks, the
// barrier and the launcher are written. Yours are the tile (a flat array of floats) and the
// word where tile element (r, c) lives in it, once where phase 1 stores (t.row, t.col) and
// once where phase 2 loads the transposed element (t.col, t.row). Choose a layout whose tile
// columns cover the 32 banks: padded, as transpose_padded does, or XOR-swizzled; both pass.
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_PADDED_TRANSPOSE` below.
//   2. Write the three marked parts of ex_padded_transpose_kernel: the tile (transpose_smem's
//      is there, to change), the store and the load (replace each `tile[0]`).
//   3. meson test -C build --suite exercises       # correct at every test shape? then its speed
//      ./build/02_transpose_copy/transpose --kernel ex_padded_transpose,transpose_padded --size 8192 --bench
//   4. Compare with 02_transpose_copy/steps/4_transpose_tiled.cuh (and SmemPadded, transpose.cuh).
//
// Hint (README, "Why"): float w lies in bank w % 32. Phase 2 reads a tile column: its lanes
// are the rows r = 0..31 at a fixed column c. At word 32 r + c the column is in bank c for
// every r: a 32-way conflict, 32 wavefronts. One unused float after each row (word 33 r + c,
// kPaddedStride = 33) puts (r, c) in bank (r + c) % 32, 32 distinct banks; the swizzle (word
// 32 r + (c ^ r)) does it without the spare floats.
// Done when: PASS at every shape, and about the speed of transpose_padded (its row in the chapter
// README's Results table). `meson test` times it next to transpose_padded and prints the ratio;
// more than 1.5x slower FAILS, with a sentence on what the lesson is about (tests/exercise.py).
#pragma once

#include "02_transpose_copy/transpose.cuh"
#include "common/exercise.h"

// Output row j of the tile is input column j:
//
//   phase 1: warp ty reads in[tile row r][0..31]  -> tile (r, 0..31)    (r = ty + 8 i)
//   phase 2: warp ty reads tile (0..31, r)         -> out[tile row r][0..31]
__global__ void ex_padded_transpose_kernel(int rows, int cols, const float* __restrict__ in,
                                           float* __restrict__ out) {
  // ---- your code: the (32, 32) tile, tile row = input row, as a flat array of floats ----
  __shared__ float tile[kTile * kPaddedStride];  // (r, c) at 33 r + c: bank (r + c) % 32
  // ---- end of your code ----

  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell g = tile_cell(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);  // in `in`
    const Cell t = tile_cell(0, 0, threadIdx.x, threadIdx.y, i);  // its place in the tile
    const int in_index = g.row < rows && g.col < cols ? g.row * cols + g.col : -1;
    if (in_index >= 0) {
      // ---- your code: in(g) into tile element (t.row, t.col); a warp writes a tile row ----
      tile[t.row * kPaddedStride + t.col] = in[in_index];
      // ---- end of your code ----
    }
  }
  __syncthreads();  // phase 2 reads elements that other warps stored in phase 1

  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell o = tile_cell(blockIdx.y, blockIdx.x, threadIdx.x, threadIdx.y, i);  // in `out`
    const Cell t = tile_cell(0, 0, threadIdx.x, threadIdx.y, i);
    const int out_index = o.row < cols && o.col < rows ? o.row * rows + o.col : -1;
    if (out_index >= 0) {
      // ---- your code: out(o) = in(o.col, o.row), which phase 1 stored at tile element
      // (t.col, t.row); a warp reads a tile column ----
      out[out_index] = tile[t.col * kTile + t.row];  // WRONG: rows of 32, stored as 33
      // ---- end of your code ----
    }
  }
}

// One block of 32 x 8 threads per 32 x 32 input tile, rounded up; x runs over columns.
// rows <= 2^20 (cli.h), so grid.y <= 32768, within CUDA's 65,535.
void launch_ex_padded_transpose(int rows, int cols, const float* in, float* out) {
#ifdef EXERCISE_NOT_WRITTEN_PADDED_TRANSPOSE
  exercise_not_written("02_transpose_copy/exercises/padded_transpose.cuh");
#endif
  dim3 block(kTile, kBlockRows);
  dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTile));
  ex_padded_transpose_kernel<<<grid, block>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}
