// Chapter 02: copying and transposing a matrix, the two memory-bound kernels that set the
// ceilings the GEMM chapters are measured against, and the first use of shared memory.
//
// Every matrix is FP32, row-major; `in` is rows x cols. A copy writes `out` as rows x cols, a
// transpose writes `out` as cols x rows with out[c][r] = in[r][c].
//
// This header holds what several steps share and what the host tests call (tile_cell, the tile
// layouts, transpose_step, the tall tile's cells) and declares the launchers; the kernels are
// in steps/, one file per step, compiled by kernels.cu.
#pragma once

#include "common/check.h"

// The tiled kernels (copy_tiled and the transposes) give each block one 32 x 32 tile of the
// input. The block is 32 x 8 threads: threadIdx.x runs along a tile row, so a warp (32
// consecutive threadIdx.x, one threadIdx.y) covers one tile row, and each thread handles
// kTile / kBlockRows = 4 rows of the tile, kBlockRows = 8 rows apart.
constexpr int kTile = 32;
constexpr int kBlockRows = 8;
constexpr int kRowsPerThread = kTile / kBlockRows;
static_assert(kTile == 32, "a tile row must be exactly one warp of 32 threads and span the 32 "
                           "shared-memory banks; the XOR swizzle below relies on it too");
static_assert(kTile % kBlockRows == 0, "the block's rows must step through the tile evenly");

// One element of a matrix.
struct Cell {
  int row, col;
};

// The element that thread (tx, ty) of block (bx, by) handles in its step i (0 <= i < 4):
// tile row ty + 8 i, tile column tx, of the tile whose top-left corner is (32 by, 32 bx).
// The tiled kernels read the input at tile_cell(bx, by, ...); the transposes write the output
// at tile_cell(by, bx, ...): the same tile, mirrored, is the block (by, bx) of the output.
// tile_cell(0, 0, tx, ty, i) is the same cell's position inside its tile.
// Cells past the matrix edge (partial tiles) are skipped by the kernels' bounds checks.
__host__ __device__ inline Cell tile_cell(int bx, int by, int tx, int ty, int i) {
  return {by * kTile + ty + i * kBlockRows, bx * kTile + tx};
}

// The three layouts of a 32 x 32 tile in shared memory: where tile element (r, c) lives, in
// floats (0 <= r, c < 32), and how many floats the tile needs. Shared memory has 32 banks of
// 4 bytes, and float w lies in bank w % 32. A warp writes a tile row (lanes = c, fixed r) and
// reads a tile column (lanes = r, fixed c); tests/test_transpose_index.cpp counts the wavefronts.
// The transposes are one kernel, transpose_tiled_kernel<Layout>: these functions are the only
// difference between transpose_smem, transpose_padded and transpose_swizzled.

// Unpadded, tile[32][32]: row r starts at float 32 r, so all of column c sits in bank c.
// Writing a row: 32 banks, 1 wavefront. Reading a column: 32 words in one bank, 32 wavefronts.
struct SmemUnpadded {
  static constexpr int kWords = kTile * kTile;
  __host__ __device__ static constexpr int offset(int r, int c) { return r * kTile + c; }
};

// Padded, tile[32][33]: one unused float at the end of each row shifts row r by r banks, so
// element (r, c) is in bank (r + c) % 32 and a column covers all 32 banks: 1 wavefront.
// (transpose_tall uses the same layout with 128 rows.)
constexpr int kPaddedStride = kTile + 1;
struct SmemPadded {
  static constexpr int kWords = kTile * kPaddedStride;
  __host__ __device__ static constexpr int offset(int r, int c) { return r * kPaddedStride + c; }
};

// Swizzled, tile[32][32]: row r stores column c at position c ^ r. For a fixed r, c -> c ^ r
// permutes 0..31 (XOR with r is its own inverse), so a row still fills its own 32 floats; for
// a fixed c, r -> c ^ r takes 32 distinct values, so a column lands in 32 distinct banks.
// No memory wasted, and 1 wavefront both ways.
struct SmemSwizzled {
  static constexpr int kWords = kTile * kTile;
  __host__ __device__ static constexpr int offset(int r, int c) { return r * kTile + (c ^ r); }
};

