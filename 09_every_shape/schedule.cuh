// Chapter 09: every shape on any Hopper GPU. What the schedules and the shape rule compute, and
// the partial tiles' layouts, __host__ __device__ so that the host tests
// (09_every_shape/test_schedule.cpp) check the very functions the kernels call. Chapter 08's
// pieces (the swizzle, the descriptor, the accumulator map) are in shared/hopper/hopper.cuh.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "shared/hopper/hopper.cuh"

// --- Step 2's partial tiles (split_wave_kernel's fixup) ----------------------------------------
// A split tile's partial (128, BN) accumulator goes to the workspace as the two consumer
// warpgroups hold it: float4 q = 256 i + c is registers 4 i .. 4 i + 3 of consumer thread c
// (0-255; warpgroup c / 128 has rows 64 (c / 128) ..), so that a warp instruction writes 512
// contiguous bytes. Its four floats are (row, col), (row, col + 1), (row + 8, col) and
// (row + 8, col + 1) of the tile (WgmmaAcc).
struct PartialVec {
  __host__ __device__ static constexpr int row(int q) {
    return 64 * ((q % 256) / 128) + WgmmaAcc::row(q % 128, 4 * (q / 256));
  }
  __host__ __device__ static constexpr int col(int q) {
    return WgmmaAcc::col(q % 128, 4 * (q / 256));
  }
};

// --- Step 3: a menu of tiles (menu_kernel) ------------------------------------------------------
// A (BM, BN) tile, BM = 128 or 64, shared by the two consumer warpgroups: BM = 128 splits it by
// rows (warpgroup g: rows 64 g .., all BN columns), BM = 64 by columns (all 64 rows, columns
// g BN / 2 ..). Either way a warpgroup holds a (64, WN) accumulator, one wgmma m64nWNk16 a k16.
// A split tile's partial goes to the workspace as the registers hold it (PartialVec at BM = 128):
// float4 q = 256 i + c is registers 4 i .. 4 i + 3 of consumer thread c.
template <int BM, int BN>
struct MenuTile {
  static_assert(BM == 128 || BM == 64, "two warpgroups of 64 rows, or one band of 64 rows");
  static constexpr int WN = BM == 128 ? BN : BN / 2;  // a warpgroup's columns
  __host__ __device__ static constexpr int row0(int g) { return BM == 128 ? 64 * g : 0; }
  __host__ __device__ static constexpr int col0(int g) { return BM == 128 ? 0 : g * WN; }
  // Partial-tile float4 q: its (row, col); the float4 holds (row, col .. col + 1) and
  // (row + 8, col .. col + 1).
  __host__ __device__ static constexpr int vec_row(int q) {
    return row0((q % 256) / 128) + WgmmaAcc::row(q % 128, 4 * (q / 256));
  }
  __host__ __device__ static constexpr int vec_col(int q) {
    return col0((q % 256) / 128) + WgmmaAcc::col(q % 128, 4 * (q / 256));
  }
};

// Step 5: the 64-row tiles in one consumer warpgroup, which holds the whole (64, BN) tile. A
// split tile's partial goes to the workspace as the registers hold it: float4 q = 128 i + t is
// registers 4 i .. 4 i + 3 of consumer thread t, (row, col .. col + 1) and (row + 8, ..).
struct OneWgVec {
  __host__ __device__ static constexpr int row(int q) {
    return WgmmaAcc::row(q % 128, 4 * (q / 128));
  }
  __host__ __device__ static constexpr int col(int q) {
    return WgmmaAcc::col(q % 128, 4 * (q / 128));
  }
};

// --- Step 2: the last wave, split (split_wave_kernel) ------------------------------------------
// A persistent grid of G blocks (one per SM) over T output tiles of I K-tiles each (BK = 64).
// With R = T mod G, the T - R tiles of the full waves go whole, one per block per wave (block b
// takes R + b, R + b + G, ...); each of the R tiles of the last, partial wave is cut into
// S = min(G / R, I) slices of K, one slice per block, so that R S blocks share the last wave
// instead of R. The split tiles come first, so all their slices run at the same time, and the
// blocks of one tile meet in a workspace (split_wave_kernel's fixup). S < 2: nothing is split,
// and the plan is step 1's persistent grid. Slice s of a tile covers the K-tiles s, s + S,
// s + 2 S, ... (wave_unit), never empty since S <= I; slice 0 has the most, ceil(I / S).
struct WavePlan {
  int tiles = 0, k_tiles = 0;  // T, I
  int grid = 0;                // blocks: G, or fewer when there is less than a wave of work
  int split_tiles = 0;         // R: tiles 0 .. R - 1 are split (0: none)
  int splits = 1;              // S: slices, and blocks, per split tile
};
// max_splits caps S (1: never split; the shape rule also weighs the plan without a split).
__host__ __device__ constexpr WavePlan plan_wave(int tiles, int k_tiles, int sms,
                                                 int max_splits = 1 << 30) {
  WavePlan p;
  p.tiles = tiles;
  p.k_tiles = k_tiles;
  const int r = tiles % sms;
  int s = r > 0 ? (sms / r < k_tiles ? sms / r : k_tiles) : 1;
  s = s < max_splits ? s : max_splits;
  if (s >= 2) {
    p.split_tiles = r;
    p.splits = s;
    p.grid = tiles >= sms ? sms : r * s;
  } else {
    p.grid = tiles < sms ? tiles : sms;
  }
  return p;
}

