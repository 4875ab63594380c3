// Chapter 12's exercise with a deliberately wrong body (tests/meson.build: its check must fail):
// the solution, but a block waits only for the piece of its first row, so a block across two
// pieces may read its last rows before they land.
#pragma once

#include <algorithm>
#include <vector>

#include "12_many_gpus/many_gpus.cuh"

namespace exercise {

constexpr bool kWritten = true;

inline std::vector<BlockWait> ex_arrival_order(int64_t M, int G, int r, int pieces) {
  const int64_t S = shard_rows(M, G), own0 = r * S;
  const int tiles_m = int((M + kArrivalBlock - 1) / kArrivalBlock);
  std::vector<BlockWait> order;
  for (int m = 0; m < tiles_m; ++m) {
    const int64_t lo = m * kArrivalBlock, hi = lo + kArrivalBlock < M ? lo + kArrivalBlock : M;
    if (lo >= own0 && hi <= own0 + S) {
      order.push_back({m, -1, -1, -1});
      continue;
    }
    const int s_lo = int(lo / S), s_hi = int((hi - 1) / S);
    const int first = s_lo * pieces + piece_of(S, pieces, lo - s_lo * S);
    const int last = first;  // wrong: the piece of the block's last row is not waited for
    (void)s_hi;
    int when = 0;
    for (int f = first; f <= last; ++f) {
      const int s = f / pieces, p = f % pieces, j = (r - s + G) % G;
      when = p * G + j > when ? p * G + j : when;
    }
    order.push_back({m, first, last, when});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const BlockWait& a, const BlockWait& b) { return a.rank < b.rank; });
  return order;
}

}  // namespace exercise
