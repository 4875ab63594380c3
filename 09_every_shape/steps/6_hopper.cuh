// Chapter 09, step 6: hopper, the chapter's answer. Host code only, no kernel of its own: for
// each shape, a tile from the menu (steps 2, 3 and 5) and a schedule (whole tiles, or the last
// wave split), chosen in two stages. The shape rule (hopper_cost and hopper_candidates,
// schedule.cuh, host-tested) predicts each pair's time on the GPU at hand; on a shape's first
// call the pairs it ranks best are timed, and the fastest is kept (README, "The answer").
//   hopper   launch_choice(tuned_hopper(...)): the measured choice over the rule's candidates
//
//   ./build/09_every_shape/every_shape --kernel hopper --shapes 3072x3072x3072 --bench
//   tools/steps.py diff hopper            # this file, and the shape rule in schedule.cuh
//
// Included once, by 09_every_shape/kernels.cu.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "09_every_shape/schedule.cuh"            // the shape rule: kMenu, hopper_candidates
#include "09_every_shape/steps/2_split_wave.cuh"  // launch_split_wave_tile
#include "09_every_shape/steps/3_menu.cuh"        // launch_menu
#include "09_every_shape/steps/5_one_wg.cuh"      // launch_one_wg
#include "common/device.h"                        // device_facts
#include "common/timer.h"                         // Timer: the candidates timed

// The chapter's answer: a tile and a schedule per shape. The shape rule (hopper_candidates,
// schedule.cuh) ranks every pair for this GPU, read from its device properties; on the first
// call of a shape the few it ranks best are timed (Timer::time_interleaved, the L2 flushed
// before each run, as the benchmark times them) and the fastest is kept for the rest of the
// process. The 128-row tiles run step 3's kernel (two warpgroups of 64 rows each), 128 x 128
// step 2's, the 64-row tiles step 5's. The launchers instantiate exactly kMenu's tiles.
static_assert(kMenuSize == 6 && kMenu[0].BM == 128 && kMenu[0].BN == 256 && kMenu[1].BN == 192 &&
                  kMenu[2].BN == 144 && kMenu[3].BM == 64 && kMenu[3].BN == 128 &&
                  kMenu[4].BM == 64 && kMenu[4].BN == 64 && kMenu[5].BM == 128 &&
                  kMenu[5].BN == 128,
              "launch_choice instantiates exactly the tiles hopper_candidates may pick");
void launch_choice(const HopperChoice& h, int M, int N, int K, const bf16* A, const bf16* Bt,
                   float* C) {
  const int max_splits = h.schedule == Schedule::kWhole ? 1 : 1 << 30;
  switch (h.tile) {
    case 0: return launch_menu<128, 256>(M, N, K, A, Bt, C, max_splits);
    case 1: return launch_menu<128, 192>(M, N, K, A, Bt, C, max_splits);
    case 2: return launch_menu<128, 144>(M, N, K, A, Bt, C, max_splits);
    case 3: return launch_one_wg<128>(M, N, K, A, Bt, C, max_splits);
    case 4: return launch_one_wg<64>(M, N, K, A, Bt, C, max_splits);
    default: return launch_split_wave_tile<128, 6>(M, N, K, A, Bt, C, max_splits);
  }
}

HopperGpu this_gpu() {
  const DeviceFacts& f = device_facts();
  return {f.sms, f.sm_clock_mhz, f.dram_bytes_per_us};
}

// The choice for this shape, timed on its first call (the candidates write C; the caller runs
// the chosen one after). One line on stderr says what was timed and chosen.
HopperChoice tuned_hopper(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  static std::map<std::tuple<int, int, int>, HopperChoice> chosen;
  const auto key = std::make_tuple(M, N, K);
  const auto it = chosen.find(key);
  if (it != chosen.end()) return it->second;
  HopperChoice cs[kTuneMax] = {};
  const int n = hopper_candidates(M, N, K, this_gpu(), cs);
  int best = 0;
  if (n > 1) {
    static Timer timer;  // its flush buffer: twice the L2, allocated once
    std::vector<std::function<void()>> runs;
    for (int i = 0; i < n; ++i)
      runs.push_back([&, i] { launch_choice(cs[i], M, N, K, A, Bt, C); });
    constexpr int kTuneReps = 5;
    const std::vector<Timing> t = timer.time_interleaved(runs, kTuneReps, true);
    std::fprintf(stderr, "hopper: %dx%dx%d:", M, N, K);
    for (int i = 0; i < n; ++i) {
      if (t[i].median_ms < t[best].median_ms) best = i;
    }
    for (int i = 0; i < n; ++i)
      std::fprintf(stderr, " %dx%d %s %.4f ms%s", kMenu[cs[i].tile].BM, kMenu[cs[i].tile].BN,
                   cs[i].schedule == Schedule::kWhole ? "whole" : "split", t[i].median_ms,
                   i == best ? " (chosen)" : "");
    std::fprintf(stderr, "\n");
  }
  return chosen[key] = cs[best];
}

void launch_hopper(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_choice(tuned_hopper(M, N, K, A, Bt, C), M, N, K, A, Bt, C);
}