// The j-th piece of work of block b: a tile and its K-tiles k_begin, k_begin + k_step, ... below
// k_end, and the slice (-1: the whole tile, stored to C directly). tile = -1: the block is done.
// Slice s of a split tile takes every S-th K-tile from s (k_step = S), not a contiguous run:
// the S blocks of a tile then read neighbouring K-tiles of the same rows at about the same time
// (measured: NOTES.md, "Strided slices").
struct WorkUnit {
  int tile, k_begin, k_end, slice;
  int k_step = 1;
};
__host__ __device__ constexpr int unit_k_tiles(const WorkUnit& u) {
  return (u.k_end - u.k_begin + u.k_step - 1) / u.k_step;
}
__host__ __device__ constexpr WorkUnit wave_unit(const WavePlan& p, int block, int j) {
  if (p.split_tiles > 0 && block < p.split_tiles * p.splits) {
    if (j == 0) {
      const int s = block % p.splits;
      return {block / p.splits, s, p.k_tiles, s, p.splits};
    }
    --j;  // the split slice came first; then the whole tiles
  }
  const int64_t tile = int64_t(p.split_tiles) + block + int64_t(j) * p.grid;
  if (tile >= p.tiles) return {-1, 0, 0, -1};
  return {int(tile), 0, p.k_tiles, -1};
}

// The K-tiles the busiest block computes: the plan's time, in K-tiles of its tile.
__host__ __device__ constexpr int64_t wave_makespan(const WavePlan& p) {
  const int64_t whole = (int64_t(p.tiles) - p.split_tiles + p.grid - 1) / p.grid;
  return whole * p.k_tiles + (p.split_tiles > 0 ? (p.k_tiles + p.splits - 1) / p.splits : 0);
}

// What is wrong with a plan, in one line, or "" when it is sound: every K-tile of every tile
// exactly once (walking wave_unit for every block), no more blocks than SMs (a cooperative
// launch needs them all resident), the split tiles the first R, each cut into exactly S
// non-empty slices, one per block, each its block's first unit. The host test runs it on
// plan_wave's plans; the exercise (exercises/split_plan.cuh) on the reader's, before launching.
inline std::string wave_plan_problem(const WavePlan& p, int tiles, int k_tiles, int sms) {
  auto say = [](const char* f, int a = 0, int b = 0, int c = 0) {
    char line[160];
    std::snprintf(line, sizeof line, f, a, b, c);
    return std::string(line);
  };
  if (p.tiles != tiles || p.k_tiles != k_tiles)
    return say("the plan is for %d tiles of %d K-tiles", p.tiles, p.k_tiles);
  if (p.grid < 1 || p.grid > sms)
    return say("grid %d: a cooperative launch holds 1 to %d blocks", p.grid, sms);
  if (p.split_tiles < 0 || p.split_tiles > tiles)
    return say("split_tiles %d of %d tiles", p.split_tiles, tiles);
  if (p.split_tiles > 0 && (p.splits < 2 || p.split_tiles * p.splits > p.grid))
    return say("%d split tiles x %d slices do not fit %d blocks", p.split_tiles, p.splits, p.grid);
  std::vector<int> seen(size_t(tiles) * k_tiles, 0), slices(tiles, 0);
  for (int b = 0; b < p.grid; ++b)
    for (int j = 0;; ++j) {
      const WorkUnit u = wave_unit(p, b, j);
      if (u.tile < 0) break;
      if (u.slice >= 0 && (u.tile >= p.split_tiles || j != 0))
        return say("block %d unit %d: a slice of tile %d, which is not split", b, j, u.tile);
      if (u.k_begin >= u.k_end)
        return say("block %d: slice %d of tile %d has no K-tile", b, u.slice, u.tile);
      if (u.slice >= 0) ++slices[u.tile];
      for (int k = u.k_begin; k < u.k_end; k += u.k_step)
        if (seen[size_t(u.tile) * k_tiles + k]++)
          return say("tile %d, K-tile %d: computed twice (block %d)", u.tile, k, b);
    }
  for (int t = 0; t < tiles; ++t) {
    if (t < p.split_tiles && slices[t] != p.splits)
      return say("tile %d: %d slices run, the plan says %d", t, slices[t], p.splits);
    for (int k = 0; k < k_tiles; ++k)
      if (!seen[size_t(t) * k_tiles + k])
        return say("tile %d, K-tile %d: computed by no block", t, k);
  }
  return "";
}

