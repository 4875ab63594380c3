// Chapter 10, step 6: fp8_straight and bias_gelu_straight. The epilogue's branches taken once a
// tile, not once an element.
// store_tile_bf16 (epilogue.cuh) unrolls its loop over a thread's 128 accumulator registers,
// and inside it asks, per element, three questions whose answers are the same for the whole
// launch: is D stored by TMA (`tma`), is C read (beta != 0), does the element lie inside the
// matrix (only asked where C is read). nvcc keeps those branches inside the unrolled loop (the
// other paths' loads of C and element-by-element stores stay in the code, branched over). At
// 4096x32768x512 step 3's epilogue took about 6,600 cycles a tile against a 2,800-cycle main
// loop (clock64 in block 0; NOTES.md, "The epilogue's branches").
// Here the functor says that it has a plain form (Straight<AlphaBeta>, Straight<BiasGelu>: no C
// and no indices), and store_tile_bf16 asks once a tile, before the loop: TMA and beta == 0
// take a loop with no branch in it; anything else takes steps 1-5's loop, unchanged. The
// kernels, tiles and menus are step 5's; only the functor differs (chapter 11, step 6, gives it
// to its block-scaled kernels). At that shape the epilogue falls to about 2,800 cycles, and the
// kernel issues 3.89e7 warp instructions against step 3's 6.83e7 (counters.csv): about 900
// fewer per consumer warp and tile.
// CUTLASS asks the same questions outside its element loop: the fusion operation is a template
// parameter (`LinCombEltAct`, ...), a void ElementC leaves C out at compile time, and its sm90
// TMA epilogue asks is_source_needed() (beta != 0) once, to load C or not.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel fp8_tuned,fp8_straight --shapes 4096x32768x512 --bench
//   tools/steps.py diff fp8_straight      # reads alone: this file and epilogue.cuh's kPlain
//
// Included once, by 10_fp8_epilogue/kernels.cu (and, FP8_TEMPLATES_ONLY, by chapter 11's).
#pragma once

#include "10_fp8_epilogue/steps/5_tuned_width.cuh"

// The straight functors: where beta == 0, the formula of their steps 1 and 2 forms (alpha *
// acc, then + bias and GELU), without m, n or C.
template <class Epi>
struct Straight;
template <>
struct Straight<AlphaBeta> : AlphaBeta {
  static constexpr bool kStraight = true;
  __device__ __forceinline__ bool reads_c() const { return beta != 0.0f; }
  __device__ __forceinline__ float plain(float acc, Column, int) const { return alpha * acc; }
};
template <>
struct Straight<BiasGelu> : BiasGelu {
  static constexpr bool kStraight = true;
  __device__ __forceinline__ bool reads_c() const { return ab.beta != 0.0f; }
  __device__ __forceinline__ float plain(float acc, Column b, int i) const {
    return gelu_tanh(ab.alpha * acc + __bfloat162float(i ? b.y : b.x));
  }
};

inline Straight<AlphaBeta> straight_alpha_beta(const GemmProblem& p) {
  return {{p.alpha, p.beta, p.C, p.M, p.N}};
}
inline Straight<BiasGelu> straight_bias_gelu(const GemmProblem& p) {
  return {{{p.alpha, p.beta, p.C, p.M, p.N}, p.bias}};
}

#ifndef FP8_TEMPLATES_ONLY

// Step 5's menus, each entry with the straight functor.
void launch_fp8_straight_width(int BN, const GemmProblem& p) {
  launch_fp8_width_with(BN, p, straight_alpha_beta(p));
}
void launch_bias_gelu_straight_width(int BN, const GemmProblem& p) {
  launch_bias_gelu_width_with(BN, p, straight_bias_gelu(p));
}

void launch_fp8_straight(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_fp8_straight_width(tuned_width("fp8_straight", launch_fp8_straight_width, chosen, p), p);
}
void launch_bias_gelu_straight(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_bias_gelu_straight_width(
      tuned_width("bias_gelu_straight", launch_bias_gelu_straight_width, chosen, p), p);
}
// Every entry of the menus alone (--kernel sweep), so that each is verified at every shape.
void launch_fp8_straight_256(const GemmProblem& p) { launch_fp8_straight_width(256, p); }
void launch_fp8_straight_192(const GemmProblem& p) { launch_fp8_straight_width(192, p); }
void launch_fp8_straight_128(const GemmProblem& p) { launch_fp8_straight_width(128, p); }
void launch_fp8_straight_64(const GemmProblem& p) { launch_fp8_straight_width(64, p); }
void launch_bias_gelu_straight_256(const GemmProblem& p) { launch_bias_gelu_straight_width(256, p); }
void launch_bias_gelu_straight_192(const GemmProblem& p) { launch_bias_gelu_straight_width(192, p); }
void launch_bias_gelu_straight_128(const GemmProblem& p) { launch_bias_gelu_straight_width(128, p); }
void launch_bias_gelu_straight_64(const GemmProblem& p) { launch_bias_gelu_straight_width(64, p); }
#endif  // FP8_TEMPLATES_ONLY
