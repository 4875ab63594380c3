// Chapter 02's index functions, the very ones the kernels call: the bank-conflict counts of
// the three shared-memory tile layouts, the swizzle is a permutation, the tiled grid covers
// every element once, and the global-memory sectors per warp the README quotes.
#include <cstdint>
#include <vector>

#include "02_transpose_copy/transpose.cuh"
#include "common/access_model.h"
#include "harness.h"

namespace {

using Offset = int (*)(int r, int c);

// Wavefronts for a warp whose lane l accesses tile element (row(l), col(l)) through `offset`.
template <typename RowOf, typename ColOf>
int warp_wavefronts(Offset offset, RowOf row, ColOf col) {
  uint32_t addr[32];
  for (int lane = 0; lane < 32; ++lane) addr[lane] = 4u * offset(row(lane), col(lane));
  return shared_wavefronts(addr, 32, 4);
}

// Phase 2 of the transposes: a warp reads tile column c (lanes = rows 0..31).
int column_read_wavefronts(Offset offset, int c) {
  return warp_wavefronts(offset, [](int lane) { return lane; }, [c](int) { return c; });
}

// Phase 1: a warp writes tile row r (lanes = columns 0..31).
int row_write_wavefronts(Offset offset, int r) {
  return warp_wavefronts(offset, [r](int) { return r; }, [](int lane) { return lane; });
}

struct Shape2 {
  int rows, cols;
};
const Shape2 kOddShapes[] = {{1, 1}, {1, 1000}, {1000, 1}, {31, 33}, {33, 31}, {97, 101},
                             {64, 96}};

}  // namespace

TEST(transpose_index, unpadded_column_read_is_a_32_way_conflict) {
  for (int c = 0; c < kTile; ++c) CHECK_EQ(column_read_wavefronts(smem_offset_unpadded, c), 32);
}

TEST(transpose_index, padded_column_read_is_conflict_free) {
  for (int c = 0; c < kTile; ++c) CHECK_EQ(column_read_wavefronts(smem_offset_padded, c), 1);
}

TEST(transpose_index, swizzled_column_read_is_conflict_free) {
  for (int c = 0; c < kTile; ++c) CHECK_EQ(column_read_wavefronts(smem_offset_swizzled, c), 1);
}

TEST(transpose_index, row_write_is_one_wavefront_in_every_layout) {
  for (int r = 0; r < kTile; ++r) {
    CHECK_EQ(row_write_wavefronts(smem_offset_unpadded, r), 1);
    CHECK_EQ(row_write_wavefronts(smem_offset_padded, r), 1);
    CHECK_EQ(row_write_wavefronts(smem_offset_swizzled, r), 1);
  }
}

// Each tile row keeps its own 32 floats, each exactly once: no two elements collide and the
// tile fits in tile[32][32].
TEST(transpose_index, swizzle_permutes_each_row) {
  for (int r = 0; r < kTile; ++r) {
    std::vector<int> seen(kTile, 0);
    for (int c = 0; c < kTile; ++c) {
      int off = smem_offset_swizzled(r, c);
      CHECK(off >= r * kTile && off < (r + 1) * kTile);
      if (off >= r * kTile && off < (r + 1) * kTile) ++seen[off - r * kTile];
    }
    for (int s : seen) CHECK_EQ(s, 1);
  }
}

// The shared arrays are large enough for every offset the kernels form.
TEST(transpose_index, offsets_fit_the_shared_arrays) {
  for (int r = 0; r < kTile; ++r)
    for (int c = 0; c < kTile; ++c) {
      CHECK(smem_offset_unpadded(r, c) >= 0 && smem_offset_unpadded(r, c) < kSmemUnpadded);
      CHECK(smem_offset_padded(r, c) >= 0 && smem_offset_padded(r, c) < kSmemPadded);
      CHECK(smem_offset_swizzled(r, c) >= 0 && smem_offset_swizzled(r, c) < kSmemSwizzled);
    }
}

// The grid of launch_copy_tiled / launch_transpose_* (ceil(cols/32) x ceil(rows/32) blocks of
// 32 x 8 threads, 4 steps each) reaches every element of the input exactly once through
// tile_cell(bx, by, ...), and every element of the transposed output exactly once through
// tile_cell(by, bx, ...), with the kernels' bounds checks.
TEST(transpose_index, tiled_grid_covers_every_element_once) {
  for (const Shape2& s : kOddShapes) {
    std::vector<int> in_hits(size_t(s.rows) * s.cols, 0), out_hits(size_t(s.rows) * s.cols, 0);
    for (int by = 0; by < ceil_div(s.rows, kTile); ++by)
      for (int bx = 0; bx < ceil_div(s.cols, kTile); ++bx)
        for (int ty = 0; ty < kBlockRows; ++ty)
          for (int tx = 0; tx < kTile; ++tx)
            for (int i = 0; i < kRowsPerThread; ++i) {
              Cell g = tile_cell(bx, by, tx, ty, i);
              if (g.row < s.rows && g.col < s.cols) ++in_hits[size_t(g.row) * s.cols + g.col];
              Cell o = tile_cell(by, bx, tx, ty, i);  // output is cols x rows
              if (o.row < s.cols && o.col < s.rows) ++out_hits[size_t(o.row) * s.rows + o.col];
            }
    bool once = true;
    for (size_t e = 0; e < in_hits.size(); ++e) once = once && in_hits[e] == 1 && out_hits[e] == 1;
    CHECK(once);
  }
}

