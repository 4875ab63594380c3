// Chapter 10, experiment: GELU with one MUFU operation an element instead of two. cuBLASLt's
// GELU-bias kernel issues one XU (MUFU) instruction a warp an element (4.3 M at 4096x32768x512,
// 4096 x 32768 / 32 = 4.19 M), step 6's two (8.6 M), and it passes the same tails (NOTES.md,
// "One MUFU"). Here gelu_tanh's e^(-2u) is taken as 2^(-|z|) in (0, 1] by the one MUFU.EX2, and
// the reciprocal 1 / (1 + 2^(-|z|)) by FFMA alone: d in (1, 2], a line within 1/17 of 1/d
// (24/17 - 8/17 d, the minimax line of the reciprocal), two Newton steps (1/17^4 = 2^-16.3).
// x >= 0 (z <= 0): gelu = x r; x < 0: gelu = x 2^(-|z|) r (= x e^(2u) / (1 + e^(2u))): no
// subtraction anywhere, so no cancellation in either tail. Past z = 126 the .ftz EX2 flushes
// 2^(-|z|) to 0, and gelu to 0, where gelu_tanh flushes too.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel bias_gelu_straight_256,g1_straight_256 --shapes 4096x32768x512 --bench
//
// Included once, by 10_fp8_epilogue/kernels.cu, after the steps.
#pragma once

#include "10_fp8_epilogue/steps/7_epilogue_wg.cuh"

__device__ __forceinline__ float gelu_one_mufu(float x) {
  const float z = x * fmaf(float(kGeluB), x * x, float(kGeluA));  // -2u log2(e)
  float e;  // 2^(-|z|) = e^(-2|u|), in (0, 1]
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(-fabsf(z)));
  const float xm = z > 0.0f ? x * e : x;                  // x, or x e^(2u) where x < 0
  const float d = 1.0f + e;                               // (1, 2]
  float r = fmaf(-8.0f / 17.0f, d, 24.0f / 17.0f);        // 1/d within 1/17
  r = fmaf(r, fmaf(-d, r, 1.0f), r);                      // within 1/17^2
  r = fmaf(r, fmaf(-d, r, 1.0f), r);                      // within 1/17^4
  return xm * r;
}

struct StraightBiasGelu1 : Straight<BiasGelu> {
  __device__ __forceinline__ float plain(float acc, Column b, int i) const {
    return gelu_one_mufu(ab.alpha * acc + __bfloat162float(i ? b.y : b.x));
  }
};

// The bands by stmatrix (epilogue.cuh, store_bands_stsm), GELU as step 6's.
struct StsmBiasGelu : Straight<BiasGelu> {
  static constexpr bool kStsm = true;
};
struct StsmAlphaBeta : Straight<AlphaBeta> {
  static constexpr bool kStsm = true;
};

#ifndef FP8_TEMPLATES_ONLY
void launch_sm_straight_256(const GemmProblem& p) {
  launch_bf16_out_with<256>(p, StsmBiasGelu{straight_bias_gelu(p)});
}
void launch_sm_straight_192(const GemmProblem& p) {
  launch_bf16_out_with<192>(p, StsmBiasGelu{straight_bias_gelu(p)});
}
void launch_sm_wg2_128(const GemmProblem& p) {
  launch_epilogue_wg_with<128, 2>(p, StsmBiasGelu{straight_bias_gelu(p)});
}
void launch_sm_wg_128(const GemmProblem& p) {
  launch_epilogue_wg_with<128, 1>(p, StsmBiasGelu{straight_bias_gelu(p)});
}
void launch_sm_fp8_256(const GemmProblem& p) {
  launch_fp8_with<256>(p, StsmAlphaBeta{straight_alpha_beta(p)});
}
inline StraightBiasGelu1 straight_bias_gelu1(const GemmProblem& p) {
  return {straight_bias_gelu(p)};
}
void launch_g1_straight_256(const GemmProblem& p) {
  launch_bf16_out_with<256>(p, straight_bias_gelu1(p));
}
void launch_g1_straight_192(const GemmProblem& p) {
  launch_bf16_out_with<192>(p, straight_bias_gelu1(p));
}
void launch_g1_wg2_128(const GemmProblem& p) {
  launch_epilogue_wg_with<128, 2>(p, straight_bias_gelu1(p));
}
void launch_g1_wg_128(const GemmProblem& p) {
  launch_epilogue_wg_with<128, 1>(p, straight_bias_gelu1(p));
}
#endif  // FP8_TEMPLATES_ONLY
