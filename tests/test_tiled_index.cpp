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
          a[lane] = 4 * Tile::a_word<kBK>(tid, i, k);  // the kernel's own As word
          b[lane] = 4 * Tile::b_word(tid, i, k);       // and Bs word
          CHECK(Tile::a_word<kBK>(tid, i, k) < 128 * kBK && Tile::b_word(tid, i, k) < kBK * 128);
        }
        CHECK_EQ(shared_wavefronts(a, 32), 1);  // two distinct words, different banks
        CHECK_EQ(shared_wavefronts(b, 32), 1);  // 16 consecutive words, each read twice
      }
}

// The words a thread reads over the K-slab are exactly its micro-tile's rows of As and
// columns of Bs: word / BK is row(tid, i) and word % BK is k, and likewise for Bs.
TEST(tiled_index, shared_words_are_the_micro_tile) {
  for (int tid = 0; tid < Tile::kThreads; tid += 7)
    for (int k = 0; k < kBK; ++k)
      for (int i = 0; i < 8; ++i) {
        CHECK_EQ(Tile::a_word<kBK>(tid, i, k) / kBK, Tile::row(tid, i));
        CHECK_EQ(Tile::a_word<kBK>(tid, i, k) % kBK, k);
        CHECK_EQ(Tile::b_word(tid, i, k) / 128, k);
        CHECK_EQ(Tile::b_word(tid, i, k) % 128, Tile::col(tid, i));
      }
}

TEST(tiled_index, contiguous_micro_tiles_would_conflict) {
  // The alternative the README warns about: thread (tr, tc) owning columns tc * 8 + j.
  uint32_t b[32];
  for (int lane = 0; lane < 32; ++lane) b[lane] = 4 * ((lane % 16) * 8);
  CHECK_EQ(shared_wavefronts(b, 32), 4);
}
