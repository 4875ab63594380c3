// Chapter 10, step 5: fp8_tuned and bias_gelu_tuned. Host code only, no kernel of its own:
// step 3's kernel (FP8) and step 2's (BF16, bias and GELU) at the width that runs the shape
// fastest, measured on the shape's first call (chapter 09's answer, step 6 there, on a menu of
// one dimension). Steps 2 and 3 always take a (128, 256) tile; at 128 rows (a decoding step) and
// N = 7168 that is 28 tiles, as many SMs streaming Bᵀ of 132, and at N = 2112 a 256-wide tile
// leaves a last column of tiles three-quarters empty. The menu is the widths one wgmma m64nN
// covers with a whole number of 64-column store bands: N = 256, 192, 128, 64 (4, 4, 6 and 8
// stages: kEpiStages). No rule ranks them first: they are few enough to time them all
// (Timer::time_interleaved, the L2 flushed before each run, five runs each), and the fastest is
// kept for the rest of the process. Chapter 11 times its own menus with the same tuned_width.
// Every width is verified on its own at every test shape (--kernel sweep: fp8_64, fp8_128,
// fp8_192, bias_gelu_64, bias_gelu_128, bias_gelu_192). On a shape's first call the candidates
// write D before the chosen width does, so that check alone could not see an element the chosen
// width leaves unwritten; the determinism test (--twice) runs the chosen width again into a
// poisoned D and compares every bit, and the sweep test checks each width.
// Counterparts: DeepGEMM chooses its block N (not only powers of two) by a model of the waves
// and the SMs they fill, per shape, ahead of the launch; cuBLASLt's heuristic picks among its
// kernels (lt_fp8: `..._128x128_128x6_1x2_...` at 4096³, NOTES.md).
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel fp8,fp8_tuned --shapes 128x7168x16384 --bench
//   tools/steps.py diff fp8_tuned         # reads alone: this file
//
// Included once, by 10_fp8_epilogue/kernels.cu (and, FP8_TEMPLATES_ONLY, by chapter 11's).
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "10_fp8_epilogue/steps/4_promoted.cuh"  // steps 1-4: launch_bf16_out_with<BN>,
                                                  // BiasGelu, launch_fp8_with<BN>
#include "common/timer.h"                         // Timer: the widths timed

constexpr int kWidths[] = {256, 192, 128, 64};  // the menu, steps 2 and 3's own width first
constexpr int kWidthCount = sizeof(kWidths) / sizeof(kWidths[0]);

// The width for this shape, timed on its first call (each candidate writes D; the caller runs
// the chosen one after); one map per kernel (`chosen`). One line on stderr says what was timed
// and chosen (each entry as 128xBN, or as its label where chapter 11 gives labels).
using WidthLauncher = void (*)(int BN, const GemmProblem& p);
using WidthChoices = std::map<std::tuple<int, int, int>, int>;  // (M, N, K) -> BN
inline int tuned_width(const char* name, WidthLauncher launch, WidthChoices& chosen,
                       const GemmProblem& p, const int* widths = kWidths,
                       int count = kWidthCount, const char* const* labels = nullptr) {
  const auto key = std::make_tuple(p.M, p.N, p.K);
  const auto it = chosen.find(key);
  if (it != chosen.end()) return it->second;
  static Timer timer;  // its flush buffer: twice the L2, allocated once
  std::vector<std::function<void()>> runs;
  for (int i = 0; i < count; ++i)
    runs.push_back([&p, launch, widths, i] { launch(widths[i], p); });
  constexpr int kTuneReps = 5;
  const std::vector<Timing> t = timer.time_interleaved(runs, kTuneReps, true);
  int best = 0;
  for (int i = 1; i < count; ++i)
    if (t[i].median_ms < t[best].median_ms) best = i;
  std::fprintf(stderr, "%s: %dx%dx%d:", name, p.M, p.N, p.K);
  for (int i = 0; i < count; ++i) {
    if (labels)
      std::fprintf(stderr, " %s", labels[i]);
    else
      std::fprintf(stderr, " 128x%d", widths[i]);
    std::fprintf(stderr, " %.4f ms%s", t[i].median_ms, i == best ? " (chosen)" : "");
  }
  std::fprintf(stderr, "\n");
  return chosen[key] = widths[best];
}

#ifndef FP8_TEMPLATES_ONLY

// A width's launch with the epilogue functor given (step 6 passes its straight functors).
template <class Epi>
void launch_fp8_width_with(int BN, const GemmProblem& p, const Epi& epi) {
  switch (BN) {
    case 256: return launch_fp8_with<256>(p, epi);
    case 192: return launch_fp8_with<192>(p, epi);
    case 128: return launch_fp8_with<128>(p, epi);
    default: return launch_fp8_with<64>(p, epi);
  }
}
template <class Epi>
void launch_bias_gelu_width_with(int BN, const GemmProblem& p, const Epi& epi) {
  switch (BN) {
    case 256: return launch_bf16_out_with<256>(p, epi);
    case 192: return launch_bf16_out_with<192>(p, epi);
    case 128: return launch_bf16_out_with<128>(p, epi);
    default: return launch_bf16_out_with<64>(p, epi);
  }
}

void launch_fp8_width(int BN, const GemmProblem& p) {
  launch_fp8_width_with(BN, p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
void launch_bias_gelu_width(int BN, const GemmProblem& p) {
  launch_bias_gelu_width_with(BN, p, BiasGelu{{p.alpha, p.beta, p.C, p.M, p.N}, p.bias});
}

void launch_fp8_tuned(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_fp8_width(tuned_width("fp8_tuned", launch_fp8_width, chosen, p), p);
}
void launch_bias_gelu_tuned(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_bias_gelu_width(tuned_width("bias_gelu_tuned", launch_bias_gelu_width, chosen, p), p);
}

// The menu's other widths alone (--kernel sweep), so that each is verified at every shape.
void launch_fp8_64(const GemmProblem& p) { launch_fp8_width(64, p); }
void launch_fp8_192(const GemmProblem& p) { launch_fp8_width(192, p); }
void launch_bias_gelu_64(const GemmProblem& p) { launch_bias_gelu_width(64, p); }
void launch_bias_gelu_128(const GemmProblem& p) { launch_bias_gelu_width(128, p); }
void launch_bias_gelu_192(const GemmProblem& p) { launch_bias_gelu_width(192, p); }
#endif  // FP8_TEMPLATES_ONLY
