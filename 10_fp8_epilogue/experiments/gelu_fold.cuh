// Chapter 10, experiment: gelu_fold. Step 10's straight BiasGelu with GELU's constants folded
// into the exponent of ex2: e^(-2u) = 2^(x (a + b x^2)), a = -2 c log2(e), b = a k, so
//   gelu(x) = x * rcp(1 + ex2(x * fma(b, x*x, a)))     (3 FP32 operations, 2 MUFU, 1 add, 1 mul)
// against gelu_tanh's x*x*x, the fma, 2c, __expf's scaling and __fdividef's range test.
#pragma once

#include "10_fp8_epilogue/steps/10_straight.cuh"

__device__ __forceinline__ float gelu_fold(float x) {
  constexpr float a = float(-2.0 * kGeluC * 1.4426950408889634);
  constexpr float b = float(-2.0 * kGeluC * kGeluK * 1.4426950408889634);
  const float z = x * fmaf(b, x * x, a);
  float e, r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(z));
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.0f + e));
  return x * r;
}
struct GeluFold : Straight<BiasGelu> {
  __device__ __forceinline__ float plain(float acc, Column b, int i) const {
    return gelu_fold(ab.alpha * acc + __bfloat162float(i ? b.y : b.x));
  }
};
#ifndef FP8_TEMPLATES_ONLY
void launch_bias_gelu_fold_width(int BN, const GemmProblem& p) {
  launch_bias_gelu_width_with(BN, p, GeluFold{straight_bias_gelu(p)});
}
void launch_bias_gelu_fold(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_bias_gelu_fold_width(
      tuned_width("bias_gelu_fold", launch_bias_gelu_fold_width, chosen, p), p);
}
void launch_bias_gelu_fold_256(const GemmProblem& p) { launch_bias_gelu_fold_width(256, p); }
void launch_bias_gelu_fold_192(const GemmProblem& p) { launch_bias_gelu_fold_width(192, p); }
#endif
