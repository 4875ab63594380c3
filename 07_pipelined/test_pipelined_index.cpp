// Chapter 07's host tests, on the very functions the kernels call: the grouped block order is
// a permutation of the tiles, the cp.async pieces cover a stage once each with conflict-free
// 16-byte writes, the kernel's "piece p + 1 is whole swizzle periods on" shortcut holds, and the
// epilogue's staging band is read and written without bank conflicts.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "shared/tensorcore/pipelined.cuh"
#include "common/access_model.h"
#include "harness.h"

namespace {

// Every tile exactly once, for G in 1.. and grids with and without a short last group.
bool order_is_permutation(int tiles_m, int tiles_n, int G) {
  std::vector<int> seen(size_t(tiles_m) * tiles_n, 0);
  for (int b = 0; b < tiles_m * tiles_n; ++b) {
    const TileCoord t = grouped_tile(b, tiles_m, tiles_n, G);
    if (t.m < 0 || t.m >= tiles_m || t.n < 0 || t.n >= tiles_n) return false;
    if (seen[size_t(t.m) * tiles_n + t.n]++) return false;
  }
  return true;
}

// The pieces of all threads cover the (ROWS, BK) tile's 16-byte chunks once each; the shared
// offset of piece p is the offset of piece 0 plus p * kRowsPerPass * BK elements (what
// TileCopier adds instead of recomputing the swizzle); each warp's 16-byte writes take the
// ideal 4 wavefronts.
template <int ROWS, int BK, int kThreads>
bool copy_pieces_ok() {
  using Tile = SmemTile<ROWS, BK, TileLayout::kSwizzled>;
  constexpr int kPieces = ROWS * BK / 8 / kThreads, kRowsPerPass = kThreads / (BK / 8);
  std::vector<int> seen(ROWS * BK / 8, 0);
  for (int tid = 0; tid < kThreads; ++tid) {
    const CopyPiece c0 = copy_piece<BK>(tid, 0, kThreads);
    for (int p = 0; p < kPieces; ++p) {
      const CopyPiece c = copy_piece<BK>(tid, p, kThreads);
      if (c.row < 0 || c.row >= ROWS || c.k < 0 || c.k >= BK || c.k % 8) return false;
      if (seen[c.row * (BK / 8) + c.k / 8]++) return false;
      if (c.row != c0.row + p * kRowsPerPass || c.k != c0.k) return false;
      if (Tile::offset(c.row, c.k) != Tile::offset(c0.row, c0.k) + p * kRowsPerPass * BK)
        return false;
    }
  }
  for (int p = 0; p < kPieces; ++p)
    for (int w = 0; w < kThreads / 32; ++w) {
      uint32_t addr[32];
      for (int l = 0; l < 32; ++l) {
        const CopyPiece c = copy_piece<BK>(32 * w + l, p, kThreads);
        addr[l] = 2 * Tile::offset(c.row, c.k);
      }
      if (shared_wavefronts(addr, 32, 16) != ideal_wavefronts(32, 16)) return false;
    }
  return true;
}

}  // namespace

TEST(pipelined_index, grouped_order_is_a_permutation) {
  for (int tm : {1, 2, 7, 8, 9, 16, 33, 64})
    for (int tn : {1, 3, 8, 16, 17, 32})
      for (int G : {1, 2, 4, 8, 16, 100}) CHECK(order_is_permutation(tm, tn, G));
}

TEST(pipelined_index, group_one_is_row_by_row) {
  for (int b = 0; b < 7 * 5; ++b) {
    const TileCoord t = grouped_tile(b, 7, 5, 1);
    CHECK_EQ(t.m, b / 5);
    CHECK_EQ(t.n, b % 5);
  }
}

TEST(pipelined_index, groups_go_down_columns) {
  // 16 x 16 tiles, G = 8: blocks 0..7 are tile rows 0..7 of column 0, block 8 starts column 1;
  // the second group starts at tile row 8.
  for (int b = 0; b < 8; ++b) {
    CHECK_EQ(grouped_tile(b, 16, 16, 8).m, b);
    CHECK_EQ(grouped_tile(b, 16, 16, 8).n, 0);
  }
  CHECK_EQ(grouped_tile(8, 16, 16, 8).n, 1);
  CHECK_EQ(grouped_tile(8 * 16, 16, 16, 8).m, 8);
  // A short last group (tiles_m = 9, G = 8): its one row takes its columns in order.
  for (int n = 0; n < 5; ++n) CHECK_EQ(grouped_tile(8 * 5 + n, 9, 5, 8).n, n);
}

TEST(pipelined_index, copy_pieces) {
  CHECK((copy_pieces_ok<128, 64, 256>()));  // the ladder's A tile (Pipe3)
  CHECK((copy_pieces_ok<256, 64, 256>()));  // its Bᵀ tile
  CHECK((copy_pieces_ok<128, 32, 256>()));  // the BK 32 candidate
  CHECK((copy_pieces_ok<256, 32, 256>()));
  CHECK((copy_pieces_ok<128, 64, 128>()));  // the 4-warp candidate
  CHECK((copy_pieces_ok<128, 64, 512>()));  // the 16-warp experiment
  CHECK((copy_pieces_ok<256, 64, 512>()));
}

TEST(pipelined_index, epilogue_band_is_conflict_free) {
  // Step 5's band: 16 rows of WN floats, rows of kEpiRow = WN + 8. Fragment stores: lane l
  // writes (c_row(l, 2h), 8 j + c_col(l, 0)) as 8 bytes; reads: lane l reads float4
  // q = l + 32 it.
  constexpr int WN = Pipe3::WN, kRow = Pipe3::kEpiRow;
  for (int j = 0; j < WN / 8; ++j)
    for (int h = 0; h < 2; ++h) {
      uint32_t addr[32];
      for (int l = 0; l < 32; ++l)
        addr[l] = 4 * (Mma16816::c_row(l, 2 * h) * kRow + 8 * j + Mma16816::c_col(l, 0));
      CHECK_EQ(shared_wavefronts(addr, 32, 8), ideal_wavefronts(32, 8));
    }
  for (int it = 0; it < 16 * WN / 4 / 32; ++it) {
    uint32_t addr[32];
    for (int l = 0; l < 32; ++l) {
      const int q = l + 32 * it;
      addr[l] = 4 * ((q / (WN / 4)) * kRow + 4 * (q % (WN / 4)));
    }
    CHECK_EQ(shared_wavefronts(addr, 32, 16), ideal_wavefronts(32, 16));
  }
}