// --- Stream-K (09_every_shape/experiments/stream_k.cuh)
// ------------------------------------------------------ All T I K-tiles of the output tiles, in
// order (tile by tile), dealt to G blocks as evenly as integers allow: block b takes [b T I / G, (b
// + 1) T I / G). A range cuts at most two tiles: it may begin inside one (a later part of that
// tile: it goes to the workspace, slot b) and end inside another (the tile's first K-tiles: this
// block owns the tile; it adds the later blocks' parts in K order, then stores the tile). Units in
// between are whole tiles.
struct StreamKPlan {
  int tiles = 0, k_tiles = 0, grid = 0;
  int64_t total = 0;  // T I
};
__host__ __device__ constexpr StreamKPlan plan_stream_k(int tiles, int k_tiles, int sms) {
  StreamKPlan p;
  p.tiles = tiles;
  p.k_tiles = k_tiles;
  p.total = int64_t(tiles) * k_tiles;
  p.grid = p.total < sms ? int(p.total) : sms;
  return p;
}
__host__ __device__ constexpr int64_t sk_begin(const StreamKPlan& p, int block) {
  return int64_t(block) * p.total / p.grid;
}
// The block whose range holds K-tile x of the whole order: the last b with sk_begin(b) <= x.
__host__ __device__ constexpr int sk_block_of(const StreamKPlan& p, int64_t x) {
  return int(((x + 1) * p.grid - 1) / p.total);
}
// The j-th unit of block b; slice = b for a later part of a tile (its workspace slot), -1 for a
// part that starts at k = 0 (a whole tile, or the owner's first part).
__host__ __device__ constexpr WorkUnit sk_unit(const StreamKPlan& p, int block, int j) {
  const int64_t begin = sk_begin(p, block), end = sk_begin(p, block + 1);
  const int64_t tile = begin / p.k_tiles + j, t0 = tile * p.k_tiles;
  const int64_t lo = begin > t0 ? begin : t0;
  const int64_t hi = end < t0 + p.k_tiles ? end : t0 + p.k_tiles;
  if (lo >= hi) return {-1, 0, 0, -1};
  return {int(tile), int(lo - t0), int(hi - t0), lo == t0 ? -1 : block};
}

// --- The answer's shape rule (hopper, step 6) ---------------------------------------------------
// hopper ranks each pair of a tile from the menu (kMenu) and a schedule (whole tiles; the last
// wave split, plan_wave) by a predicted time in microseconds, then times the few best on the
// first call of a shape and keeps the fastest (tuned_hopper, steps/6_hopper.cuh). The
// prediction, for the GPU at hand (HopperGpu, read from its device properties):
//   the busiest block's K-tiles (wave_makespan) x the tile's K-tile time, scaled by the SM clock
//   (kMenu's times were measured at kMenuClockMhz) and by the share of the SMs at work (a K-tile
//   is cheaper when fewer blocks share the L2: 1 - kLoadShare + kLoadShare x grid / SMs), plus
//   kTileUs for each whole tile the busiest block stores;
//   never less than the bytes of A, B and C at kDramShare of the DRAM's theoretical bandwidth
//   (the DRAM bound: long K, small M);
//   plus kSplitUsPerMiB for each MiB of partial tiles where the last wave is split (the fixup).
// The K-tile times are each tile's time at 8192^3 over its K-tiles (128 x 128: at 4096^3, step
// 2's split_wave128), on an H100 SXM; kLoadShare, kTileUs and kSplitUsPerMiB are fitted to a
// sweep of the menu there, whole and split, over 23 shapes (tools/fit_menu.py, NOTES.md).
struct HopperGpu {
  int sms;                   // multiprocessors
  double clock_mhz;          // SM clock
  double dram_bytes_per_us;  // the DRAM's theoretical peak: 2 x memory clock x bus width / 8
};
struct MenuEntry {
  int BM, BN;
  double k_tile_us;  // one K-tile of this tile at 8192^3, every SM at work, at kMenuClockMhz
};
constexpr MenuEntry kMenu[] = {
    {128, 256, 0.7095}, {128, 192, 0.6102}, {128, 144, 0.5123},
    {64, 128, 0.3295},  {64, 64, 0.2248},   {128, 128, 0.4426},
};
constexpr int kMenuSize = sizeof(kMenu) / sizeof(kMenu[0]);
constexpr double kMenuClockMhz = 1980;
constexpr double kLoadShare = 0.5, kTileUs = 1.0, kSplitUsPerMiB = 1.5;
// The share of the theoretical DRAM bandwidth the loads reach: the fit on the H100 found 3.0 of
// its 3.35 TB/s (0.90); the ceiling program (tools/ceilings) copies 4,270 GB/s of the H200's
// 4,814 (0.89).
constexpr double kDramShare = 0.9;
enum class Schedule { kWhole, kSplitWave };
struct HopperChoice {
  int tile;  // index into kMenu
  Schedule schedule;
};
constexpr double hopper_cost(int M, int N, int K, const HopperGpu& gpu, const MenuEntry& t,
                             Schedule s) {
  const int tiles = ((M + t.BM - 1) / t.BM) * ((N + t.BN - 1) / t.BN), k_tiles = (K + 63) / 64;
  const WavePlan p = plan_wave(tiles, k_tiles, gpu.sms, s == Schedule::kWhole ? 1 : 1 << 30);
  if (s == Schedule::kSplitWave && p.split_tiles == 0) return 1e300;  // kWhole by another name
  const int64_t whole = (int64_t(tiles) - p.split_tiles + p.grid - 1) / p.grid;
  const double load = 1.0 - kLoadShare + kLoadShare * p.grid / gpu.sms;
  const double k_tile_us = t.k_tile_us * kMenuClockMhz / gpu.clock_mhz;
  const double compute = double(wave_makespan(p)) * k_tile_us * load + double(whole) * kTileUs;
  const double dram =
      ((double(M) + N) * K * 2 + double(M) * N * 4) / (kDramShare * gpu.dram_bytes_per_us);
  const double split_mib = double(p.split_tiles) * p.splits * t.BM * t.BN * 4 / (1 << 20);
  return (compute > dram ? compute : dram) + kSplitUsPerMiB * split_mib;
}

