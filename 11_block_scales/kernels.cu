// Chapter 11's kernels: every step file, compiled once, for sm_90a only (11_block_scales/
// meson.build, as chapter 10's), and the launchers the program lists. The lesson is in the step
// files, in reading order (each ends with its launchers, which the exercise's translation unit
// leaves out: FP8_TEMPLATES_ONLY):
//   steps/1_block_scaled.cuh  block_scaled: chapter 10's promoted kernel with 1 x 128 and
//                             128 x 128 scales applied at promotion, staged in shared memory by
//                             a second producer warp
//   steps/2_scales_tma.cuh    scales_tma: the scales copied by TMA with the tiles they scale
//   steps/3_tuned_width.cuh   scales_tuned: step 2 at the width (128 or 64) measured fastest
//   steps/4_tall_tile.cuh     tall: step 2 on a 256 x 128 tile, two 64-row slabs a consumer
//                             warpgroup; tall_tuned: the tall tile on step 3's menu
//   steps/5_split_k.cuh       split_tuned: step 2's kernel with K split in slices where the
//                             tiles are few, the slices added by a second kernel; else step 4
//   steps/6_straight.cuh      block_straight: steps 4-5 with chapter 10's straight epilogue
//   steps/7_split_wave.cuh    block_wave: step 6 with step 4's tile on chapter 09's schedule,
//                             the last partial wave split in K
//   steps/8_fill_width.cuh    block_fill: step 7's menu and step 2's kernel 56 columns wide, two
//                             Bᵀ scales a K tile, so that one row of tiles fills the SMs
//   steps/9_split_timed.cuh   block_timed: step 5's split of K timed as an entry of step 8's
//                             menu, not a rule run before it
//   steps/10_lean_loop.cuh    block_lean: step 7's kernel with its K loops' descriptors and
//                             stage advanced by addition, on step 9's menu
// and the experiments (not steps; NOTES.md):
//   experiments/cluster.cuh   cluster: step 2 in clusters of two blocks sharing each Bᵀ tile
//   experiments/two_parts.cuh two_parts: step 2 with two part accumulators, the adds overlapped
//   experiments/hybrid.cuh    hybrid: step 4's tile on a Stream-K hybrid schedule
// Explanation and measurements: 11_block_scales/README.md
#include "11_block_scales/chapter11.h"
// Chapter 10's step files as templates only: their launchers belong to chapter 10's program
// (each file is included once, #pragma once, so the later includes of them add nothing).
#define FP8_TEMPLATES_ONLY
#include "10_fp8_epilogue/steps/6_straight.cuh"
#undef FP8_TEMPLATES_ONLY
#include "11_block_scales/steps/10_lean_loop.cuh"
#include "11_block_scales/experiments/cluster.cuh"
#include "11_block_scales/experiments/two_parts.cuh"
#include "11_block_scales/experiments/hybrid.cuh"
