// Chapter 10, step 11: bias_gelu_pair. Step 10's menu with each thread's bias pairs read by one
// load under a predicate. Step 2's BiasGelu::column(n) reads the bias of columns n and n + 1
// with a branch for N odd (then the pair's second column may lie outside D): 32 such reads a
// thread and tile at BN 256, 16 a slab for an epilogue warpgroup, each a branch and a
// convergence region (BSSY/BSYNC) with the pointer reloaded from the constant bank, issued one
// after the other before the first band. Where D goes by TMA (the plain paths of steps 6 and 8,
// every entry of the menu), N % 8 == 0 and a pair lies wholly inside the matrix or wholly
// outside: `n < N` decides both columns, and the load needs no branch (PairBias::pair_column;
// epilogue.cuh, "Step 11"). Elsewhere (N odd or not a multiple of 8, C read, step 10's last 48
// columns) the functor's own column(n) stays. Kernels, tiles, registers and launches are step
// 10's; only the functor differs.
// CUTLASS's sm90 epilogue reads its bias through a visitor node (Sm90ColBroadcast /
// Sm90RowBroadcast) that copies the tile's slice with a predicate per vector, no branch.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel bias_gelu_fill,bias_gelu_pair --shapes 4096x32768x512 --bench
//   tools/steps.py diff bias_gelu_pair    # reads alone: this file and epilogue.cuh's section
//
// Included once, by 10_fp8_epilogue/kernels.cu.
#pragma once

#include "10_fp8_epilogue/steps/10_fill_width.cuh"

// Step 8's functor, with the pair read that the plain paths may take (N % 8 == 0 there).
template <class Epi>
struct PairBias : Epi {
  static constexpr bool kPairColumn = true;
  __device__ __forceinline__ typename Epi::Column pair_column(int n) const {  // n even
    __nv_bfloat162 b = __floats2bfloat162_rn(0.0f, 0.0f);
    if (n < this->ab.N) b = __ldg(reinterpret_cast<const __nv_bfloat162*>(this->bias + n));
    return b;
  }
};

#ifndef FP8_TEMPLATES_ONLY
inline PairBias<Stsm<Straight<BiasGelu>>> pair_bias_gelu(const GemmProblem& p) {
  return {stsm_bias_gelu(p)};
}

// Step 10's menu (its six entries, the same kernels) with the new functor.
void launch_bias_gelu_pair_menu(int entry, const GemmProblem& p) {
  launch_fill_menu_with(entry, p, pair_bias_gelu(p));
}
void launch_bias_gelu_pair(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_bias_gelu_pair_menu(tuned_width("bias_gelu_pair", launch_bias_gelu_pair_menu, chosen, p,
                                         kGeluFillMenu, kGeluFillMenuCount, kGeluFillMenuLabels),
                             p);
}
// The entries alone (--kernel sweep), verified at every shape.
void launch_bias_gelu_pair_256(const GemmProblem& p) { launch_bias_gelu_pair_menu(256, p); }
void launch_bias_gelu_pair_192(const GemmProblem& p) { launch_bias_gelu_pair_menu(192, p); }
void launch_bias_gelu_pair_176(const GemmProblem& p) {
  launch_bias_gelu_pair_menu(kGeluFillBN, p);
}
void launch_bias_gelu_pair_wg_128(const GemmProblem& p) {
  launch_bias_gelu_pair_menu(kEpiWg + 128, p);
}
void launch_bias_gelu_pair_wg_64(const GemmProblem& p) {
  launch_bias_gelu_pair_menu(kEpiWg + 64, p);
}
void launch_bias_gelu_pair_wg2_128(const GemmProblem& p) {
  launch_bias_gelu_pair_menu(kEpiWg2 + 128, p);
}
#endif  // FP8_TEMPLATES_ONLY
