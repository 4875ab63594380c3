// Chapter 11, step 9: the Stream-K hybrid schedule (steps/9_stream_k.cuh), __host__ __device__
// so that the host test (test_block_scales.cpp) checks the functions the kernel calls.
//
// A persistent grid of G blocks over T output tiles of I K-tiles each. With R = T mod G > 0 and
// T >= G, the first R + G tiles (the last full wave's worth and the partial wave) are dealt by
// K-tile, as chapter 09's Stream-K experiment deals all of them (plan_stream_k, sk_unit): block b
// takes K-tiles [b (R + G) I / G, (b + 1) (R + G) I / G) of those tiles in order, between one and
// two tiles of work. The other T - R - G tiles follow whole, one a block a wave (block b takes
// R + G + b, R + G + b + G, ...). The busiest block then computes (R + G) I / G + (T - R - G) I / G
// K-tiles, T I / G rounded up: no block idles in a last partial wave, and the whole tiles keep
// the grouped order of the data-parallel grid, which chapter 09's all-Stream-K grid lost (its
// blocks' tiles in flight shared no rows in L2). T < G: every tile is dealt by K-tile (the
// Stream-K plan itself). R = 0: no tile is dealt, and the plan is step 4's grid.
// A range that begins inside a tile is a later part of it (WorkUnit::slice = the block: its
// workspace slot); a range that ends inside a tile holds the tile's first part, and that block
// owns the tile: it waits for the later parts (blocks b + 1 .. hybrid_last_block), adds them
// in K order and stores the tile. A later part is always its block's first unit, so an owner
// waits only for work that began when its own range did.
// Counterparts: CUTLASS's sm90 Stream-K scheduler in its data-parallel + Stream-K mode; the
// Stream-K paper (Osama et al., arXiv 2301.03598), "two-tile Stream-K + data-parallel".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "09_every_shape/schedule.cuh"  // WorkUnit, StreamKPlan, plan_stream_k, sk_unit

struct HybridPlan {
  int tiles = 0, k_tiles = 0;  // T, I
  int grid = 0;                // blocks
  int sk_tiles = 0;            // tiles 0 .. sk_tiles - 1 dealt by K-tile (0: none)
  StreamKPlan sk;              // their Stream-K plan, on the same grid
};
__host__ __device__ constexpr HybridPlan plan_hybrid(int tiles, int k_tiles, int sms) {
  HybridPlan p;
  p.tiles = tiles;
  p.k_tiles = k_tiles;
  const int r = tiles % sms;
  p.sk_tiles = r == 0 ? 0 : (tiles < sms ? tiles : r + sms);
  if (p.sk_tiles > 0) {
    p.sk = plan_stream_k(p.sk_tiles, k_tiles, sms);
    p.grid = p.sk.grid;  // sms, or fewer where all K-tiles of all tiles are fewer
  } else {
    p.grid = tiles < sms ? tiles : sms;
  }
  return p;
}

// The units of block b's range in the dealt tiles (0, 1 or more).
__host__ __device__ constexpr int hybrid_sk_units(const HybridPlan& p, int block) {
  if (p.sk_tiles == 0) return 0;
  const int64_t begin = sk_begin(p.sk, block), end = sk_begin(p.sk, block + 1);
  return begin < end ? int((end - 1) / p.k_tiles - begin / p.k_tiles + 1) : 0;
}
// The j-th unit of block b: first its part of the dealt tiles (sk_unit), then whole tiles.
__host__ __device__ constexpr WorkUnit hybrid_unit(const HybridPlan& p, int block, int j) {
  const int dealt = hybrid_sk_units(p, block);
  if (j < dealt) return sk_unit(p.sk, block, j);
  const int64_t tile = int64_t(p.sk_tiles) + block + int64_t(j - dealt) * p.grid;
  if (tile >= p.tiles) return {-1, 0, 0, -1};
  return {int(tile), 0, p.k_tiles, -1};
}
// The block that computes the last part of dealt tile t: the owner adds blocks owner + 1 .. this.
__host__ __device__ constexpr int hybrid_last_block(const HybridPlan& p, int tile) {
  return sk_block_of(p.sk, int64_t(tile) * p.k_tiles + p.k_tiles - 1);
}
// The K-tiles the busiest block computes (the plan's time, in K-tiles of the tile).
__host__ __device__ constexpr int64_t hybrid_makespan(const HybridPlan& p) {
  const int64_t dealt = p.sk_tiles > 0 ? (p.sk.total + p.grid - 1) / p.grid : 0;
  const int64_t whole = (int64_t(p.tiles) - p.sk_tiles + p.grid - 1) / p.grid;
  return dealt + whole * p.k_tiles;
}