// Step i (0 <= i < 4) of thread (tx, ty) of block (bx, by) in transpose_tiled_kernel, for a
// rows x cols input: everything the kernel indexes, so the host tests can run the kernel's
// own arithmetic over a whole grid. -1 marks an element outside the matrix (partial tiles).
struct TransposeStep {
  int in_index;    // phase 1: the input element it reads (a warp: one input row segment) ...
  int smem_store;  //   ... and the tile word it stores it at (a warp: one tile row)
  int smem_load;   // phase 2: the tile word it loads (a warp: one tile column) ...
  int out_index;   //   ... and the output element it writes (a warp: one output row segment)
};
template <class Layout>
__host__ __device__ inline TransposeStep transpose_step(int rows, int cols, int bx, int by,
                                                        int tx, int ty, int i) {
  const Cell g = tile_cell(bx, by, tx, ty, i);  // in `in`, rows x cols
  const Cell o = tile_cell(by, bx, tx, ty, i);  // in `out`, cols x rows: the mirrored block
  const Cell t = tile_cell(0, 0, tx, ty, i);    // the cell's place in its tile
  TransposeStep s;
  s.in_index = g.row < rows && g.col < cols ? g.row * cols + g.col : -1;
  s.smem_store = Layout::offset(t.row, t.col);
  // out(o.row, o.col) = in(o.col, o.row), which phase 1 stored at tile (t.col, t.row)
  s.smem_load = Layout::offset(t.col, t.row);
  s.out_index = o.row < cols && o.col < rows ? o.row * rows + o.col : -1;
  return s;
}

// Tall tiles, for transposes whose output rows are not 128-byte aligned (rows not a multiple
// of 32): the block takes 128 input rows x 32 columns (a (128, 33) padded tile), so each
// output row it writes is 128 floats long, and the partly written 32-byte sectors at the ends
// of a row segment are 2 per 512 bytes instead of 2 per 128. Same 32 x 8 threads; a thread
// handles 16 cells.
constexpr int kTallRows = 128;
constexpr int kTallSteps = kTallRows / kBlockRows;  // 16 cells a thread
static_assert(kTallRows % kTile == 0, "a tall tile is a whole number of 32-row output chunks");

// Phase 1, step i: the cell (inside the tall input tile) thread (tx, ty) loads: a warp reads
// one 32-float input row segment.
__host__ __device__ inline Cell tall_in_cell(int tx, int ty, int i) {
  return {ty + i * kBlockRows, tx};
}
// Phase 2, step i: the cell (inside the (32, 128) output tile) it writes. Four consecutive
// steps of a warp write one whole 128-float output row: the pieces of a 512-byte segment
// leave the SM back to back, so L2 completes the sectors they share.
__host__ __device__ inline Cell tall_out_cell(int tx, int ty, int i) {
  return {ty + (i / (kTallRows / kTile)) * kBlockRows, (i % (kTallRows / kTile)) * kTile + tx};
}

// Launchers: enqueue on the default stream; in and out are distinct device buffers of
// rows * cols floats. Copies write rows x cols, transposes cols x rows.
void launch_memcpy(int rows, int cols, const float* in, float* out);              // kernels.cu
void launch_copy_tiled(int rows, int cols, const float* in, float* out);          // steps/1_
void launch_copy_vec(int rows, int cols, const float* in, float* out);            // steps/2_
void launch_transpose_naive(int rows, int cols, const float* in, float* out);     // steps/3_
void launch_transpose_smem(int rows, int cols, const float* in, float* out);      // steps/4_
void launch_transpose_padded(int rows, int cols, const float* in, float* out);    // steps/4_
void launch_transpose_swizzled(int rows, int cols, const float* in, float* out);  // steps/4_
void launch_transpose_tall(int rows, int cols, const float* in, float* out);      // steps/5_
// The exercise (exercises/padded_transpose.cuh, or its solution): transpose_padded rebuilt.
void launch_ex_padded_transpose(int rows, int cols, const float* in, float* out);
