// The interleaved timer's order of rounds (round_order): each round a permutation, the same in
// every process, and no launch held at one place of the round (docs/measuring.md, "The place in
// the round": in a fixed order a kernel's every run took the same place, and at a few
// microseconds a place could cost 0.4 us).
#include <vector>

#include "common/timer.h"
#include "harness.h"

TEST(timer, round_order_is_a_permutation) {
  for (int n : {1, 2, 3, 5, 6, 17})
    for (int r = 0; r < 200; ++r) {
      const std::vector<int> order = round_order(n, r);
      CHECK_EQ(static_cast<int>(order.size()), n);
      std::vector<int> seen(n, 0);
      for (int i : order)
        if (i >= 0 && i < n) ++seen[i];
      for (int i = 0; i < n; ++i) CHECK_EQ(seen[i], 1);
    }
}

TEST(timer, round_order_is_fixed) {
  for (int r : {0, 1, 7, 999}) CHECK(round_order(6, r) == round_order(6, r));
}

// Over 1000 rounds every launch takes every place, and the even places about half the time (a
// state that flips at every flush sorts runs by the parity of their place).
TEST(timer, round_order_spreads_places) {
  const int rounds = 1000;
  for (int n : {2, 3, 4, 6}) {
    std::vector<std::vector<int>> at(n, std::vector<int>(n, 0));  // at[launch][place]
    for (int r = 0; r < rounds; ++r) {
      const std::vector<int> order = round_order(n, r);
      for (int place = 0; place < n; ++place) ++at[order[place]][place];
    }
    for (int i = 0; i < n; ++i) {
      int even = 0;
      for (int place = 0; place < n; ++place) {
        CHECK(at[i][place] > rounds / n * 7 / 10 && at[i][place] < rounds / n * 13 / 10);
        if (place % 2 == 0) even += at[i][place];
      }
      const int expect = rounds * ((n + 1) / 2) / n;
      CHECK(even > expect - rounds / 10 && even < expect + rounds / 10);
    }
  }
}
