// Exercise (chapter 11): the promotion with block scales.
//
// Step 1's kernel (steps/1_block_scaled.cuh) calls scales.promote(acc, part, sc) once a K tile:
// `part` holds the tensor cores' sum of this K tile (128 K, one K block) for the thread's 64
// accumulator registers, and sc the two multipliers of the thread's two rows:
// sc.x = a_dq(m_lo, kb) * b_dq(nb, kb), sc.y the same for row m_lo + 8.
// Write the promotion: add part into acc, each register times the multiplier of its row.
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_BLOCK_PROMOTE` below.
//   2. Write the marked part of ExBlockScales::promote.
//   3. meson test -C build --suite exercises       # correct at every test shape? then its speed
//      ./build/11_block_scales/block_scales --kernel ex_block_promote,block_scaled --bench
//   4. Compare with BlockScales::promote (steps/1_block_scaled.cuh).
//
// Hint (README, "The code"): the accumulator map is chapter 08's WgmmaAcc (shared/hopper/
// hopper.cuh). Which of the 4 registers of each group of 8 columns lie on row m_lo, which on
// m_lo + 8? The inputs' blocks differ in size (up to 64 times), so a register promoted with the
// other row's scale is far off, and the check says where.
// Done when: PASS at every shape, at about the speed of block_scaled.
#pragma once

#include "11_block_scales/steps/1_block_scaled.cuh"
#include "common/exercise.h"

// Delete this line when you start writing: while it is here, the harness reports SKIP.
#define EXERCISE_NOT_WRITTEN_BLOCK_PROMOTE

struct ExBlockScales : BlockScales {
  template <int R>
  __device__ __forceinline__ void promote(float (&acc)[R], const float (&part)[R],
                                          float2 sc) const {
    // ---- yours: acc[i] += part[i] times the multiplier of register i's row ----
    // As you receive it: the per-tensor promotion, which ignores the scales (wrong).
#pragma unroll
    for (int i = 0; i < R; ++i) acc[i] += part[i];
    (void)sc;
    // ---- end of yours ----
  }
};

void launch_ex_block_promote(const GemmProblem& p) {
#ifdef EXERCISE_NOT_WRITTEN_BLOCK_PROMOTE
  exercise_not_written("11_block_scales/exercises/block_promote.cuh");
#endif
  launch_block_scaled_with(p, ExBlockScales{{p.a_dq_blk, p.b_dq_blk}},
                           AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