// The pairs worth timing: every pair predicted within kTuneWithin of the best, fastest first,
// at most kTuneMax. out[0] is the rule's own pick; returns how many.
constexpr double kTuneWithin = 1.6;
constexpr int kTuneMax = 6;
constexpr int hopper_candidates(int M, int N, int K, const HopperGpu& gpu,
                                HopperChoice (&out)[kTuneMax]) {
  HopperChoice all[2 * kMenuSize] = {};
  double cost[2 * kMenuSize] = {};
  int n = 0;
  for (int i = 0; i < kMenuSize; ++i)
    for (Schedule s : {Schedule::kWhole, Schedule::kSplitWave}) {
      const double c = hopper_cost(M, N, K, gpu, kMenu[i], s);
      if (c >= 1e300) continue;
      int j = n++;  // insertion sort by predicted time; ties keep the menu's order
      for (; j > 0 && cost[j - 1] > c; --j) all[j] = all[j - 1], cost[j] = cost[j - 1];
      all[j] = {i, s};
      cost[j] = c;
    }
  int kept = 0;
  for (int j = 0; j < n && kept < kTuneMax && cost[j] <= kTuneWithin * cost[0]; ++j)
    out[kept++] = all[j];
  return kept;
}
constexpr HopperChoice choose_hopper(int M, int N, int K, const HopperGpu& gpu) {
  HopperChoice out[kTuneMax] = {};
  hopper_candidates(M, N, K, gpu, out);
  return out[0];
}

// --- Launchers -----------------------------------------------------------------------------------
// Defined in the step files (steps/, in reading order) and the experiments, all compiled once by
// 09_every_shape/kernels.cu. Each copies rows that are not 16-byte aligned into padded operands
// first (pad_operands_if_unaligned): TMA's row stride must be a multiple of 16 bytes.
void launch_tile128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);        // 1
void launch_split_wave(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 2
void launch_split_wave128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);  // 2
void launch_m128x192(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);       // 3
void launch_m128x144(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);       // 3
void launch_m64x128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);        // 3
void launch_m64x64(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);         // 3
void launch_acc2_64x128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);    // 4
void launch_acc2_64x64(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 4
void launch_wg1_64x128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 5
void launch_wg1_64x64(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);      // 5
void launch_hopper(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);         // 6
// Step 5's 64 x 128 tile on a given plan (the exercise's).
void launch_wg1_64x128_on_plan(const WavePlan& plan, int M, int N, int K, const bf16* A,
                               const bf16* Bt, float* C);
// The exercise (exercises/split_plan.cuh, or its solution): wg1_64x128 on the reader's plan.
void launch_ex_split_plan(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
// Stream-K (experiments/stream_k.cuh, --kernel sweep): every K-tile of every tile dealt evenly.
void launch_stream_k(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_stream_k128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
