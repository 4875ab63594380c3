// Chapter 11's host-side functions: the layout of the fine-grained scales (fp8_gemm.h, which
// chapter 10's harness quantises into) and step 7's partial tile in the workspace (TallVec,
// tall_vec.h).
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "10_fp8_epilogue/fp8_gemm.h"
#include "11_block_scales/hybrid.h"
#include "11_block_scales/tall_vec.h"
#include "harness.h"
#include "shared/hopper/hopper.cuh"  // WgmmaAcc

TEST(fp8_scales, blocks_cover_every_element_once) {
  CHECK_EQ(scale_blocks(1), 1);
  CHECK_EQ(scale_blocks(128), 1);
  CHECK_EQ(scale_blocks(129), 2);
  // A: one scale per (row, K block), M-major, a bijection onto 0 .. count - 1; Bᵀ: one per
  // (128 rows, K block), K-major with rows of b_scale_ld(K) (a multiple of 4): one to one, inside.
  for (int M : {1, 7, 128, 300}) {
    for (int K : {1, 128, 129, 1000}) {
      std::set<int64_t> seen;
      for (int m = 0; m < M; ++m)
        for (int kb = 0; kb < scale_blocks(K); ++kb) seen.insert(a_scale_index(m, kb, M));
      CHECK_EQ(int64_t(seen.size()), int64_t(M) * scale_blocks(K));
      CHECK_EQ(*seen.rbegin(), int64_t(M) * scale_blocks(K) - 1);
      seen.clear();
      for (int nb = 0; nb < scale_blocks(M); ++nb)
        for (int kb = 0; kb < scale_blocks(K); ++kb) seen.insert(b_scale_index(nb, kb, K));
      CHECK_EQ(int64_t(seen.size()), int64_t(scale_blocks(M)) * scale_blocks(K));
      CHECK(*seen.rbegin() < int64_t(scale_blocks(M)) * b_scale_ld(K));
      CHECK_EQ(b_scale_ld(K) % 4, 0);
    }
  }
  // The 8 rows of one fragment column of A are 8 consecutive floats: one 32-byte sector.
  CHECK_EQ(a_scale_index(9, 3, 1000) - a_scale_index(1, 3, 1000), 8);
  // Bᵀ's K blocks of one row block are adjacent (cuBLASLt's BLK128x128_32F order).
  CHECK_EQ(b_scale_index(2, 5, 4096) - b_scale_index(2, 4, 4096), 1);
}

TEST(block_scales, tall_partial_layout) {
  // TallVec (step 7): the floats of the workspace's float4 cover the (256, 128) tile once, each
  // where the accumulator map puts the register it came from (float f of float4 256 i + c is
  // register 4 (i % 16) + (f ^ 1) of slab i / 16 of consumer thread c: the pairs swapped), and
  // float4 256 i + c is float4 c, 8 (i % 16) columns right and 64 (i / 16) rows down.
  std::vector<int> seen(TallVec::kRows * TallVec::kCols, 0);
  for (int q = 0; q < TallVec::kVecs; ++q) {
    const int c = q % 256, i = q / 256;
    for (int f = 0; f < 4; ++f) {
      const int reg = 4 * (i % 16) + (f ^ 1);
      const int r = 128 * (c / 128) + 64 * (i / 16) + WgmmaAcc::row(c % 128, reg);
      const int k = WgmmaAcc::col(c % 128, reg);
      CHECK_EQ(TallVec::elem_row(q, f), r);
      CHECK_EQ(TallVec::elem_col(q, f), k);
      CHECK(r < TallVec::kRows && k < TallVec::kCols);
      if (r < TallVec::kRows && k < TallVec::kCols) ++seen[r * TallVec::kCols + k];
    }
    CHECK_EQ(TallVec::row(q), TallVec::row(c) + 64 * (i / 16));
    CHECK_EQ(TallVec::col(q), TallVec::col(c) + 8 * (i % 16));
  }
  for (int n : seen) CHECK_EQ(n, 1);
}

TEST(block_scales, hybrid_plan_covers_every_k_tile_once) {
  // plan_hybrid (step 9): every K-tile of every tile once, later parts first in their blocks,
  // owners' later parts in the blocks after them in K order; over tile counts around whole
  // waves, fewer tiles than SMs, one K-tile, and the GPUs' SM counts.
  for (int sms : {1, 7, 114, 132})
    for (int tiles : {1, 2, sms - 1, sms, sms + 1, 2 * sms - 1, 2 * sms, 3 * sms + 5, 512, 2048})
      for (int k_tiles : {1, 2, 3, 12, 64, 128}) {
        if (tiles < 1) continue;
        const HybridPlan p = plan_hybrid(tiles, k_tiles, sms);
        const std::string why = hybrid_plan_problem(p, tiles, k_tiles, sms);
        if (!why.empty())
          std::fprintf(stderr, "tiles %d, K-tiles %d, SMs %d: %s\n", tiles, k_tiles, sms,
                       why.c_str());
        CHECK(why.empty());
        // Dealt where the tiles are no whole number of waves, and then never slower than the
        // whole-tile grid; never more than the work's share rounded up, plus a tile's K-tiles
        // where the plan deals nothing.
        CHECK_EQ(p.sk_tiles > 0, tiles % sms != 0);
        const int64_t whole = int64_t((tiles + sms - 1) / sms) * k_tiles;
        const int64_t share = (int64_t(tiles) * k_tiles + p.grid - 1) / p.grid;
        CHECK(hybrid_makespan(p) <= whole);
        CHECK(hybrid_makespan(p) <= share + 1);
      }
  // The README's 8192^3: 2,048 tiles of 256 x 128 and 64 K-tiles on 132 SMs: 200 tiles dealt
  // (97 K-tiles the busiest block), 14 waves whole: 993 K-tiles against 16 tiles' 1,024.
  const HybridPlan p = plan_hybrid(2048, 64, 132);
  CHECK_EQ(p.sk_tiles, 200);
  CHECK_EQ(p.grid, 132);
  CHECK_EQ(hybrid_makespan(p), 993);
}

TEST(block_scales, hybrid_plan_problem_names_what_is_wrong) {
  HybridPlan p = plan_hybrid(300, 8, 132);
  CHECK(hybrid_plan_problem(p, 300, 8, 132).empty());
  CHECK(!hybrid_plan_problem(p, 301, 8, 132).empty());  // another shape
  HybridPlan q = p;
  q.grid = 133;  // more blocks than SMs
  CHECK(!hybrid_plan_problem(q, 300, 8, 132).empty());
  q = p;
  q.sk_tiles = p.sk_tiles - 1;  // a tile dealt that the whole tiles also take
  CHECK(!hybrid_plan_problem(q, 300, 8, 132).empty());
}
