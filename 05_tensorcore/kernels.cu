// Chapter 05's kernels: every step file, then the experiment, compiled once (chapter 07 links
// them for mma_tuned, its starting point). The lesson is in the step files, in reading order:
//   steps/1_wmma.cuh           the WMMA API: (16, 16) BF16 fragments, load_matrix_sync
//   steps/2_wmma_shared.cuh    the same, with the fragment loads told they read shared memory
//   steps/3_mma_lds.cuh        mma.sync.m16n8k16, fragments filled by 32-bit LDS
//   steps/4_mma_ldmatrix.cuh   fragments by ldmatrix.x4; mma_swizzle (the swizzled tile) and
//                              mma_tuned (the sweep's best tiling) are the same kernel
//   experiments/mma_sweep.cuh  tile configurations and a single-buffer copy (--kernel sweep)
// BF16 A (M x K) and Bᵀ (N x K), FP32 accumulation and C = A * B. Every M, N, K >= 1: partial
// tiles zero-filled on load, masked on store; 128-bit global loads where rows are 16-byte
// aligned (K % 8 == 0), element loads elsewhere. Every kernel keeps chapter 04's double
// buffering with synchronous loads (global -> registers -> shared); chapter 07 makes them
// asynchronous. Explanation and measurements: 05_tensorcore/README.md
#include "05_tensorcore/steps/1_wmma.cuh"
#include "05_tensorcore/steps/2_wmma_shared.cuh"
#include "05_tensorcore/steps/3_mma_lds.cuh"
#include "05_tensorcore/steps/4_mma_ldmatrix.cuh"
#include "05_tensorcore/experiments/mma_sweep.cuh"
