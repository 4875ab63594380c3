// Chapter 10, step 10's schedule: the last wave's tiles split in K over as many rounds as it
// takes. __host__ __device__, so that the host test (test_epilogue.cpp) checks the very functions
// the kernel calls.
//
// Chapter 09's plan_wave cuts the R = T mod G tiles of the last, partial wave into S = G / R
// slices, one a block, and splits nothing where R > G / 2 (S < 2). At 4096 x 2112 the 128 x 192
// tiles are T = 352 on G = 132 SMs: two full waves and R = 88, so the third wave keeps 88 SMs busy
// for a whole tile while 44 wait (3 tiles of time for 2.67 of work), and plan_wave leaves it so.
// plan_rounds cuts the R tiles into S slices of K each, Q = G / S tiles a round (Q S blocks at
// once), over ceil(R / Q) rounds: at 4096 x 2112, thirds, 44 tiles a round, two rounds of a third
// of a tile each (2.67 tiles of time). Each slice ends by writing its FP32 partial tile and the
// last of a tile's slices reads the others (step 10's fixup): about S partial tiles of traffic a
// round for the busiest block, counted in K tiles of operand bytes (fixup_k_tiles: a 128 x 192
// partial, 96 KiB, is 2.4 K tiles of 40 KiB). S is the one that makes rounds_cost least, the
// smaller on a tie; no split where none costs less than the last wave's whole tiles.
#pragma once

#include <cstdint>

#include "09_every_shape/schedule.cuh"  // WorkUnit (a tile, its K tiles, its slice)

struct RoundsPlan {
  int tiles = 0, k_tiles = 0;  // T, I
  int grid = 0;                // blocks: G, or fewer where there is less than a wave of work
  int split_tiles = 0;         // R: tiles 0 .. R - 1 are split (0: none)
  int splits = 1;              // S: slices per split tile
  int per_round = 0;           // Q: split tiles a round
};

__host__ __device__ constexpr int rounds_count(const RoundsPlan& p) {
  return p.split_tiles > 0 ? (p.split_tiles + p.per_round - 1) / p.per_round : 0;
}
// The K tiles the busiest block computes: its whole tiles, then a slice a round.
__host__ __device__ constexpr int64_t rounds_makespan(const RoundsPlan& p) {
  const int64_t whole = (int64_t(p.tiles) - p.split_tiles + p.grid - 1) / p.grid;
  return whole * p.k_tiles + int64_t(rounds_count(p)) * ((p.k_tiles + p.splits - 1) / p.splits);
}

// The makespan with the fixups: each round, S partial tiles of fixup_k_tiles K tiles each.
__host__ __device__ constexpr double rounds_cost(const RoundsPlan& p, double fixup_k_tiles) {
  return double(rounds_makespan(p)) + rounds_count(p) * p.splits * fixup_k_tiles;
}

__host__ __device__ constexpr RoundsPlan plan_rounds(int tiles, int k_tiles, int sms,
                                                     double fixup_k_tiles) {
  RoundsPlan best;  // no split: one tile a block a wave
  best.tiles = tiles;
  best.k_tiles = k_tiles;
  best.grid = tiles < sms ? tiles : sms;
  const int r = tiles % sms;  // the last wave's tiles (all of them, below one wave)
  if (r == 0) return best;
  double best_cost = rounds_cost(best, fixup_k_tiles);
  for (int s = 2; s <= sms && s <= k_tiles; ++s) {
    RoundsPlan p = best;
    p.split_tiles = r;
    p.splits = s;
    p.per_round = sms / s;
    p.grid = tiles >= sms ? sms : (r < p.per_round ? r : p.per_round) * s;
    const double cost = rounds_cost(p, fixup_k_tiles);
    if (cost < best_cost) best = p, best_cost = cost;
  }
  return best;
}

// Block b's slice in round `round`: tile round Q + b / S, slice b % S, which takes every S-th K
// tile from its own index (as wave_unit's slices); tile -1 where the block has none this round.
__host__ __device__ constexpr WorkUnit rounds_slice(const RoundsPlan& p, int block, int round) {
  const int first = round * p.per_round;
  const int n = p.split_tiles - first < p.per_round ? p.split_tiles - first : p.per_round;
  if (block >= n * p.splits) return {-1, 0, 0, -1};
  const int s = block % p.splits;
  return {first + block / p.splits, s, p.k_tiles, s, p.splits};
}
// After its slices, block b takes the whole tiles R + b, R + b + G, ...
