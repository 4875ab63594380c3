// Exercise (chapter 06): the deterministic reduction of split-K's workspace. A DELIBERATELY
// WRONG BODY (tests/meson.build expects it to fail). The running sum starts from slice 0
// instead of 0.0f, then the loop adds every slice from s = 0: slice 0 is counted twice, in
// every element of C wherever S > 1, on every run alike.
//
// splitk_simt with its reduction kernel taken out. The launcher is written: it plans the tile
// and S (plan_for, as splitk_gemm does), runs chapter 04's SIMT kernel on the grid (N tiles,
// M tiles, S), which leaves slice s's partial sum of element i of C at ws[s * MN + i], and
// then launches ex_deterministic_reduction_kernel, one thread per element of C, where
// splitk_gemm calls launch_splitk_reduce. (Where the plan says S = 1 the base kernel writes C
// itself and nothing is reduced, as in splitk_gemm.) Yours is the kernel's body: C[i] = the S
// partials of element i, added in the order s = 0, 1, ..., S - 1.
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_DETERMINISTIC_REDUCTION` below.
//   2. Write the body of ex_deterministic_reduction_kernel (the `(void)` line is a placeholder
//      that writes nothing: C stays NaN).
//   3. meson test -C build --suite exercises       # correct at every test shape? then its speed
//      ./build/06_splitk/splitk --kernel ex_deterministic_reduction,splitk_simt --shapes 256x256x65536 --bench
//      (--splits S forces S for both, e.g. --splits 7: the odd S the plan rarely picks)
//   4. Compare with splitk_reduce_kernel in 06_splitk/splitk.cu (and splitk_gemm in splitk.cuh,
//      of which the launcher below is the workspace branch).
//
// Hint (README, "Workspace or atomics"): floating-point addition is not associative ((a + b) + c
// and a + (b + c) round differently). With atomicAdd the blocks of a tile add their partials
// into C in the order they happen to finish, set by scheduling and everyone else's traffic and
// different every run, so the low bits of C change from run to run. The workspace keeps every
// partial; one thread per element adds them strictly in the order 0, 1, ..., S - 1, so
// whatever order the GEMM blocks ran in, C is the same bits every run. Consecutive threads
// take consecutive i: a warp's load of one slice is 32 consecutive floats (128 bytes,
// coalesced). One element per thread, not a float4 (splitk.cu): for the skinny shapes split-K
// is for, M N is small (65,536 at 256 x 256), and a float4 per thread would leave most SMs
// idle. The S loads of a thread are independent: issue several (8) before the adds consume them
// in order, or each add waits for its own load.
//
// Deterministic? The check compares C with a reference within a tolerance, not bit for bit:
// its PASS does not show it, and a reduction with atomicAdd into a zeroed C would pass too
// while its low bits change from run to run. So the exercise's test also runs it a second time
// on the same input and fails unless C has the same bits (--twice):
//      ./build/06_splitk/splitk --check --twice --kernel ex_deterministic_reduction
// The fixed order is what makes it so: each element is written by one thread, with the same
// roundings in the same order on every run. splitk_parts checks the bits for the chapter's own
// kernels (the workspace variant run twice, the atomic one 10 times):
//      ./build/06_splitk/splitk_parts --check --kernel splitk_simt --shapes 256x256x65536
// Added in slice order, yours gives the very bits of splitk_simt, whose reduction adds in the
// same order: `./build/06_splitk/splitk --check --kernel ex_deterministic_reduction,splitk_simt`
// prints the same rel_err for both at every shape (three digits: a sign, not a proof).
// Done when: PASS at every shape (among them shapes where the plan gives S = 1, and on an H100 S =
// 132), the same bits when run twice, and about the speed of splitk_simt (its row in the chapter
// README's Results table). `meson test` times it next to splitk_simt and prints the ratio; more
// than 1.5x slower FAILS, with a sentence on what the lesson is about (tests/exercise.py).
#pragma once

#include <cstdint>

#include "shared/tensorcore/splitk.cuh"
#include "common/exercise.h"

// splitk_reduce_kernel's block (splitk.cu; a copy: the exercise is its own translation unit).
constexpr int kReduceThreads = 128;  // one element of C per thread: M N / 128 small blocks

// Element i of slice s is ws[s * MN + i]: S layers of M x N floats, each a partial C.
//
//   C[i] = ((ws[0][i] + ws[1][i]) + ws[2][i]) + ... + ws[S-1][i]     the same order every run
__global__ void __launch_bounds__(kReduceThreads)
    ex_deterministic_reduction_kernel(int64_t MN, int S, const float* __restrict__ ws,
                                      float* __restrict__ C) {
  // ---- your code: this thread's element i of C (block x covers elements kReduceThreads * x
  // and on; threads past MN have none), its S partials added in the order s = 0, 1, ..., S - 1,
  // stored to C[i]. Index with int64_t: S * MN can pass 2^31. ----
  const int64_t i = int64_t(blockIdx.x) * kReduceThreads + threadIdx.x;
  if (i >= MN) return;
  const float* p = ws + i;
  float sum = p[0];  // WRONG: slice 0, which the loop below adds again
  int s = 0;
  for (; s + 8 <= S; s += 8) {
    float v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = p[int64_t(s + j) * MN];  // 8 loads in flight
#pragma unroll
    for (int j = 0; j < 8; ++j) sum += v[j];  // added strictly in slice order
  }
  for (; s < S; ++s) sum += p[int64_t(s) * MN];
  C[i] = sum;
  // ---- end of your code ----
}

// splitk_simt's workspace path (splitk_gemm, SplitMode::kWorkspace) with the reduction above.
void launch_ex_deterministic_reduction(int M, int N, int K, const float* A, const float* Bt,
                                       float* C) {
#ifdef EXERCISE_NOT_WRITTEN_DETERMINISTIC_REDUCTION
  exercise_not_written("06_splitk/exercises/deterministic_reduction.cuh");
#endif
  // The plan splitk_simt runs: the tile, and S (the heuristic, or --splits).
  const SplitPlan p = plan_for(kSimtBases, kSimtBaseCount, M, N, K, g_simt_splits);
  const SplitKBase<float>& b = kSimtBases[p.tile];
  if (p.splits == 1) {  // no split: the base kernel writes C, there is nothing to reduce
    b.launch(M, N, K, A, Bt, C, 1, 0, false);
    return;
  }
  float* ws = splitk_workspace(p.workspace_bytes);  // (S, M, N)
  b.launch(M, N, K, A, Bt, ws, p.splits, size_t(M) * N, false);  // partial tiles: block z -> ws[z]
  const int64_t MN = int64_t(M) * N;
  ex_deterministic_reduction_kernel<<<unsigned((MN + kReduceThreads - 1) / kReduceThreads),
                                      kReduceThreads>>>(MN, p.splits, ws, C);
  CUDA_CHECK_LAUNCH();
}
