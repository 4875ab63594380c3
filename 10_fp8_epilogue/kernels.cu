// Chapter 10's kernels: every step file, compiled once, for sm_90a only (10_fp8_epilogue/
// meson.build, as chapter 08's), and the launchers the program lists. The lesson is in the step
// files, in reading order (each ends with its launchers, which chapter 11's translation units
// leave out: FP8_TEMPLATES_ONLY):
//   steps/1_bf16_out.cuh      bf16_out: chapter 08's staged kernel writing BF16 D = alpha A Bᵀ +
//                             beta C through shared memory and TMA stores (epilogue.cuh)
//   steps/2_bias_gelu.cuh     bias_gelu: the same kernel with a bias and GELU in its epilogue
//                             (unfused: step 1, then bias_gelu_inplace_kernel)
//   steps/3_fp8.cuh           fp8: e4m3 operands, wgmma k32, per-tensor scales (fp8_128: BN 128)
//   steps/4_promoted.cuh      promoted: the tensor cores' sum of each 128 K added into FP32
//                             registers (two-level accumulation), BN 128
//   steps/5_tuned_width.cuh   fp8_tuned, bias_gelu_tuned: steps 3 and 2 at the width (256, 192,
//                             128 or 64) measured fastest on the shape's first call
//   steps/6_straight.cuh      fp8_straight, bias_gelu_straight: step 5 with the epilogue's
//                             uniform branches taken once a tile, out of its loop
//   steps/7_epilogue_wg.cuh   bias_gelu_wg: the epilogue in one or two warpgroups of its own,
//                             fed through shared memory, beside the next tile's math
//   steps/8_stmatrix.cuh      bias_gelu_stsm: step 7 with the bands written by stmatrix
//   steps/9_lean_loop.cuh     bias_gelu_lean: step 8 with the K loops' descriptors and stage
//                             advanced by addition
//   steps/10_fill_width.cuh   bias_gelu_fill: step 9's menu with a 128 x 176 entry (2112 columns
//                             are twelve tiles), its last 48 columns stored from the registers
//   steps/11_bias_pair.cuh    bias_gelu_pair: step 10 with the bias pairs read under a predicate,
//                             not a branch, where D goes by TMA
// and the experiment (not a step; NOTES.md):
//   experiments/trace_wg.cuh  tr_*: steps 6 (4 or 6 stages), 7 and 8 at BN 128, clock64 per tile
// Explanation and measurements: 10_fp8_epilogue/README.md
#include "10_fp8_epilogue/chapter10.h"
#include "10_fp8_epilogue/steps/11_bias_pair.cuh"
#include "10_fp8_epilogue/experiments/trace_wg.cuh"
