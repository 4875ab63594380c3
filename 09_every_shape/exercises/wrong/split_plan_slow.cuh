// Exercise (chapter 09), A CORRECT BUT SLOW BODY (tests/meson.build: its verdict must fail):
// it splits the last wave only when the tiles make less than one wave, so at 1536^3 (288 tiles
// of 64 x 128: two full waves and 24 tiles) the last wave runs 24 blocks on 132 SMs.
//
// Step 5's wg1_64x128 (64 x 128 tiles, one consumer warpgroup, step 2's fixup) on a plan you
// write. ex_plan_wave decides, for `tiles` output tiles of `k_tiles` K-tiles each on `sms` SMs,
// how many blocks run (p.grid), how many tiles are split (the first p.split_tiles) and into how
// many slices of K (p.splits). wave_unit (09_every_shape/schedule.cuh) then deals the work: the
// slices first, one per block (slice s takes K-tiles s, s + S, ...), then the whole tiles.
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_SPLIT_PLAN` below.
//   2. Write the marked part of ex_plan_wave.
//   3. meson test -C build --suite exercises       # correct at every test shape? then its speed
//      ./build/09_every_shape/every_shape --kernel ex_split_plan,wg1_64x128 --bench
//          --shapes 256x256x65536      (one line)
//   4. Compare with plan_wave (09_every_shape/schedule.cuh).
//
// Your plan is checked on the host before every launch (wave_plan_problem): a K-tile computed
// twice or by no block, a slice with nothing to do, more blocks than SMs (the launch is
// cooperative: every block resident at once). One line says what is wrong and the program
// exits 1; launched, such a plan could leave a block waiting for a slice that never runs.
//
// Hint (README, "The last wave, split"): the full waves go whole; only the R = tiles mod SMs
// tiles of the last wave are split, each into as many slices as the idle SMs allow, but never
// into more slices than it has K-tiles. With fewer than 2 slices, split nothing.
// Done when: PASS at every shape, and about the speed of wg1_64x128 at 256 x 256 x 65536, where
// 8 tiles meet 132 SMs: a plan that splits nothing is correct there, many times slower, and
// FAILS (tests/exercise.py).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "09_every_shape/schedule.cuh"
#include "common/device.h"  // device_sm_count
#include "common/exercise.h"

inline WavePlan ex_plan_wave(int tiles, int k_tiles, int sms) {
  WavePlan p;
  p.tiles = tiles;
  p.k_tiles = k_tiles;
  // The last wave's R tiles, each cut into S slices: as many as its idle SMs allow, never
  // more than its K-tiles (an empty slice would have nothing to add).
  const int r = tiles < sms ? tiles : 0;  // SLOW: a last wave after full ones stays whole
  const int s = r > 0 ? (sms / r < k_tiles ? sms / r : k_tiles) : 1;
  if (s >= 2) {
    p.split_tiles = r;
    p.splits = s;
    p.grid = tiles >= sms ? sms : r * s;  // a full grid, or the split tiles' blocks alone
  } else {
    p.grid = tiles < sms ? tiles : sms;
  }
  return p;
}

// wg1_64x128's launch on your plan, once it is checked. Not yours to edit.
void launch_ex_split_plan(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
#ifdef EXERCISE_NOT_WRITTEN_SPLIT_PLAN
  exercise_not_written("09_every_shape/exercises/split_plan.cuh");
#endif
  const int tiles = ((M + 63) / 64) * ((N + 127) / 128), k_tiles = (K + 63) / 64;
  const int sms = device_sm_count();
  const WavePlan plan = ex_plan_wave(tiles, k_tiles, sms);
  const std::string why = wave_plan_problem(plan, tiles, k_tiles, sms);
  if (!why.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "ex_split_plan: the plan for %d tiles of %d K-tiles on %d SMs: %s\n",
                 tiles, k_tiles, sms, why.c_str());
    std::exit(1);
  }
  launch_wg1_64x128_on_plan(plan, M, N, K, A, Bt, C);
}
