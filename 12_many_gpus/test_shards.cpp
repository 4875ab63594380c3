// Chapter 12's host tests, on the functions the program calls (many_gpus.cuh): the row shards
// and their padding, the column and K slices, the pieces of a shard, and the order of the
// exchange, for G = 1 .. 8 and odd sizes.

#include <cstdint>
#include <vector>

#include "12_many_gpus/many_gpus.cuh"
#include "harness.h"

namespace {
const int64_t kTotals[] = {1, 2, 5, 7, 63, 64, 65, 127, 1000, 1023, 4097, 8192, 28672, 100003};
const int64_t kUnits[] = {1, 8, 64};
}  // namespace

// split_range: contiguous, in order, exactly [0, total); every boundary but the end a multiple
// of the unit; the parts' unit counts differ by at most one, larger first.
TEST(many_gpus, split_range_covers_in_order) {
  for (int64_t total : kTotals)
    for (int64_t unit : kUnits)
      for (int parts = 1; parts <= 8; ++parts) {
        int64_t at = 0, most = 0, least = INT64_MAX;
        for (int p = 0; p < parts; ++p) {
          const Range r = split_range(total, parts, unit, p);
          CHECK_EQ(r.begin, at);
          CHECK(r.end >= r.begin);
          CHECK(r.begin % unit == 0 || r.begin == total);
          CHECK(r.end % unit == 0 || r.end == total);
          const int64_t units = (r.size() + unit - 1) / unit;
          most = units > most ? units : most;
          least = units < least ? units : least;
          at = r.end;
        }
        CHECK_EQ(at, total);
        CHECK(most - least <= 1);
      }
}

// Row shards: S a multiple of 8, G S >= M > (G - 1) S - 8 G (the padding under one shard plus
// the alignment), the real rows of the shards exactly [0, M) in rank order.
TEST(many_gpus, shards_pad_m) {
  for (int64_t M : kTotals)
    for (int G = 1; G <= 8; ++G) {
      const int64_t S = shard_rows(M, G);
      CHECK(S % kShardAlign == 0);
      CHECK(G * S >= M);
      CHECK(G * S - M < S + G * kShardAlign);
      int64_t at = 0;
      for (int s = 0; s < G; ++s) {
        const Range r = shard_real_rows(M, G, s);
        CHECK_EQ(r.begin, at);
        CHECK(r.size() <= S);
        CHECK(r.size() == S || r.end == M);  // only the last shards hold padding
        at = r.end;
      }
      CHECK_EQ(at, M);
    }
  CHECK_EQ(shard_rows(8192, 4), int64_t(2048));  // the timing shapes: no padding
  CHECK_EQ(shard_rows(16384, 2), int64_t(8192));
  CHECK_EQ(shard_rows(1000, 3), int64_t(336));   // 1008 rows: 8 of padding in the last shard
}

// Column and K slices: every column and every K index on exactly one rank, in units of 64.
TEST(many_gpus, column_and_k_slices) {
  for (int64_t n : kTotals)
    for (int G = 1; G <= 8; ++G) {
      int64_t cols = 0, ks = 0;
      for (int r = 0; r < G; ++r) {
        const Range c = column_slice(n, G, r), k = k_slice(n, G, r);
        CHECK_EQ(c.begin, cols);
        CHECK_EQ(k.begin, ks);
        CHECK(c.begin % kNUnit == 0 || c.begin == n);
        CHECK(k.begin % kKUnit == 0 || k.begin == n);
        cols = c.end, ks = k.end;
      }
      CHECK_EQ(cols, n);
      CHECK_EQ(ks, n);
    }
  CHECK_EQ(column_slice(28672, 4, 3).size(), int64_t(7168));
  CHECK_EQ(k_slice(28672, 4, 0).size(), int64_t(7168));
}

