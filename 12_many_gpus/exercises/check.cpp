// Chapter 12's exercise, checked on the host (no GPU): ex_arrival_order against the rules of
// arrival_order (many_gpus.cuh), for M, G = 1 .. 8, every rank and 1, 2, 3, 8 pieces. Exit 77
// while it is not written, 1 with one line naming the first broken rule, 0 when it holds.
// Which body: the reader's (exercises/arrival_order.cuh), the reference solution
// (-DEXERCISE_SOLUTIONS, -Dexercise_solutions=true) or the deliberately wrong one
// (-DEXERCISE_WRONG, tests/meson.build: must fail).
#include <cstdio>
#include <vector>

#if defined(EXERCISE_WRONG)
#include "12_many_gpus/exercises/wrong/arrival_order.cuh"
#elif defined(EXERCISE_SOLUTIONS)
#include "12_many_gpus/exercises/solutions/arrival_order.cuh"
#else
#include "12_many_gpus/exercises/arrival_order.cuh"
#endif

namespace {

int fail(const char* rule, int64_t M, int G, int r, int pieces, int m) {
  std::printf("FAIL: ex_arrival_order(M = %lld, G = %d, r = %d, pieces = %d), block %d: %s\n",
              static_cast<long long>(M), G, r, pieces, m, rule);
  return 1;
}

}  // namespace

int main() {
  if (!exercise::kWritten) {
    std::printf("ex_arrival_order: not written yet (12_many_gpus/exercises/arrival_order.cuh; "
                "set kWritten = true when it is)\n");
    return 77;
  }
  const int64_t kMs[] = {1, 5, 100, 127, 128, 129, 1000, 1027, 4097, 8192, 16384};
  int checked = 0;
  for (int64_t M : kMs)
    for (int G = 1; G <= 8; ++G)
      for (int pieces : {1, 2, 3, 8})
        for (int r = 0; r < G; ++r) {
          const std::vector<BlockWait> want = arrival_order(M, G, r, pieces);  // by block
          std::vector<int> want_at(want.size(), -1);
          for (size_t i = 0; i < want.size(); ++i) want_at[size_t(want[i].m)] = int(i);
          const std::vector<BlockWait> got = exercise::ex_arrival_order(M, G, r, pieces);
          if (got.size() != want.size())
            return fail("not one entry per 128-row block of C", M, G, r, pieces, -1);
          std::vector<int> seen(want.size(), 0);
          int last_rank = -2;
          for (const BlockWait& b : got) {
            if (b.m < 0 || b.m >= int(want.size()) || seen[size_t(b.m)]++)
              return fail("a block missing, repeated or out of range", M, G, r, pieces, b.m);
            const BlockWait& w = want[size_t(want_at[size_t(b.m)])];
            if (w.first < 0 && (b.first != -1 || b.last != -1))
              return fail("its rows are all in the own shard: it waits for nothing (-1, -1)",
                          M, G, r, pieces, b.m);
            if (w.first >= 0 && (b.first != w.first || b.last != w.last))
              return fail("it does not wait for exactly the pieces its rows touch: a tile "
                          "reading rows before they land computes with whatever is there",
                          M, G, r, pieces, b.m);
            if (w.rank < last_rank)
              return fail("the blocks are not in the order their last piece lands: the GEMM's "
                          "first tiles would wait for the last pieces while others are ready",
                          M, G, r, pieces, b.m);
            last_rank = w.rank;
          }
          ++checked;
        }
  std::printf("PASS: ex_arrival_order holds every rule in %d cases (M, G, rank, pieces)\n",
              checked);
  return 0;
}
