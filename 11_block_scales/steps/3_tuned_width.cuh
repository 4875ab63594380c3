// Chapter 11, step 3: scales_tuned. Host code only, no kernel of its own: step 2's kernel at the
// width that runs the shape fastest, timed on the shape's first call by chapter 10's tuned_width
// (its step 5, which does the same for its FP8 and GELU kernels). Step 2 always takes a
// (128, 128) tile: at 128 rows (a decoding step) and N = 7168 that is 56 tiles, as many SMs
// streaming Bᵀ of 132. The menu: 128 and 64 (5 and 7 stages), the widths whose columns lie in
// one 128-wide Bᵀ scale block, which the promotion assumes (one Bᵀ scale a K tile; 192 or 256
// columns would span two). The width 64 alone is verified at every test shape (--kernel sweep:
// scales_tma_64); the determinism test (--twice) runs the chosen width again into a poisoned D.
//
//   ./build/11_block_scales/block_scales --kernel scales_tma,scales_tuned --shapes 128x7168x16384 --bench
//   tools/steps.py diff scales_tuned      # reads alone: this file
//
// Included once, by 11_block_scales/kernels.cu.
#pragma once

#include "10_fp8_epilogue/steps/5_tuned_width.cuh"  // tuned_width, WidthChoices
#include "11_block_scales/steps/2_scales_tma.cuh"   // launch_scales_tma_with<BN>

// The menu: step 2's own 128, and 64.
constexpr int kScaleWidths[] = {128, 64};
constexpr int kScaleWidthCount = sizeof(kScaleWidths) / sizeof(kScaleWidths[0]);

#ifndef FP8_TEMPLATES_ONLY

// A width's launch with the epilogue functor given.
template <class Epi>
void launch_scales_width_with(int BN, const GemmProblem& p, const Epi& epi) {
  if (BN == 128) return launch_scales_tma_with<128>(p, epi);
  return launch_scales_tma_with<64>(p, epi);
}
void launch_scales_width(int BN, const GemmProblem& p) {
  launch_scales_width_with(BN, p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}

void launch_scales_tuned(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_scales_width(tuned_width("scales_tuned", launch_scales_width, chosen, p, kScaleWidths,
                                  kScaleWidthCount),
                      p);
}

// The menu's other width alone (--kernel sweep), so that it is verified at every shape.
void launch_scales_tma_64(const GemmProblem& p) { launch_scales_width(64, p); }
#endif  // FP8_TEMPLATES_ONLY
