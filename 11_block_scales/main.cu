// Chapter 11's program: FP8 e4m3 with one scale per 1 x 128 of A and per 128 x 128 of Bᵀ (the
// DeepSeek-V3 report's recipe), step by step, each next to cuBLASLt's block-scaled GEMM with the
// same types and layouts. Chapter 10's harness (chapter10.cu: quantisers, exact reference, Lt).
#include "11_block_scales/chapter11.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "11_block_scales/block_scales";
  spec.summary =
      "Chapter 11: FP8 e4m3 wgmma with 1x128 (A) and 128x128 (Bᵀ) block scales applied at "
      "promotion, staged by TMA, on a menu of tiles, split K, a split last wave, a width that "
      "fills the SMs, and the split timed on the menu (A and Bᵀ K-major, D BF16; sm_90a).";
  spec.default_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {64, 8192, 8192}};
  spec.min_cc = 90;
  spec.exact_cc = true;
  spec.min_cc_why = "wgmma, TMA and setmaxnreg are compiled for sm_90a, which runs on 9.0 only";
  using O = Operands;
  using E = Epilogue;
  using A = Accum;
  const std::vector<Fp8Entry> entries = {
      // FP8 e4m3, per-tensor scales (cuBLASLt, promoted): what block scales are measured against
      // in step 1, and the aim (block scaling for free).
      {"lt_fp8", O::kFp8Tensor, E::kAlphaBeta, A::kPromoted, nullptr, LtCall::kFp8},
      // FP8 with 1 x 128 (A) and 128 x 128 (Bᵀ) scales.
      {"lt_fp8_block", O::kFp8Block, E::kAlphaBeta, A::kPromoted, nullptr, LtCall::kFp8Block},
      {"block_scaled", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_scaled, {},
       Role::kStep, "lt_fp8"},
      {"scales_tma", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_scales_tma, {},
       Role::kStep, "lt_fp8_block"},
      {"scales_tma_64", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_scales_tma_64, {},
       Role::kSweep, "lt_fp8_block"},
      {"scales_tuned", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_scales_tuned, {},
       Role::kStep, "lt_fp8_block"},
      {"tall", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_tall, {}, Role::kStep,
       "lt_fp8_block"},
      {"tall_tuned", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_tall_tuned, {},
       Role::kStep, "lt_fp8_block"},
      {"split_tuned", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_split_tuned, {},
       Role::kStep, "lt_fp8_block"},
      // Step 6: chapter 10's straight epilogue; each menu entry alone in the sweep.
      {"block_straight", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_straight, {},
       Role::kStep, "lt_fp8_block"},
      {"block_straight_256", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_straight_256,
       {}, Role::kSweep, "lt_fp8_block"},
      {"block_straight_128", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_straight_128,
       {}, Role::kSweep, "lt_fp8_block"},
      {"block_straight_64", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_straight_64,
       {}, Role::kSweep, "lt_fp8_block"},
      // Step 7: the tall tile's last wave split in K; its new menu entry alone in the sweep.
      {"block_wave", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_wave, {},
       Role::kStep, "lt_fp8_block"},
      {"block_wave_256", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_wave_256, {},
       Role::kSweep, "lt_fp8_block"},
      // Step 8: a 56-wide tile, so that one row of tiles fills the SMs; the entry alone.
      {"block_fill", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_fill, {},
       Role::kStep, "lt_fp8_block"},
      {"block_fill_56", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_fill_56, {},
       Role::kSweep, "lt_fp8_block"},
      {"fill_64", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_fill_64, {}, Role::kSweep,
       "lt_fp8_block"},
      // Step 9: step 5's split timed on step 8's menu; the split alone.
      {"block_timed", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_timed, {},
       Role::kStep, "lt_fp8_block"},
      {"block_timed_split", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_timed_split,
       {}, Role::kSweep, "lt_fp8_block"},
      // Step 10: step 7's kernel with its K loops' bookkeeping by addition; the entry alone.
      {"block_lean", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_lean, {},
       Role::kBest, "lt_fp8_block"},
      {"block_lean_256", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_block_lean_256, {},
       Role::kSweep, "lt_fp8_block"},
      // The experiments (NOTES.md).
      {"cluster", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_cluster, {},
       Role::kSweep, "lt_fp8_block"},
      {"two_parts", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_two_parts, {},
       Role::kSweep, "lt_fp8_block"},
      {"hybrid", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_hybrid, {}, Role::kSweep,
       "lt_fp8_block"},
      // Yours to write (exercises/block_promote.cuh): --kernel ex_block_promote.
      {"ex_block_promote", O::kFp8Block, E::kAlphaBeta, A::kPromoted, launch_ex_block_promote,
       {}, Role::kExercise, "lt_fp8"},
  };
  return run_fp8_chapter(spec, entries, argc, argv);
}
