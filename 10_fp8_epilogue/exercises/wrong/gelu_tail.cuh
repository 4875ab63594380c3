// Exercise (chapter 10): GELU over its whole range, tails included. A deliberately wrong body:
// the textbook spelling, which cancels in the left tail (tests/meson.build: its check must fail).
//
// Step 2's kernel calls its functor once an element, with the FP32 pre-activation
// x = alpha * acc + beta * C + bias, and rounds what it returns to BF16. Write ex_gelu: the tanh
// form gelu(x) = x / 2 * (1 + tanh(u)), u = sqrt(2 / pi) * (x + 0.044715 x^3), in FP32, right to
// BF16's precision from x = -12 to 12. The check pushes the pre-activations into the tails
// (--gelu-tail 1), where gelu(x) is a small negative number.
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_GELU_TAIL` below.
//   2. Write the marked part of ex_gelu.
//   3. meson test -C build --suite exercises       # correct in the tails? then its speed
//      ./build/10_fp8_epilogue/fp8_epilogue --kernel ex_gelu_tail,bias_gelu --gelu-tail 1 --bench
//   4. Compare with gelu_tanh (fp8_gemm.h).
//
// Hint (README, "The epilogue, fused"): at x = -5, tanh(u) is -1 + 9e-8, and 1 + tanh(u) keeps
// almost no digits of it: none with the fast tanh, whose error is larger than 9e-8; a few with
// tanhf, which is a long instruction sequence. Write 1 + tanh(u) with e^(-2u) instead, and the
// subtraction is gone.
// Done when: PASS at every shape, at about the speed of bias_gelu.
#pragma once

#include "10_fp8_epilogue/steps/2_bias_gelu.cuh"
#include "common/exercise.h"

// The special-function unit's tanh (PTX tanh.approx.f32: about 2^-11 relative error, one
// instruction). Yours to use or not.
__device__ __forceinline__ float tanh_approx(float u) {
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
  return t;
}

__device__ __forceinline__ float ex_gelu(float x) {
  // ---- yours: gelu(x), the tanh form, accurate in both tails ----
  // Wrong: 1 + tanh(u) loses its digits where tanh(u) is near -1; with the fast tanh's error,
  // gelu(-5) comes out 30 % off (NOTES.md).
  const float u = 0.7978845608f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanh_approx(u));
  // ---- end of yours ----
}

// Step 2's functor with the GELU above.
struct ExBiasGelu : BiasGelu {
  __device__ __forceinline__ float operator()(float acc, int m, int n, Column b, int i) const {
    return ex_gelu(ab(acc, m, n) + __bfloat162float(i ? b.y : b.x));
  }
};

void launch_ex_gelu_tail(const GemmProblem& p) {
#ifdef EXERCISE_NOT_WRITTEN_GELU_TAIL
  exercise_not_written("10_fp8_epilogue/exercises/gelu_tail.cuh");
#endif
  launch_bf16_out_with<256>(p, ExBiasGelu{{{p.alpha, p.beta, p.C, p.M, p.N}, p.bias}});
}
