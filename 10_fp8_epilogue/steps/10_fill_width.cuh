// Chapter 10, step 10: bias_gelu_fill. A width that is no power of two, 176 columns, so that
// N = 2112 is twelve whole tiles. At 4096 x 2112 the menu's best tile was 128 x 192: 11 x 32 =
// 352 tiles on 132 SMs, three waves (the third of 88 tiles), each SM's time three tiles of
// 128 x 192 x K; 128 x 176 makes 12 x 32 = 384 tiles, still three waves, each tile 176 / 192 of
// the work (the waves' bound 8.3 % less time). cuBLASLt's GELU-bias kernel takes the same tile
// there (nvjet_sm90_tst_176x128_..., its name counting D's columns first: NOTES.md). Three
// things follow from the width:
// - wgmma m64n176k16 (88 accumulator registers a thread; shared/hopper/hopper_ptx.cuh);
// - 5 stages of 38 KiB beside the bands (kEpiStages<176>, step 1);
// - 176 is no multiple of the 64-column band: two bands go out by TMA as before, the last 48
//   columns straight from the registers into D, masked (epilogue.cuh, store_rest).
// The kernel is step 9's lean_straight_kernel at BN 176; bias_gelu_fill is step 9's menu with
// this width as one entry more, timed with the others at every shape. At 4096x2112x7168
// 0.1769 -> 0.1689 ms against the 192 entry, 92.4 -> 96.8 % of lt_bias_gelu; at the other eight
// shapes another entry wins or ties (docs/results/h200/fill_176.csv).
// DeepGEMM chooses its block N, a power of two or not (112 and 160 among them), by the waves a
// shape gives; chapter 11's step 8 takes 56 for the same reason at M = 128.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel bias_gelu_lean,bias_gelu_fill --shapes 4096x2112x7168 --bench
//   tools/steps.py diff bias_gelu_fill    # reads alone: this file and epilogue.cuh's section
//
// Included once, by 10_fp8_epilogue/kernels.cu.
#pragma once

#include "10_fp8_epilogue/steps/9_lean_loop.cuh"

constexpr int kGeluFillBN = 176;  // 2112 / 176 = 12 tiles a row
static_assert(kEpiStages<kGeluFillBN> == 5 && kEpiSmem<kGeluFillBN> <= 227 * 1024,
              "5 stages of 38 KiB beside the barriers and the bands");
static_assert(kGeluFillBN % 16 == 0 && kGeluFillBN <= 256, "a width wgmma m64nNk16 has");

#ifndef FP8_TEMPLATES_ONLY
// Step 9's menu with 128 x 176 as its third entry.
constexpr int kGeluFillMenu[] = {256, 192, kGeluFillBN, kEpiWg + 128, kEpiWg + 64, kEpiWg2 + 128};
constexpr const char* kGeluFillMenuLabels[] = {"128x256",
                                               "128x192",
                                               "128x176",
                                               "128x128 epilogue wg",
                                               "128x64 epilogue wg",
                                               "128x128 two epilogue wgs"};
constexpr int kGeluFillMenuCount = sizeof(kGeluFillMenu) / sizeof(kGeluFillMenu[0]);
static_assert(kGeluFillMenuCount == sizeof(kGeluFillMenuLabels) / sizeof(kGeluFillMenuLabels[0]),
              "a label each");

// The menu over any functor (step 11 passes its own).
template <class Epi>
void launch_fill_menu_with(int entry, const GemmProblem& p, const Epi& epi) {
  if (entry == kGeluFillBN) return launch_lean_straight_with<kGeluFillBN>(p, epi);
  launch_lean_menu_with(entry, p, epi);  // step 9's five
}
void launch_bias_gelu_fill_menu(int entry, const GemmProblem& p) {
  launch_fill_menu_with(entry, p, stsm_bias_gelu(p));
}
void launch_bias_gelu_fill(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_bias_gelu_fill_menu(tuned_width("bias_gelu_fill", launch_bias_gelu_fill_menu, chosen, p,
                                         kGeluFillMenu, kGeluFillMenuCount, kGeluFillMenuLabels),
                             p);
}
// The new entry alone (--kernel sweep), verified at every shape.
void launch_bias_gelu_fill_176(const GemmProblem& p) { launch_bias_gelu_fill_menu(kGeluFillBN, p); }
#endif  // FP8_TEMPLATES_ONLY
