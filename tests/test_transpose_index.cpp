// Chapter 02's index functions, the very ones the kernels call (transpose_step, the layouts'
// offset functions, tile_cell, tall_in_cell, tall_out_cell): the bank-conflict counts of the
// three shared-memory tile layouts as transpose_tiled_kernel's warps access them, the swizzle
// is a permutation, the kernel's arithmetic run over whole grids of blocks on the host
// transposes every shape, and the global-memory sectors per warp the README quotes.
#include <cstdint>
#include <vector>

#include "02_transpose_copy/transpose.cuh"
#include "common/access_model.h"
#include "harness.h"

namespace {

struct Shape2 {
  int rows, cols;
};
// Several blocks in both directions, non-square, partial tiles on both edges: a kernel that
// swapped bx and by, or rows and cols, would not pass.
const Shape2 kOddShapes[] = {{1, 1}, {1, 1000}, {1000, 1}, {31, 33}, {33, 31}, {97, 101},
                             {64, 96}, {70, 200}, {200, 70}};

// The wavefronts of every warp-wide shared access of transpose_tiled_kernel<Layout>: warp ty,
// step i, phase 1 (store) or 2 (load), as transpose_step gives the lanes' words. Returns the
// largest count over all warps and steps; `fewest` gets the smallest.
template <class Layout>
int max_wavefronts(bool phase2, int* fewest = nullptr) {
  int most = 0, least = 1 << 30;
  for (int ty = 0; ty < kBlockRows; ++ty)
    for (int i = 0; i < kRowsPerThread; ++i) {
      uint32_t addr[32];
      for (int tx = 0; tx < 32; ++tx) {
        const TransposeStep s = transpose_step<Layout>(4096, 4096, 3, 5, tx, ty, i);
        addr[tx] = 4u * (phase2 ? s.smem_load : s.smem_store);
      }
      const int w = shared_wavefronts(addr, 32, 4);
      most = w > most ? w : most;
      least = w < least ? w : least;
    }
  if (fewest) *fewest = least;
  return most;
}

// Runs transpose_tiled_kernel<Layout> on the host: every block of its grid (tile_grid), every
// thread, both phases, with the indices transpose_step gives. The output must be the
// transpose, every output element written once, and every tile word read in phase 2 written
// in phase 1 of the same block.
template <class Layout>
bool host_transpose_is_exact(const Shape2& s) {
  std::vector<float> in(size_t(s.rows) * s.cols), out(in.size(), -1.0f);
  std::vector<int> writes(in.size(), 0);
  for (size_t e = 0; e < in.size(); ++e) in[e] = float(e);
  bool ok = true;
  for (int by = 0; by < ceil_div(s.rows, kTile); ++by)
    for (int bx = 0; bx < ceil_div(s.cols, kTile); ++bx) {
      std::vector<float> tile(Layout::kWords, -1.0f);
      for (int ty = 0; ty < kBlockRows; ++ty)  // phase 1
        for (int tx = 0; tx < kTile; ++tx)
          for (int i = 0; i < kRowsPerThread; ++i) {
            const TransposeStep st = transpose_step<Layout>(s.rows, s.cols, bx, by, tx, ty, i);
            ok = ok && st.smem_store >= 0 && st.smem_store < Layout::kWords;
            if (st.in_index >= 0 && ok) tile[st.smem_store] = in[st.in_index];
          }
      for (int ty = 0; ty < kBlockRows; ++ty)  // phase 2
        for (int tx = 0; tx < kTile; ++tx)
          for (int i = 0; i < kRowsPerThread; ++i) {
            const TransposeStep st = transpose_step<Layout>(s.rows, s.cols, bx, by, tx, ty, i);
            ok = ok && st.smem_load >= 0 && st.smem_load < Layout::kWords;
            if (st.out_index < 0 || !ok) continue;
            ok = ok && st.out_index < int(out.size()) && tile[st.smem_load] >= 0.0f;
            if (!ok) continue;  // -1: a word phase 1 never wrote
            out[st.out_index] = tile[st.smem_load];
            ++writes[st.out_index];
          }
    }
  for (int r = 0; r < s.rows && ok; ++r)
    for (int c = 0; c < s.cols; ++c)
      ok = ok && out[size_t(c) * s.rows + r] == in[size_t(r) * s.cols + c] &&
           writes[size_t(c) * s.rows + r] == 1;
  return ok;
}

}  // namespace

