// Chapter 10's program: the epilogue a model needs (BF16 out, alpha and beta, a bias and GELU)
// and FP8 e4m3 with per-tensor scales and promotion, step by step, each next to its cuBLASLt
// counterpart with the same types and layouts (chapter10.cu, Lt). Block scales: chapter 11.
#include "10_fp8_epilogue/chapter10.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "10_fp8_epilogue/fp8_epilogue";
  spec.summary =
      "Chapter 10: BF16 output with alpha, beta, bias and GELU fused into a TMA-store epilogue; "
      "FP8 e4m3 wgmma with per-tensor scales and promotion into FP32 registers (A and Bᵀ "
      "K-major, D BF16; sm_90a).";
  spec.default_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {64, 8192, 8192}};
  spec.min_cc = 90;
  spec.exact_cc = true;
  spec.min_cc_why = "wgmma, TMA and setmaxnreg are compiled for sm_90a, which runs on 9.0 only";
  using O = Operands;
  using E = Epilogue;
  using A = Accum;
  const std::vector<Fp8Entry> entries = {
      // BF16, D = alpha A Bᵀ + beta C.
      {"lt_bf16", O::kBf16, E::kAlphaBeta, A::kFp32, nullptr, LtCall::kBf16},
      {"bf16_out", O::kBf16, E::kAlphaBeta, A::kFp32, launch_bf16_out, {}, Role::kStep,
       "lt_bf16"},
      // BF16 with bias and GELU: cuBLASLt's fused epilogue; ours fused and unfused.
      {"lt_bias_gelu", O::kBf16, E::kBiasGeluRounded, A::kFp32, nullptr, LtCall::kBf16BiasGelu},
      {"unfused", O::kBf16, E::kBiasGeluRounded, A::kFp32, launch_unfused, {}, Role::kStep,
       "lt_bias_gelu"},
      {"bias_gelu", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu, {}, Role::kStep,
       "lt_bias_gelu"},
      {"bias_gelu_192", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_192, {}, Role::kSweep,
       "lt_bias_gelu"},
      {"bias_gelu_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_128, {}, Role::kSweep,
       "lt_bias_gelu"},
      {"bias_gelu_64", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_64, {}, Role::kSweep,
       "lt_bias_gelu"},
      {"bias_gelu_tuned", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_tuned, {},
       Role::kStep, "lt_bias_gelu"},
      // FP8 e4m3, per-tensor scales: cuBLASLt accurate (promoted) and fast accumulation.
      {"lt_fp8", O::kFp8Tensor, E::kAlphaBeta, A::kPromoted, nullptr, LtCall::kFp8},
      {"lt_fp8_fast", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, nullptr, LtCall::kFp8Fast},
      {"fp8", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, launch_fp8, {}, Role::kStep, "lt_fp8"},
      {"fp8_128", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, launch_fp8_128, {}, Role::kSweep,
       "lt_fp8"},
      {"fp8_192", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, launch_fp8_192, {}, Role::kSweep,
       "lt_fp8"},
      {"fp8_64", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, launch_fp8_64, {}, Role::kSweep,
       "lt_fp8"},
      {"fp8_tuned", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, launch_fp8_tuned, {}, Role::kStep,
       "lt_fp8"},
      {"promoted", O::kFp8Tensor, E::kAlphaBeta, A::kPromoted, launch_promoted, {}, Role::kStep,
       "lt_fp8"},
      // Step 6: step 5 with the straight epilogue; each menu entry alone in the sweep.
      {"fp8_straight", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, launch_fp8_straight, {},
       Role::kBest, "lt_fp8"},
      {"bias_gelu_straight", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_straight, {},
       Role::kStep, "lt_bias_gelu"},
      {"fp8_straight_256", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, launch_fp8_straight_256,
       {}, Role::kSweep, "lt_fp8"},
      {"fp8_straight_192", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, launch_fp8_straight_192,
       {}, Role::kSweep, "lt_fp8"},
      {"fp8_straight_128", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, launch_fp8_straight_128,
       {}, Role::kSweep, "lt_fp8"},
      {"fp8_straight_64", O::kFp8Tensor, E::kAlphaBeta, A::kFp8Fast, launch_fp8_straight_64, {},
       Role::kSweep, "lt_fp8"},
      {"bias_gelu_straight_256", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_straight_256,
       {}, Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_straight_192", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_straight_192,
       {}, Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_straight_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_straight_128,
       {}, Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_straight_64", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_straight_64,
       {}, Role::kSweep, "lt_bias_gelu"},
      // Step 7: the epilogue in a warpgroup of its own; its menu entries alone in the sweep.
      {"bias_gelu_wg", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_wg, {}, Role::kStep,
       "lt_bias_gelu"},
      {"bias_gelu_wg_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_wg_128, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_wg_64", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_wg_64, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_wg2_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_wg2_128, {},
       Role::kSweep, "lt_bias_gelu"},
      // Step 8: step 7 with the bands written by stmatrix; its menu entries alone in the sweep.
      {"bias_gelu_stsm", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_stsm, {}, Role::kStep,
       "lt_bias_gelu"},
      {"bias_gelu_stsm_256", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_stsm_256, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_stsm_192", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_stsm_192, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_stsm_wg_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_stsm_wg_128,
       {}, Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_stsm_wg_64", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_stsm_wg_64, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_stsm_wg2_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_stsm_wg2_128,
       {}, Role::kSweep, "lt_bias_gelu"},
      // Step 9: step 8 with the K loops' bookkeeping by addition; its entries alone.
      {"bias_gelu_lean", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_lean, {}, Role::kStep,
       "lt_bias_gelu"},
      {"bias_gelu_lean_256", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_lean_256, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_lean_192", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_lean_192, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_lean_wg_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_lean_wg_128,
       {}, Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_lean_wg_64", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_lean_wg_64, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_lean_wg2_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_lean_wg2_128,
       {}, Role::kSweep, "lt_bias_gelu"},
      // Step 10: step 9's menu with a 128 x 176 entry; the entry alone.
      {"bias_gelu_fill", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_fill, {}, Role::kStep,
       "lt_bias_gelu"},
      {"bias_gelu_fill_176", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_fill_176, {},
       Role::kSweep, "lt_bias_gelu"},
      // Step 11: step 10 with the bias pairs read under a predicate; its entries alone.
      {"bias_gelu_pair", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_pair, {}, Role::kStep,
       "lt_bias_gelu"},
      {"bias_gelu_pair_256", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_pair_256, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_pair_192", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_pair_192, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_pair_176", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_pair_176, {},
       Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_pair_wg_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_pair_wg_128,
       {}, Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_pair_wg_64", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_pair_wg_64,
       {}, Role::kSweep, "lt_bias_gelu"},
      {"bias_gelu_pair_wg2_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_bias_gelu_pair_wg2_128,
       {}, Role::kSweep, "lt_bias_gelu"},
      {"tr_straight_128_s4", O::kBf16, E::kBiasGelu, A::kFp32, launch_tr_straight_128_s4, {},
       Role::kSweep, "lt_bias_gelu"},
      {"tr_straight_128_s6", O::kBf16, E::kBiasGelu, A::kFp32, launch_tr_straight_128_s6, {},
       Role::kSweep, "lt_bias_gelu"},
      {"tr_wg_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_tr_wg_128, {}, Role::kSweep,
       "lt_bias_gelu"},
      {"tr_wg2_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_tr_wg2_128, {}, Role::kSweep,
       "lt_bias_gelu"},
      {"tr_wg2_stsm_128", O::kBf16, E::kBiasGelu, A::kFp32, launch_tr_wg2_stsm_128, {},
       Role::kSweep, "lt_bias_gelu"},
      // Yours to write (exercises/gelu_tail.cuh): --kernel ex_gelu_tail.
      {"ex_gelu_tail", O::kBf16, E::kBiasGelu, A::kFp32, launch_ex_gelu_tail, {},
       Role::kExercise, "lt_bias_gelu"},
  };
  return run_fp8_chapter(spec, entries, argc, argv);
}
