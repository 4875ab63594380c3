// Chapter 11, step 6: block_straight. Host code only: chapter 10's straight epilogue (its step 6:
// the epilogue's branches taken once a tile, not once an element; Straight<AlphaBeta>) given to
// steps 4 and 5's launchers. Step 5's rule first; elsewhere step 4's menu (256x128, 128x128,
// 128x64) with the straight functor. Kernels, tiles, menus and rules are steps 4 and 5's; only
// the functor differs.
//
//   ./build/11_block_scales/block_scales --kernel split_tuned,block_straight --shapes 4096x32768x512 --bench
//   tools/steps.py diff block_straight    # reads alone: this file
//
// Included once, by 11_block_scales/kernels.cu.
#pragma once

#include "10_fp8_epilogue/steps/6_straight.cuh"  // Straight<AlphaBeta>, straight_alpha_beta
#include "11_block_scales/steps/5_split_k.cuh"

#ifndef FP8_TEMPLATES_ONLY

// Step 4's menu, each entry with the straight functor.
void launch_block_straight_menu(int entry, const GemmProblem& p) {
  launch_tall_menu_with(entry, p, straight_alpha_beta(p));
}

// Step 5's rule first: where it splits K, its second kernel applies the epilogue (one element a
// thread, no bands), so nothing changes there.
void launch_block_straight(const GemmProblem& p) {
  if (split_k_slices(p) > 0) return launch_split_tuned(p);
  static WidthChoices chosen;
  launch_block_straight_menu(tuned_width("block_straight", launch_block_straight_menu, chosen, p,
                                         kTallMenu, kTallMenuCount, kTallMenuLabels),
                             p);
}

// Every entry of the menu alone (--kernel sweep), so that each is verified at every shape.
void launch_block_straight_256(const GemmProblem& p) { launch_block_straight_menu(256, p); }
void launch_block_straight_128(const GemmProblem& p) { launch_block_straight_menu(128, p); }
void launch_block_straight_64(const GemmProblem& p) { launch_block_straight_menu(64, p); }
#endif  // FP8_TEMPLATES_ONLY
