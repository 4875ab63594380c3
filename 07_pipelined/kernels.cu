// Chapter 07's kernels: every step file, then the experiments, compiled once (chapter 08 links
// them for `pipelined`, its starting point). The lesson is in the step files, in reading order:
//   steps/1_cp_async2.cuh   cp.async into a ring of shared stages: cp_async2 (2), stages (3)
//   steps/2_frag_db.cuh     fragment double buffering: ldmatrix of the next k16 step during the
//                           mma of this one
//   steps/3_spread.cuh      the next tile's copies spread over the k16 steps
//   steps/4_raster.cuh      the grouped block order (grouped_tile, G = 16), a 1-D grid
//   steps/5_epilogue.cuh    C through shared memory in 16-byte stores
//   steps/6_pipelined.cuh   the autotuner over four tilings of step 5's kernel, chapter 06's
//                           split-K beneath
// The experiments (--kernel sweep; their results are in NOTES.md):
//   experiments/stages.cuh          stages_1 .. stages_4 (stages_1: a one-stage copy)
//   experiments/candidates.cuh      tune_*: the autotuner's candidates one by one, and the
//                                   16-warp candidate that left the list
//   experiments/unaligned_sync.cuh  synchronous element loads instead of the padding copy
//   experiments/splitk_atomic.cuh   split-K's atomic variant beneath the first candidate
//   experiments/epilogue_g8.cuh     step 5 with groups of 8 tile rows
// BF16 A (M x K) and Bᵀ (N x K), FP32 accumulation and C = A * B. Every M, N, K >= 1: tiles at
// the matrix edges are zero-filled by cp.async (src-size 0); rows that are not 16-byte aligned
// (K % 8 != 0) are first copied into padded operands by every launcher but unaligned_sync's
// (pad_operands_if_unaligned, pad.cu). Explanation and measurements: 07_pipelined/README.md;
// the lab notebook: NOTES.md.
#include "07_pipelined/experiments/candidates.cuh"
#include "07_pipelined/experiments/epilogue_g8.cuh"
#include "07_pipelined/experiments/splitk_atomic.cuh"
#include "07_pipelined/experiments/stages.cuh"
#include "07_pipelined/experiments/unaligned_sync.cuh"
#include "07_pipelined/steps/1_cp_async2.cuh"
#include "07_pipelined/steps/2_frag_db.cuh"
#include "07_pipelined/steps/3_spread.cuh"
#include "07_pipelined/steps/4_raster.cuh"
#include "07_pipelined/steps/5_epilogue.cuh"
#include "07_pipelined/steps/6_pipelined.cuh"

// --kernel sweep: every experiment, under the names the chapter has always used.
const PipeSweepEntry kPipeSweep[] = {
    {"stages_1", launch_stages_1},
    {"stages_2", launch_cp_async2},
    {"stages_3", launch_stages},
    {"stages_4", launch_stages_4},
    {"tune_128x256x64_s3", launch_tune<Pipe3>},
    {"tune_256x128x64_s3", launch_tune<PipeTall>},
    {"tune_128x256x32_s4", launch_tune<PipeBk32>},
    {"tune_128x128x64_s3", launch_tune<PipeSmall>},
    {"tune_128x256x64_s3_16w", launch_tune_16w},
    {"unaligned_sync", launch_unaligned_sync},
    {"splitk_atomic", launch_splitk_atomic},
    {"epilogue_g8", launch_epilogue_g8},
};
const int kPipeSweepSize = sizeof(kPipeSweep) / sizeof(kPipeSweep[0]);
