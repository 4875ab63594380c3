// Chapter 03's index functions: the 2D micro-tiles cover the block tile once, and the warp's
// reads of the shared tiles are conflict-free.
#include <vector>

#include "03_tiled/tiled.cuh"
#include "common/access_model.h"
#include "harness.h"

namespace {
using Tile = Tile2d<128, 128, 8, 8>;  // the configuration tiled_2d runs
constexpr int kBK = 16;  // the K-slab tiled_2d runs (launch_tiled_2d)
}  // namespace

TEST(tiled_index, micro_tiles_cover_the_block_tile_once) {
  std::vector<int> hits(128 * 128, 0);
  for (int tid = 0; tid < Tile::kThreads; ++tid)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) ++hits[Tile::row(tid, i) * 128 + Tile::col(tid, j)];
  for (int h : hits) CHECK_EQ(h, 1);
}

TEST(tiled_index, inner_loop_shared_reads_are_conflict_free) {
  for (int warp = 0; warp < Tile::kThreads / 32; ++warp)
    for (int k = 0; k < kBK; ++k)
      for (int i = 0; i < 8; ++i) {
        uint32_t a[32], b[32];
        for (int lane = 0; lane < 32; ++lane) {
          int tid = warp * 32 + lane;
          a[lane] = 4 * (Tile::row(tid, i) * kBK + k);  // As[row][k], As is (BM, BK)
          b[lane] = 4 * (k * 128 + Tile::col(tid, i));  // Bs[k][col], Bs is (BK, BN)
        }
        CHECK_EQ(shared_wavefronts(a, 32), 1);  // two distinct words, different banks
        CHECK_EQ(shared_wavefronts(b, 32), 1);  // 16 consecutive words, each read twice
      }
}

TEST(tiled_index, contiguous_micro_tiles_would_conflict) {
  // The alternative the README warns about: thread (tr, tc) owning columns tc * 8 + j.
  uint32_t b[32];
  for (int lane = 0; lane < 32; ++lane) b[lane] = 4 * ((lane % 16) * 8);
  CHECK_EQ(shared_wavefronts(b, 32), 4);
}
