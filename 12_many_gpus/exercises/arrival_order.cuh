// Chapter 12's exercise, ex_arrival_order: the order in which step 5's GEMM takes C's row blocks,
// and what each block waits for. Yours to write; `meson test -C build --suite exercises` checks
// it (exercises/check.cpp: no GPU needed), and SKIPs it until kWritten is true.
//
// Rank r of G holds shard r of A's rows: rows [r S, r S + S), S = shard_rows(M, G). Step 5
// pulls the other shards in `pieces` pieces each (piece_rows(S, pieces, p): rows of the
// shard), in this order, one after another: piece 0 of shard ag_from(r, G, 1), of shard
// ag_from(r, G, 2), ..., then piece 1 of each, ... After a piece lands, its flag is set: flag
// s * pieces + p for piece p of shard s. Return one BlockWait per 128-row block of C (block m:
// rows [128 m, 128 m + 128), clipped to M), in the order the GEMM should take them:
//   - a block whose rows all lie in the own shard waits for nothing: first = last = -1, and
//     goes first (its rows are here at the start);
//   - any other block waits for the flags [first, last] of the pieces its rows touch (the
//     flags of consecutive rows are consecutive);
//   - the blocks in the order their last piece lands (rank: when that is; blocks that become
//     ready together in row order).
// many_gpus.cuh has the helpers (shard_rows, piece_rows, ag_from) and BlockWait.
#pragma once

#include <vector>

#include "12_many_gpus/many_gpus.cuh"

namespace exercise {

constexpr bool kWritten = false;  // true once ex_arrival_order below is yours

inline std::vector<BlockWait> ex_arrival_order(int64_t M, int G, int r, int pieces) {
  (void)M, (void)G, (void)r, (void)pieces;
  return {};
}

}  // namespace exercise