TEST(transpose_index, unpadded_column_read_is_a_32_way_conflict) {
  int fewest = 0;
  CHECK_EQ(max_wavefronts<SmemUnpadded>(true, &fewest), 32);
  CHECK_EQ(fewest, 32);
}

TEST(transpose_index, padded_column_read_is_conflict_free) {
  CHECK_EQ(max_wavefronts<SmemPadded>(true), 1);
}

TEST(transpose_index, swizzled_column_read_is_conflict_free) {
  CHECK_EQ(max_wavefronts<SmemSwizzled>(true), 1);
}

TEST(transpose_index, row_write_is_one_wavefront_in_every_layout) {
  CHECK_EQ(max_wavefronts<SmemUnpadded>(false), 1);
  CHECK_EQ(max_wavefronts<SmemPadded>(false), 1);
  CHECK_EQ(max_wavefronts<SmemSwizzled>(false), 1);
}

// Each tile row keeps its own 32 floats, each exactly once: no two elements collide and the
// tile fits in tile[32][32].
TEST(transpose_index, swizzle_permutes_each_row) {
  for (int r = 0; r < kTile; ++r) {
    std::vector<int> seen(kTile, 0);
    for (int c = 0; c < kTile; ++c) {
      int off = SmemSwizzled::offset(r, c);
      CHECK(off >= r * kTile && off < (r + 1) * kTile);
      if (off >= r * kTile && off < (r + 1) * kTile) ++seen[off - r * kTile];
    }
    for (int s : seen) CHECK_EQ(s, 1);
  }
}

TEST(transpose_index, tiled_transposes_run_on_the_host_are_exact) {
  for (const Shape2& s : kOddShapes) {
    CHECK(host_transpose_is_exact<SmemUnpadded>(s));
    CHECK(host_transpose_is_exact<SmemPadded>(s));
    CHECK(host_transpose_is_exact<SmemSwizzled>(s));
  }
}

// copy_tiled_kernel and transpose_naive_kernel read the input at tile_cell(bx, by, ...): the
// grid reaches every element once (bounds checks as in the kernels).
TEST(transpose_index, tiled_grid_reads_every_element_once) {
  for (const Shape2& s : kOddShapes) {
    std::vector<int> hits(size_t(s.rows) * s.cols, 0);
    for (int by = 0; by < ceil_div(s.rows, kTile); ++by)
      for (int bx = 0; bx < ceil_div(s.cols, kTile); ++bx)
        for (int ty = 0; ty < kBlockRows; ++ty)
          for (int tx = 0; tx < kTile; ++tx)
            for (int i = 0; i < kRowsPerThread; ++i) {
              const Cell g = tile_cell(bx, by, tx, ty, i);
              if (g.row < s.rows && g.col < s.cols) ++hits[size_t(g.row) * s.cols + g.col];
            }
    bool once = true;
    for (int h : hits) once = once && h == 1;
    CHECK(once);
  }
}

// Global memory, warp ty = 2 of block (bx, by) = (3, 5), step 1, for a 4096 x 2048 input:
// every read is 32 consecutive floats (4 sectors); the naive transpose's write is 32 sectors,
// the tiled transposes' write 4.
TEST(transpose_index, global_sectors_per_warp) {
  const int rows = 4096, cols = 2048;
  uint64_t read[32], naive_write[32], tiled_write[32];
  for (int lane = 0; lane < 32; ++lane) {
    const TransposeStep s = transpose_step<SmemPadded>(rows, cols, 3, 5, lane, 2, 1);
    const Cell g = tile_cell(3, 5, lane, 2, 1);
    read[lane] = 4ull * uint64_t(s.in_index);
    naive_write[lane] = 4ull * (uint64_t(g.col) * rows + g.row);  // transpose_naive_kernel
    tiled_write[lane] = 4ull * uint64_t(s.out_index);             // phase 2
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
        store[tx] = 4 * SmemPadded::offset(a.row, a.col);
        load[tx] = 4 * SmemPadded::offset(b.col, b.row);
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
