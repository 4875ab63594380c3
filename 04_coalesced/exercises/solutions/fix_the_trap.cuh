// Exercise (chapter 04): fix the trap, the conflict-free tile of Bᵀ. THE REFERENCE SOLUTION.
//
// tiled_bt_trap's kernel (steps/1_tiled_bt.cuh) with its Bᵀ tile taken out: the same 2 blocks
// of 1024 threads per SM (__launch_bounds__(1024, kBtMinBlocks)), the A tile, the loads, the
// barriers, the 16-step unroll and the launcher are written. Yours are the tile (a flat array
// of floats) and the word where tile element (n, k) lives in it, once where the load phase
// stores (ty, tx) and once where the inner loop reads (tx, k). Choose a layout whose tile
// columns cover the 32 banks: padded, as tiled_bt_padded does, or XOR-swizzled; both pass.
// (BtTile<L>::offset, coalesced.cuh, is the answer: write the arithmetic yourself.) The trap's
// own [32][32] layout is correct too, just slow: PASS alone does not say that the conflicts
// are gone; the timing and ncu do.
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_FIX_THE_TRAP` below.
//   2. Write the three marked parts of ex_fix_the_trap_kernel: the tile (the trap's is there,
//      to change), the store and the read (replace each `Bts[0]`).
//   3. meson test -C build --suite exercises       # correct at every test shape? then its speed
//      ./build/04_coalesced/coalesced --kernel ex_fix_the_trap,tiled_bt_trap,tiled_bt_padded --size 4096 --bench
//      and its shared-load bank conflicts (docs/measuring.md's recipe; try tiled_bt_trap too):
//      m=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
//      ncu --clock-control none --nvtx --nvtx-include ex_fix_the_trap/ -c 1 --metrics $m ./build/04_coalesced/coalesced --kernel ex_fix_the_trap --check --size 4096
//   4. Compare with 04_coalesced/steps/1_tiled_bt.cuh (and BtTile<L>::offset, coalesced.cuh).
//
// Hint (README, "Why"): word w lies in bank w % 32. The inner loop reads a tile column: its
// lanes are the rows n = tx = 0..31 at a fixed k. Stored as loaded, (n, k) at word 32 n + k,
// the column is in bank k for every n: 32 wavefronts where 1 would do (and nvcc merges 4 steps
// of k into one LDS.128, 32 wavefronts where 4 would do). Padding shifts row n by n banks:
// word 33 n + k is in bank (n + k) % 32, 32 distinct banks. The swizzle keeps 32 words a row
// but stores column k of row n at k ^ n: bank k ^ n, distinct for the 32 rows, no spare words.
// Done when: PASS at every shape, and about the speed of tiled_bt_padded, several times the trap's
// (their rows in the chapter README's Results table). `meson test` times it next to tiled_bt_padded
// and prints the ratio; more than 1.5x slower FAILS, with a sentence on what the lesson is about
// (tests/exercise.py). The swizzle `k ^ n` runs at tiled_bt_swizzled's speed, a little slower
// (README: "Why the swizzle is slower than the padding"); ncu counts next to no shared-load bank
// conflicts for either, where most of the trap's shared-load wavefronts are conflicts.
#pragma once

#include "04_coalesced/coalesced.cuh"
#include "common/exercise.h"

// Step 1's equal occupancy: kBtThreads, kBtMinBlocks (coalesced.cuh).

// Thread (tx, ty) computes C(row, col); a warp is one row of C's (32, 32) tile.
//
//   load phase: warp ty reads Bᵀ[n0 + ty][k0 + 0..31]  -> tile (ty, 0..31)   (a tile row)
//   inner loop: warp ty reads tile (0..31, k)           -> B(k0 + k, n0 + 0..31) (a column)
__global__ void __launch_bounds__(kBtThreads, kBtMinBlocks)
    ex_fix_the_trap_kernel(int M, int N, int K, const float* __restrict__ A,
                           const float* __restrict__ Bt, float* __restrict__ C) {
  constexpr int T = kBtTile;
  __shared__ float As[T][T];  // (T, T) tile of A: rows of C's tile, a K-slab
  // ---- your code: the (T, T) tile of Bᵀ as loaded, element (n, k), a flat array of floats ----
  constexpr int kRow = T + 1;      // padded: one unused word after each row of 32
  __shared__ float Bts[T * kRow];  // (n, k) at 33 n + k: bank (n + k) % 32
  // ---- end of your code ----

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T + ty;  // as in 01's coalesced kernel: threadIdx.x walks a row
  const int col = blockIdx.x * T + tx;
  const int n_load = blockIdx.x * T + ty;  // thread (tx, ty) loads Bᵀ[n0 + ty][k0 + tx]
  float acc = 0.0f;

  for (int k0 = 0; k0 < K; k0 += T) {
    // Each thread loads one element of each tile; a warp reads 32 consecutive floats of a row
    // of A and of Bᵀ: coalesced. Outside the matrix: 0, which adds nothing to the sum.
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    // ---- your code: Bᵀ(n_load, k0 + tx) into tile element (ty, tx): a warp writes a row ----
    Bts[ty * kRow + tx] = (n_load < N && k0 + tx < K) ? Bt[n_load * K + k0 + tx] : 0.0f;
    // ---- end of your code ----
    __syncthreads();  // the tiles are complete before anyone reads them

    // Unrolled 16 steps at a time, not all 32: fully unrolled, ptxas keeps a swizzle's 32
    // offsets (k ^ tx) in registers across the k0 loop and, held to 32 registers, spills them
    // (which the build refuses); 16 at a time neither layout spills.
#pragma unroll 16
    for (int k = 0; k < T; ++k) {
      // ---- your code: B(k0 + k, col) = Bᵀ(col, k0 + k) is tile element (tx, k); the 32
      // lanes read down a column of the tile ----
      acc += As[ty][k] * Bts[tx * kRow + k];  // 33 tx + k: 32 banks
      // ---- end of your code ----
    }
    __syncthreads();  // everyone is done reading before the next iteration overwrites the tiles
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

// Blocks of 32 x 32 threads, one per (32, 32) tile of C, rounded up; x runs over the columns.
void launch_ex_fix_the_trap(int M, int N, int K, const float* A, const float* Bt, float* C) {
#ifdef EXERCISE_NOT_WRITTEN_FIX_THE_TRAP
  exercise_not_written("04_coalesced/exercises/fix_the_trap.cuh");
#endif
  dim3 block(kBtTile, kBtTile);
  dim3 grid(ceil_div(N, kBtTile), ceil_div(M, kBtTile));
  ex_fix_the_trap_kernel<<<grid, block>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}
