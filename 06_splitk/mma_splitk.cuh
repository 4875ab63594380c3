// Chapter 06: split-K on chapter 05's best mma.sync kernel (BF16 A and Bᵀ, FP32 C).
#pragma once

#include <cuda_bf16.h>

#include "06_splitk/splitk.cuh"

// The base kernels the plan chooses from (tile 0: chapter 05's best, MmaBest; tile 1: its
// ladder's 128 x 128 tile, MmaStep), for splitk_gemm and plan_for.
extern const SplitKBase<__nv_bfloat16> kMmaBases[];
extern const int kMmaBaseCount;

// S for the launchers below: 0 = the heuristic (plan_splitk), else --splits.
extern int g_mma_splits;

void launch_mma_unsplit(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* Bt,
                        float* C);
void launch_splitk_mma(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* Bt,
                       float* C);
void launch_splitk_mma_atomic(int M, int N, int K, const __nv_bfloat16* A,
                              const __nv_bfloat16* Bt, float* C);
