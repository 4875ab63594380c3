// Chapter 11, step 9: block_timed. Host code only: step 5's split of K becomes one more entry of
// step 8's menu, timed with the others, instead of a rule that runs before the menu. Step 5's
// rule splits wherever 4 x the 128 x 128 tiles fit in the SMs; at 128 x 4096 x 7168 (32 tiles)
// it split, and step 8 ran at 78.4 % of lt_fp8_block where its 128 x 56 entry alone ran at
// 91.4 % (fill_width.csv): the split's second kernel and its FP32 planes cost more there than
// the 56-wide tile's 74 of 132 SMs idle. On the menu the split is offered wherever two slices
// or more fit (step 5's count of slices, from 2 where step 5 asked 4), and the timing decides.
// The kernels, menus and epilogues are steps 5, 7 and 8's; only who decides differs.
// cuBLASLt decides the same way within a kernel family: its heuristic ranks split-K and
// non-split kernels together (lt_fp8_block splits K at 128 x 7168 x 16384, NOTES.md).
//
//   ./build/11_block_scales/block_scales --kernel block_fill,block_timed --shapes 128x4096x7168 --bench
//   tools/steps.py diff block_timed       # reads alone: this file
//
// Included once, by 11_block_scales/kernels.cu.
#pragma once

#include "11_block_scales/steps/8_fill_width.cuh"

#ifndef FP8_TEMPLATES_ONLY
// The slices of K the split would take here (step 5's split_k_fit), or 0 where fewer than 2 fit.
inline int split_entry_slices(const GemmProblem& p) {
  const int want = split_k_fit(p);
  return want >= 2 ? want : 0;
}

constexpr int kSplitEntry = 2048;
void launch_block_timed_menu(int entry, const GemmProblem& p) {
  if (entry == kSplitEntry) return launch_split_slices(p, split_entry_slices(p));
  launch_block_fill_menu(entry, p);
}
// Step 8's menu, the split first where it fits; the tall tile's split-wave entry is given
// (step 7's here, step 10's there). Returns the number of entries.
constexpr int kTimedMenuMax = 6;
inline int timed_menu(const GemmProblem& p, int wave_entry, const char* wave_label,
                      int (&menu)[kTimedMenuMax], const char* (&labels)[kTimedMenuMax]) {
  int n = 0;
  auto add = [&](int entry, const char* label) { menu[n] = entry, labels[n++] = label; };
  if (split_entry_slices(p) > 0) add(kSplitEntry, "128x128 split K");
  add(wave_entry, wave_label);
  for (int i = 0; i < kTallMenuCount; ++i) add(kTallMenu[i], kTallMenuLabels[i]);
  add(kFillBN, "128x56");
  return n;
}
void launch_block_timed(const GemmProblem& p) {
  static WidthChoices chosen;
  int menu[kTimedMenuMax];
  const char* labels[kTimedMenuMax];
  const int n = timed_menu(p, kWaveEntry, "256x128 step 7", menu, labels);
  launch_block_timed_menu(
      tuned_width("block_timed", launch_block_timed_menu, chosen, p, menu, n, labels), p);
}
// The new entry alone (--kernel sweep): the split at every shape where it fits (else step 8).
void launch_block_timed_split(const GemmProblem& p) {
  if (split_entry_slices(p) > 0) return launch_split_slices(p, split_entry_slices(p));
  launch_block_fill(p);
}
#endif  // FP8_TEMPLATES_ONLY