// Runs the shared-memory transposes' two phases on the host, block by block, with each tile
// layout, exactly as the kernels index: the output must be the transpose, and every tile
// element phase 2 reads must have been written in phase 1 (partial tiles included).
TEST(transpose_index, tiled_transpose_dataflow_on_the_host) {
  for (Offset offset : {smem_offset_unpadded, smem_offset_padded, smem_offset_swizzled}) {
    for (const Shape2& s : kOddShapes) {
      std::vector<float> in(size_t(s.rows) * s.cols), out(in.size(), -1.0f);
      for (size_t e = 0; e < in.size(); ++e) in[e] = float(e);
      bool ok = true;
      for (int by = 0; by < ceil_div(s.rows, kTile); ++by)
        for (int bx = 0; bx < ceil_div(s.cols, kTile); ++bx) {
          std::vector<float> tile(kSmemPadded, -1.0f);  // the largest of the three layouts
          for (int ty = 0; ty < kBlockRows; ++ty)     // phase 1
            for (int tx = 0; tx < kTile; ++tx)
              for (int i = 0; i < kRowsPerThread; ++i) {
                Cell g = tile_cell(bx, by, tx, ty, i), t = tile_cell(0, 0, tx, ty, i);
                if (g.row < s.rows && g.col < s.cols)
                  tile[offset(t.row, t.col)] = in[size_t(g.row) * s.cols + g.col];
              }
          for (int ty = 0; ty < kBlockRows; ++ty)  // phase 2
            for (int tx = 0; tx < kTile; ++tx)
              for (int i = 0; i < kRowsPerThread; ++i) {
                Cell o = tile_cell(by, bx, tx, ty, i), t = tile_cell(0, 0, tx, ty, i);
                if (o.row < s.cols && o.col < s.rows) {
                  float v = tile[offset(t.col, t.row)];
                  ok = ok && v >= 0.0f;  // -1: never written in phase 1
                  out[size_t(o.row) * s.rows + o.col] = v;
                }
              }
        }
      for (int r = 0; r < s.rows; ++r)
        for (int c = 0; c < s.cols; ++c)
          ok = ok && out[size_t(c) * s.rows + r] == in[size_t(r) * s.cols + c];
      CHECK(ok);
    }
  }
}

// Global memory, warp (ty = 0) of block (1, 1), step 0, for a 4096 x 4096 matrix: every read
// is 32 consecutive floats (4 sectors); the naive transpose's write is 32 sectors, the tiled
// transposes' write 4.
TEST(transpose_index, global_sectors_per_warp) {
  const int rows = 4096, cols = 4096;
  uint64_t read[32], naive_write[32], tiled_write[32];
  for (int lane = 0; lane < 32; ++lane) {
    Cell g = tile_cell(1, 1, lane, 0, 0);
    Cell o = tile_cell(1, 1, lane, 0, 0);  // tile_cell(by, bx, ...) with bx = by = 1
    read[lane] = 4ull * (uint64_t(g.row) * cols + g.col);
    naive_write[lane] = 4ull * (uint64_t(g.col) * rows + g.row);  // transpose_naive_kernel
    tiled_write[lane] = 4ull * (uint64_t(o.row) * rows + o.col);  // transpose_*_kernel phase 2
  }
  CHECK_EQ(global_sectors(read, 32), 4);
  CHECK_EQ(global_sectors(naive_write, 32), 32);
  CHECK_EQ(global_sectors(tiled_write, 32), 4);
}

// copy_vec: a warp's float4 access moves 512 contiguous bytes, 16 sectors, in one instruction
// (a scalar copy needs 4 instructions of 4 sectors each for the same bytes).
TEST(transpose_index, copy_vec_warp_moves_16_sectors) {
  uint64_t addr[32];
  for (int lane = 0; lane < 32; ++lane) addr[lane] = 16ull * (1000 + lane);  // float4 v = 1000 + lane
  CHECK_EQ(global_sectors(addr, 32, 16), 16);
}

TEST(transpose_index, tall_tile_is_conflict_free_and_covers_once) {
  std::vector<int> in_hits(kTallRows * kTile, 0), out_hits(kTallRows * kTile, 0);
  for (int ty = 0; ty < kBlockRows; ++ty)
    for (int i = 0; i < kTallSteps; ++i) {
      uint32_t store[32], load[32];
      for (int tx = 0; tx < 32; ++tx) {
        Cell a = tall_in_cell(tx, ty, i), b = tall_out_cell(tx, ty, i);
        ++in_hits[a.row * kTile + a.col];
        ++out_hits[b.col * kTile + b.row];  // output cell (b.row, b.col) is input (b.col, b.row)
        store[tx] = 4 * smem_offset_padded(a.row, a.col);
        load[tx] = 4 * smem_offset_padded(b.col, b.row);
      }
      CHECK_EQ(shared_wavefronts(store, 32), 1);  // a row of the tile
      CHECK_EQ(shared_wavefronts(load, 32), 1);   // a column of the tile, padded
    }
  for (int h : in_hits) CHECK_EQ(h, 1);
  for (int h : out_hits) CHECK_EQ(h, 1);
}

TEST(transpose_index, tall_tile_warp_writes_whole_output_rows) {
  // Four consecutive steps of one warp cover output row ty of the tile, 128 consecutive floats.
  for (int ty = 0; ty < kBlockRows; ++ty)
    for (int i0 = 0; i0 < kTallSteps; i0 += kTallRows / kTile) {
      std::vector<int> cols;
      for (int i = i0; i < i0 + kTallRows / kTile; ++i)
        for (int tx = 0; tx < 32; ++tx) {
          CHECK_EQ(tall_out_cell(tx, ty, i).row, tall_out_cell(0, ty, i0).row);
          cols.push_back(tall_out_cell(tx, ty, i).col);
        }
      for (int c = 0; c < kTallRows; ++c) CHECK_EQ(cols[c], c);
    }
}
