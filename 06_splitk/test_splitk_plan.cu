// Chapter 06's host tests, on the very functions the kernels and launchers call: the slices
// of K partition [0, K) into whole BK tiles, and the heuristic picks the tile and S the README
// says it does.
#include <algorithm>
#include <cstdint>

#include "shared/tensorcore/splitk.cuh"
#include "harness.h"

namespace {
// Slices s = 0..S-1 cover [0, K) in order, without gaps or overlap; every boundary below K is a
// multiple of BK; sizes differ by at most one BK tile (the last may be partial).
bool slices_partition(int K, int BK, int S) {
  int expect = 0;
  int64_t lo = INT64_MAX, hi = 0;
  for (int s = 0; s < S; ++s) {
    const KRange r = splitk_slice(K, BK, S, s);
    if (r.begin != expect || r.end < r.begin || r.end > K) return false;
    if (r.end < K && r.end % BK) return false;
    const int64_t tiles = (int64_t(r.end - r.begin) + BK - 1) / BK;
    lo = std::min(lo, tiles), hi = std::max(hi, tiles);
    expect = r.end;
  }
  return expect == K && hi - lo <= 1;
}
}  // namespace

TEST(splitk_plan, slices_partition_k) {
  const int Ks[] = {1, 2, 7, 8, 15, 16, 17, 100, 255, 256, 1000, 4099, 65536, 100003, 1000000,
                    2147483647};
  const int Ss[] = {1, 2, 3, 7, 8, 13, 64, 100, 264, 1000};
  for (int K : Ks)
    for (int BK : {8, 16, 32})
      for (int S : Ss)
        if (S <= K) CHECK(slices_partition(K, BK, S));
}

TEST(splitk_plan, more_slices_than_tiles_gives_empty_slices) {
  // K = 100, BK = 16: 7 tiles for 64 slices: 57 are empty, 7 hold one tile each.
  int empty = 0, full = 0;
  for (int s = 0; s < 64; ++s) {
    KRange r = splitk_slice(100, 16, 64, s);
    (r.begin == r.end ? empty : full)++;
  }
  CHECK_EQ(empty, 57);
  CHECK_EQ(full, 7);
}

TEST(splitk_plan, heuristic) {
  // The two SIMT tiles on an H100: 132 SMs, one block of either per SM (registers).
  const TileShape t[] = {{128, 256, 16, 1}, {128, 128, 16, 1}};
  auto plan = [&](int M, int N, int K) { return plan_splitk(M, N, K, t, 2, 132, 0); };
  SplitPlan p = plan(4096, 4096, 4096);  // 512 tiles fill the GPU: no split
  CHECK_EQ(p.tile, 0);
  CHECK_EQ(p.splits, 1);
  CHECK_EQ(p.workspace_bytes, size_t(0));
  p = plan(256, 256, 65536);  // 2 tiles, 66 slices: one full wave of 132
  CHECK_EQ(p.tile, 0);
  CHECK_EQ(p.splits, 66);
  CHECK_EQ(p.workspace_bytes, size_t(66) * 256 * 256 * 4);
  p = plan(128, 128, 131072);  // half of a 128 x 256 tile would be padding: the 128 x 128 tile
  CHECK_EQ(p.tile, 1);
  CHECK_EQ(p.splits, 132);
  p = plan(512, 512, 16384);
  CHECK_EQ(p.splits, 16);
  p = plan(64, 4096, 8192);
  CHECK_EQ(p.splits, 8);
  p = plan(64, 64, 1000);  // room for 132 slices, but K / 256 = 3 is the limit
  CHECK_EQ(p.splits, 3);
  p = plan(2048, 2048, 2048);  // 128 tiles: almost a wave already
  CHECK_EQ(p.splits, 1);
  CHECK_EQ(plan(1, 1, 1).splits, 1);
  p = plan_splitk(256, 256, 65536, t, 2, 132, 5);  // --splits 5
  CHECK_EQ(p.splits, 5);
  for (int M : {1, 64, 128, 256, 1000, 4096})
    for (int K : {1, 255, 256, 4096, 1 << 20}) {  // never more than one wave, never below 1
      p = plan(M, M, K);
      CHECK(p.splits >= 1);
      CHECK(p.splits == 1 || p.splits * p.output_tiles <= p.capacity);
      CHECK(p.splits == 1 || K / p.splits >= kMinSliceK);
    }
}

TEST(splitk_plan, heuristic_bf16_tiles) {
  // Chapter 05's tiles on an H100: 128 x 256 x 64 (one block per SM), 128 x 128 x 32 (two).
  const TileShape t[] = {{128, 256, 64, 1}, {128, 128, 32, 2}};
  SplitPlan p = plan_splitk(256, 256, 65536, t, 2, 132, 0);
  CHECK_EQ(p.tile, 0);
  CHECK_EQ(p.splits, 66);
  p = plan_splitk(128, 128, 131072, t, 2, 132, 0);
  CHECK_EQ(p.tile, 1);
  CHECK_EQ(p.splits, 264);
  CHECK_EQ(plan_splitk(4096, 4096, 4096, t, 2, 132, 0).splits, 1);
}
