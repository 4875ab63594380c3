// Chapter 02: copying and transposing a matrix, the two memory-bound kernels that set the
// ceilings the GEMM chapters are measured against, and the first use of shared memory.
//
// Every matrix is FP32, row-major; `in` is rows x cols. A copy writes `out` as rows x cols, a
// transpose writes `out` as cols x rows with out[c][r] = in[r][c].
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

// Where element (r, c) of a 32 x 32 tile lives in shared memory, in floats, for the three
// layouts of the transposes (0 <= r, c < 32). Shared memory has 32 banks of 4 bytes, and
// float number w lies in bank w % 32. A warp writes a tile row (lanes = c, fixed r) and reads
// a tile column (lanes = r, fixed c); see tests/test_transpose_index.cu for the wavefronts.

// Unpadded, tile[32][32]: row r starts at float 32 r, so all of column c sits in bank c.
// Writing a row: 32 banks, 1 wavefront. Reading a column: 32 words in one bank, 32 wavefronts.
constexpr int kSmemUnpadded = kTile * kTile;
__host__ __device__ inline int smem_offset_unpadded(int r, int c) { return r * kTile + c; }

// Padded, tile[32][33]: one unused float at the end of each row shifts row r by r banks, so
// element (r, c) is in bank (r + c) % 32 and a column covers all 32 banks: 1 wavefront.
constexpr int kPaddedStride = kTile + 1;
constexpr int kSmemPadded = kTile * kPaddedStride;
__host__ __device__ inline int smem_offset_padded(int r, int c) { return r * kPaddedStride + c; }

// Swizzled, tile[32][32]: row r stores column c at position c ^ r. For a fixed r, c -> c ^ r
// permutes 0..31 (XOR with r is its own inverse), so a row still fills its own 32 floats; for
// a fixed c, r -> c ^ r takes 32 distinct values, so a column lands in 32 distinct banks.
// No memory wasted, and 1 wavefront both ways.
constexpr int kSmemSwizzled = kTile * kTile;
__host__ __device__ inline int smem_offset_swizzled(int r, int c) { return r * kTile + (c ^ r); }

// Launchers: enqueue on the default stream; in and out are distinct device buffers of
// rows * cols floats. Copies write rows x cols, transposes cols x rows.
void launch_memcpy(int rows, int cols, const float* in, float* out);
void launch_copy_tiled(int rows, int cols, const float* in, float* out);
void launch_copy_vec(int rows, int cols, const float* in, float* out);
void launch_transpose_naive(int rows, int cols, const float* in, float* out);
void launch_transpose_smem(int rows, int cols, const float* in, float* out);
void launch_transpose_padded(int rows, int cols, const float* in, float* out);
void launch_transpose_swizzled(int rows, int cols, const float* in, float* out);