// Pieces of a shard, clipped to a shard's real rows as the launches clip them: every real row
// of every shard in exactly one piece, each piece's first row a multiple of 64 within the shard.
TEST(many_gpus, pieces_cover_real_rows) {
  for (int64_t M : kTotals)
    for (int G = 1; G <= 8; ++G)
      for (int pieces : {1, 2, 3, 4, 7, 64}) {
        const int64_t S = shard_rows(M, G);
        std::vector<int> seen(size_t(M), 0);
        for (int s = 0; s < G; ++s) {
          const Range real = shard_real_rows(M, G, s);
          for (int p = 0; p < pieces; ++p) {
            const Range piece = piece_rows(S, pieces, p);
            CHECK(piece.begin % kPieceUnit == 0 || piece.begin == S);
            const int64_t end = piece.end < real.size() ? piece.end : real.size();
            for (int64_t i = piece.begin; i < end; ++i) ++seen[size_t(real.begin + i)];
          }
        }
        bool once = true;
        for (int v : seen) once = once && v == 1;
        CHECK(once);
      }
}

// The exchange: at each step every rank sends to one rank and receives from one, the pairs
// match (r sends to t exactly when t receives from r), and over the G - 1 steps every rank
// receives every other rank's shard exactly once; step 0 is the rank itself. Step 4 indexes
// its stage slots, events and flags by the step j on both sides, which needs the same pairing.
TEST(many_gpus, exchange_order) {
  for (int G = 1; G <= 8; ++G) {
    for (int r = 0; r < G; ++r) {
      CHECK_EQ(ag_to(r, G, 0), r);
      CHECK_EQ(ag_from(r, G, 0), r);
      std::vector<int> got(size_t(G), 0);
      got[size_t(r)] = 1;
      for (int j = 1; j < G; ++j) {
        const int to = ag_to(r, G, j), from = ag_from(r, G, j);
        CHECK(to != r && from != r);
        CHECK_EQ(ag_from(to, G, j), r);   // the receiver at step j expects r
        CHECK_EQ(ag_to(from, G, j), r);   // the sender at step j sends to r
        CHECK_EQ(rs_to(r, G, j), to);
        CHECK_EQ(rs_from(r, G, j), from);
        CHECK_EQ(rs_from(rs_to(r, G, j), G, j), r);  // step 4: slot j's puller reads r's slot j
        ++got[size_t(from)];
      }
      bool once = true;
      for (int v : got) once = once && v == 1;
      CHECK(once);
    }
  }
}

// Step 5's order of row blocks: every 128-row block of C exactly once; the own shard's blocks
// (no flags) first; every other block's flags exactly the pieces of the rows it holds (the
// first and the last row's pieces, every flag between them a piece of a shard it touches);
// the blocks in the order of their last piece's arrival.
TEST(many_gpus, arrival_order) {
  const int64_t kMs[] = {1, 5, 100, 127, 128, 129, 1000, 1027, 4097, 8192};
  for (int64_t M : kMs)
    for (int G = 1; G <= 8; ++G)
      for (int pieces : {1, 2, 3, 8})
        for (int r = 0; r < G; ++r) {
          const int64_t S = shard_rows(M, G);
          const std::vector<BlockWait> order = arrival_order(M, G, r, pieces);
          const int tiles_m = int((M + kArrivalBlock - 1) / kArrivalBlock);
          CHECK_EQ(int(order.size()), tiles_m);
          std::vector<int> seen(size_t(tiles_m), 0);
          int last_rank = -2;
          for (const BlockWait& b : order) {
            CHECK(b.m >= 0 && b.m < tiles_m);
            ++seen[size_t(b.m)];
            CHECK(b.rank >= last_rank);
            last_rank = b.rank;
            const int64_t lo = b.m * kArrivalBlock, hi = std::min(lo + kArrivalBlock, M);
            const bool own = lo >= r * S && hi <= r * S + S;
            CHECK_EQ(b.first < 0, own);
            if (own) continue;
            CHECK(b.first <= b.last && b.last < G * pieces);
            // The first and last rows lie in the first and last flags' pieces.
            for (int64_t row : {lo, hi - 1}) {
              const int f = row == lo ? b.first : b.last;
              const int s = f / pieces, p = f % pieces;
              const Range piece = piece_rows(S, pieces, p);
              CHECK(row >= s * S + piece.begin && row < s * S + piece.end);
            }
          }
          bool once = true;
          for (int v : seen) once = once && v == 1;
          CHECK(once);
        }
}
