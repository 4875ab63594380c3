// Chapter 03's kernels: every step file, then the experiment, compiled once (chapter 04 links
// them). The lesson is in the step files, in reading order:
//   steps/1_tiled_smem.cuh   (32, 32) tiles of A and B staged in shared memory
//   steps/2_tiled_1d.cuh     each thread computes TM = 8 outputs of a column (1D blocking)
//   steps/3_tiled_2d.cuh     each thread computes a TM x TN = 8 x 8 micro-tile (2D blocking)
//   experiments/bk_sweep.cuh tiled_2d at BK = 8, 16, 32 (--kernel sweep)
// C = A * B, row-major FP32; every M, N, K >= 1 (partial tiles zero-filled on load, masked
// on store). Explanation and measurements: 03_tiled/README.md
#include "03_tiled/steps/1_tiled_smem.cuh"
#include "03_tiled/steps/2_tiled_1d.cuh"
#include "03_tiled/steps/3_tiled_2d.cuh"
#include "03_tiled/experiments/bk_sweep.cuh"