// What is wrong with a plan, in one line, or "" when it is sound: every K-tile of every tile
// exactly once; no more blocks than SMs (the launch is cooperative); a later part only as its
// block's first unit; each owner's later parts exactly in blocks owner + 1 .. hybrid_last_block,
// in K order; whole tiles only past the dealt ones.
inline std::string hybrid_plan_problem(const HybridPlan& p, int tiles, int k_tiles, int sms) {
  auto say = [](const char* f, long a = 0, long b = 0, long c = 0, long d = 0) {
    char line[160];
    std::snprintf(line, sizeof line, f, a, b, c, d);
    return std::string(line);
  };
  if (p.tiles != tiles || p.k_tiles != k_tiles)
    return say("the plan is for %ld tiles of %ld K-tiles", p.tiles, p.k_tiles);
  if (p.grid < 1 || p.grid > sms) return say("grid %ld: 1 to %ld blocks", p.grid, sms);
  std::vector<int> by(size_t(tiles) * k_tiles, -1);  // the block of each K-tile
  for (int b = 0; b < p.grid; ++b)
    for (int j = 0;; ++j) {
      const WorkUnit u = hybrid_unit(p, b, j);
      if (u.tile < 0) break;
      if (u.tile >= tiles || u.k_begin < 0 || u.k_begin >= u.k_end || u.k_end > k_tiles)
        return say("block %ld unit %ld: tile %ld, an empty or outside K range", b, j, u.tile);
      if ((u.slice >= 0) != (u.k_begin > 0))
        return say("block %ld unit %ld: slice %ld where the part begins elsewhere", b, j, u.slice);
      if (u.slice >= 0 && (j != 0 || u.slice != b))
        return say("block %ld: a later part as unit %ld, slot %ld", b, j, u.slice);
      if (u.tile >= p.sk_tiles && (u.k_begin != 0 || u.k_end != k_tiles))
        return say("block %ld: tile %ld is not dealt, yet cut", b, u.tile);
      for (int k = u.k_begin; k < u.k_end; ++k) {
        int& who = by[size_t(u.tile) * k_tiles + k];
        if (who >= 0) return say("tile %ld, K-tile %ld: computed twice (block %ld)", u.tile, k, b);
        who = b;
      }
    }
  for (int t = 0; t < tiles; ++t) {
    const int owner = by[size_t(t) * k_tiles];
    for (int k = 0; k < k_tiles; ++k) {
      const int b = by[size_t(t) * k_tiles + k];
      if (b < 0) return say("tile %ld, K-tile %ld: computed by no block", t, k);
      const int before = k > 0 ? by[size_t(t) * k_tiles + k - 1] : owner;
      if (b < before || b > before + 1)  // K order is block order, one block after the other
        return say("tile %ld, K-tile %ld: block %ld after block %ld", t, k, b, before);
    }
    const int last = by[size_t(t) * k_tiles + k_tiles - 1];
    if (last != owner && (t >= p.sk_tiles || hybrid_last_block(p, t) != last))
      return say("tile %ld: its last part in block %ld, the plan says another", t, last);
  }
  return "";
}
