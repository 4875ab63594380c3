// Chapter 01's thread -> element mappings: each covers C exactly once, and the memory model
// gives the transaction counts the README quotes.
#include <vector>

#include "01_naive/naive.cuh"
#include "common/access_model.h"
#include "harness.h"

namespace {
template <typename Map>
bool covers_every_element_once(Map map, int M, int N, bool x_over_rows) {
  std::vector<int> hits(size_t(M) * N, 0);
  int gx = ceil_div(x_over_rows ? M : N, kNaiveBlock), gy = ceil_div(x_over_rows ? N : M, kNaiveBlock);
  for (int by = 0; by < gy; ++by)
    for (int bx = 0; bx < gx; ++bx)
      for (int ty = 0; ty < kNaiveBlock; ++ty)
        for (int tx = 0; tx < kNaiveBlock; ++tx) {
          RowCol e = map(bx, by, tx, ty);
          if (e.row < M && e.col < N) ++hits[size_t(e.row) * N + e.col];
        }
  for (int h : hits)
    if (h != 1) return false;
  return true;
}

// Sectors touched by warp 0 of block (1, 1) at step k, for A's load, B's load and C's store.
struct WarpSectors {
  int a, b, c;
};
template <typename Map>
WarpSectors warp_sectors(Map map, int N, int K, int k) {
  uint64_t a[32], b[32], c[32];
  for (int lane = 0; lane < 32; ++lane) {
    RowCol e = map(1, 1, lane, 0);  // a warp: threadIdx.x = 0..31, threadIdx.y fixed
    a[lane] = 4ull * (uint64_t(e.row) * K + k);
    b[lane] = 4ull * (uint64_t(k) * N + e.col);
    c[lane] = 4ull * (uint64_t(e.row) * N + e.col);
  }
  return {global_sectors(a, 32), global_sectors(b, 32), global_sectors(c, 32)};
}
}  // namespace

TEST(naive_index, both_mappings_cover_c_exactly_once) {
  for (auto mn : {std::pair<int, int>{1, 1}, {33, 65}, {100, 7}, {64, 64}}) {
    CHECK(covers_every_element_once(naive_uncoalesced_element, mn.first, mn.second, true));
    CHECK(covers_every_element_once(naive_coalesced_element, mn.first, mn.second, false));
  }
}

TEST(naive_index, coalesced_warp_touches_few_sectors) {
  auto s = warp_sectors(naive_coalesced_element, 4096, 4096, 17);
  CHECK_EQ(s.a, 1);  // one float of A, broadcast to the warp
  CHECK_EQ(s.b, 4);  // 32 consecutive floats = 128 bytes = 4 sectors
  CHECK_EQ(s.c, 4);
}

TEST(naive_index, uncoalesced_warp_touches_a_sector_per_thread) {
  auto s = warp_sectors(naive_uncoalesced_element, 4096, 4096, 17);
  CHECK_EQ(s.a, 32);  // 32 rows of A, K floats apart
  CHECK_EQ(s.b, 1);   // every thread reads the same B element
  CHECK_EQ(s.c, 32);  // 32 rows of C, N floats apart
}
