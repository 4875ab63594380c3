// Chapter 10's kernels: every step file, compiled once, for sm_90a only (10_fp8_epilogue/
// meson.build, as chapter 08's), and the launchers the program lists. The lesson is in the step
// files, in reading order (each ends with its launchers, which the exercise's translation unit
// leaves out: FP8_TEMPLATES_ONLY):
//   steps/1_bf16_out.cuh      bf16_out: chapter 08's staged kernel writing BF16 D = alpha A Bᵀ +
//                             beta C through shared memory and TMA stores (epilogue.cuh)
//   steps/2_bias_gelu.cuh     bias_gelu: the same kernel with a bias and GELU in its epilogue
//                             (unfused: step 1, then bias_gelu_inplace_kernel)
//   steps/3_fp8.cuh           fp8: e4m3 operands, wgmma k32, per-tensor scales (fp8_128: BN 128)
//   steps/4_promoted.cuh      promoted: the tensor cores' sum of each 128 K added into FP32
//                             registers (two-level accumulation), BN 128
//   steps/5_block_scaled.cuh  block_scaled: 1 x 128 and 128 x 128 scales applied at promotion,
//                             staged in shared memory by a second producer warp
//   steps/6_scales_tma.cuh    scales_tma: the scales copied by TMA with the tiles they scale
//   steps/7_tuned_width.cuh   fp8_tuned, bias_gelu_tuned, scales_tuned: steps 3, 2 and 6 at
//                             the width (256, 192, 128 or 64; step 6: 128 or 64) measured
//                             fastest on the shape's first call
//   steps/8_tall_tile.cuh     tall: step 6 on a 256 x 128 tile, two 64-row slabs a consumer
//                             warpgroup; tall_tuned: the tall tile on step 7's menu for step 6
//   steps/9_split_k.cuh       split_tuned: step 6's kernel with K split in slices where the
//                             tiles are few, the slices added by a second kernel; else step 8
//   steps/10_straight.cuh     fp8_straight, bias_gelu_straight, block_straight: steps 7-9 with
//                             the epilogue's uniform branches taken once a tile, out of its loop
//   steps/11_split_wave.cuh   block_wave: step 10's block_straight with step 8's tile on chapter
//                             09's schedule, the last partial wave split in K
//   steps/12_epilogue_wg.cuh  bias_gelu_wg: the epilogue in one or two warpgroups of its own,
//                             fed through shared memory, beside the next tile's math
// and the experiments (not steps; NOTES.md):
//   experiments/cluster.cuh   cluster: step 6 in clusters of two blocks sharing each Bᵀ tile
//   experiments/two_parts.cuh two_parts: step 6 with two part accumulators, the adds overlapped
//   experiments/trace_wg.cuh  tr_*: steps 10 (4 or 6 stages) and 12 at BN 128, clock64 per tile
// Explanation and measurements: 10_fp8_epilogue/README.md
#include "10_fp8_epilogue/chapter10.h"
#include "10_fp8_epilogue/experiments/cluster.cuh"
#include "10_fp8_epilogue/experiments/two_parts.cuh"
#include "10_fp8_epilogue/steps/12_epilogue_wg.cuh"
#include "10_fp8_epilogue/experiments/trace_wg.cuh"
