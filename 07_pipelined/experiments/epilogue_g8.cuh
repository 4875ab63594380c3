// Chapter 07, experiment: epilogue_g8. Step 5's kernel in the block order with groups of 8 tile
// rows instead of 16 (the launch only). The chapter's first version used G = 8; at 8192³ the
// 132 resident blocks then cover 8 tile rows and 17 columns (5,376 operand rows) instead of 16
// and 9 (4,352). README, "The block order"; the measurements that moved the steps to G = 16
// are in NOTES.md.
//
//   ./build/07_pipelined/pipelined --kernel epilogue,epilogue_g8 --size 8192 --bench
//
// Included once, by 07_pipelined/kernels.cu, after the steps.
#pragma once

#include "07_pipelined/steps/5_epilogue.cuh"

void launch_epilogue_g8(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_epilogue_cfg<Pipe3>(M, N, K, A, Bt, C, 8);
}
