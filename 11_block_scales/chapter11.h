// Chapter 11's program: chapter 10's harness (Fp8Entry, run_fp8_chapter: the quantisers, the
// exact reference, cuBLASLt, the check; 10_fp8_epilogue/chapter10.cu) with this chapter's
// kernels, each on block-scaled operands and timed against cuBLASLt's block-scaled GEMM.
#pragma once

#include "10_fp8_epilogue/chapter10.h"

// The chapter's launchers (steps/, compiled for sm_90a by kernels.cu).
void launch_block_scaled(const GemmProblem& p);  // step 1
void launch_scales_tma(const GemmProblem& p);    // step 2
void launch_scales_tuned(const GemmProblem& p);  // step 3: step 2 at the width timed fastest
void launch_scales_tma_64(const GemmProblem& p); // step 2 at BN = 64 (sweep; step 3's menu)
void launch_tall(const GemmProblem& p);          // step 4: step 2 on a 256 x 128 tile
void launch_tall_tuned(const GemmProblem& p);    // step 4: the tall tile on step 3's menu
void launch_split_tuned(const GemmProblem& p);   // step 5: K split where the tiles are few
void launch_block_straight(const GemmProblem& p);      // step 6: step 5's rule, step 4's menu,
void launch_block_straight_256(const GemmProblem& p);  //   chapter 10's straight epilogue
void launch_block_straight_128(const GemmProblem& p);  //   (and each menu entry alone: sweep)
void launch_block_straight_64(const GemmProblem& p);
void launch_block_wave(const GemmProblem& p);         // step 7: block_straight, the tall tile's
void launch_block_wave_256(const GemmProblem& p);     //   last wave split in K (and alone)
void launch_block_fill(const GemmProblem& p);         // step 8: step 7's menu and a 128 x 56 tile
void launch_block_fill_56(const GemmProblem& p);      //   (and the new entry alone;
void launch_fill_64(const GemmProblem& p);            //   its kernel 64 wide, for comparison)
void launch_block_timed(const GemmProblem& p);        // step 9: step 5's split timed on step
void launch_block_timed_split(const GemmProblem& p);  //   8's menu (and the split alone)
void launch_block_lean(const GemmProblem& p);         // step 10: step 9's menu, step 7's kernel
void launch_block_lean_256(const GemmProblem& p);     //   with its K loops' bookkeeping by
                                                      //   addition (and the entry alone)
void launch_cluster(const GemmProblem& p);       // experiment: step 2 in clusters of two
void launch_two_parts(const GemmProblem& p);     // experiment: two part accumulators
void launch_hybrid(const GemmProblem& p);        // experiment: a Stream-K hybrid schedule
void launch_ex_block_promote(const GemmProblem& p);  // the exercise (exercises/block_promote.cuh)
