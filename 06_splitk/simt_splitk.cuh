// Chapter 06: split-K on chapter 04's best SIMT kernel (FP32, A and Bᵀ row-major).
#pragma once

#include "06_splitk/splitk.cuh"

// The base kernels the plan chooses from (tile 0: chapter 04's 128 x 256 x 16; tile 1:
// 128 x 128 x 8), for splitk_gemm and plan_for.
extern const SplitKBase<float> kSimtBases[];
extern const int kSimtBaseCount;

// S for the launchers below: 0 = the heuristic (plan_splitk), else --splits.
extern int g_simt_splits;

void launch_simt_bt_unsplit(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_splitk_simt(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_splitk_simt_atomic(int M, int N, int K, const float* A, const float* Bt, float* C);
