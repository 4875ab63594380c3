// Exercise (chapter 08): the consumers' side of the ring, their two barrier operations. THE
// REFERENCE SOLUTION.
//
// group16's kernel (warp_spec_kernel, steps/3_warp_spec.cuh, launched persistent with G = 16)
// with the consumers' barrier operations taken out: the producer, the barriers' init, the
// setmaxnreg calls, the wgmma, the epilogue and the launcher are written, and so is release(it),
// the arrival itself (lane 0 of each consumer warp on the empty barrier of K tile it's stage:
// empty[s] was initialised to expect 8 arrivals, one per consumer warp). Yours are:
//   - the wait on the stage's full barrier before the wgmma read it: which parity;
//   - the releases: for which K tile, and when; and the one the loop leaves for after it.
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_CONSUMER_BARRIERS` below.
//   2. Write the three marked parts of ex_consumer_barriers_kernel (the placeholder
//      `release(it)` in the second is there to change).
//   3. meson test -C build --suite exercises       # correct at every test shape? then its speed
//      ./build/08_hopper/hopper --kernel ex_consumer_barriers,group16 --size 4096 --bench
//   4. Compare with 08_hopper/steps/3_warp_spec.cuh (the consumers' loop of warp_spec_kernel).
//
// Careful: a barrier mistake would hang the GPU instead of failing the check. A wait for a
// phase that never completes (a wrong parity) or a K tile no warp releases (the producer then
// waits forever on its empty barrier) never returns. In this build the waits are bounded
// (exercises/exercises.cu defines HOPPER_BOUNDED_WAITS; hopper_ptx.cuh): after 4 s every wait
// gives up, and the program fails with one line naming the barrier, the stage and the parity:
//   mbarrier wait timed out: full barrier, stage 2, phase parity 1, block 5 warp 4 (...)
// Try one small shape first:
//   ./build/08_hopper/hopper --check --kernel ex_consumer_barriers --shapes 128x256x1024
// As you receive it, the kernel does not hang: its consumers wait on no barrier, so they always
// reach their releases, and release every K tile once (too early), so every phase of every
// empty barrier gets its 8 arrivals; its results are wrong. Keep one release per K tile per
// warp while you edit.
//
// Hint (README, "The protocol of the ring"): K tile it goes to stage s = it % S, as that
// stage's (it / S)-th use; each use is one phase of full[s] and one of empty[s], and a waiter
// names the phase it waits for by its parity. A fresh barrier counts its phase "-1" as
// complete: the producer, waiting for the phase BEFORE this use (((it / S) & 1) ^ 1), does not
// wait on its first pass; the consumers wait for this use's own phase. A stage is free only
// when no wgmma still reads it: wgmma.wait_group 1 leaves this K tile's group running and
// says the previous one has finished, so that is the stage each warp can give back now; the
// last K tile of an output tile is given back after wait_group 0. Each K tile exactly once: a
// second arrival would complete a phase of the next use. `it` runs on over all of a block's
// output tiles, so in the persistent grid the phases run on from one tile to the next.
// Done when: PASS at every shape, no barrier wait timed out, and about the speed of group16 (its
// row in the chapter README's Results table). `meson test` times it next to group16 and prints the
// ratio; more than 1.5x slower FAILS, with a sentence on what the lesson is about
// (tests/exercise.py).
#pragma once

#include <algorithm>

#include "shared/tensorcore/pad.cuh"
#include "shared/tensorcore/pipelined.cuh"  // grouped_tile
#include "08_hopper/exercises/bounded_wait.cuh"  // the bounded waits (arm_bounded_waits)
#include "shared/hopper/hopper_device.cuh"
#include "shared/hopper/tma_host.cuh"  // opt_in, tensor_map
#include "common/device.h"         // device_sm_count
#include "common/exercise.h"

// Block b of the persistent grid takes the output tiles b, b + gridDim.x, ... in chapter 07's
// grouped order; its barriers' phases run on from one tile to the next.
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    ex_consumer_barriers_kernel(const __grid_constant__ CUtensorMap tm_a,
                                const __grid_constant__ CUtensorMap tm_b, int M, int N, int K,
                                float* __restrict__ C, int group) {
  constexpr int S = kWsStages;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kWsStageBytes, empty0 = full0 + 8 * S;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + kWsBN - 1) / kWsBN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + BK - 1) / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);   // the producer's arrive.expect_tx
      mbar_init(empty0 + 8 * s, 8);  // one arrival per consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();  // the barriers exist before anyone uses them

  // `it` counts this block's K tiles over all its output tiles: stage it % S, phase (it / S) % 2.
  if (wg == 0) {
    // ---- PRODUCER: registers back to the SM; one thread walks the tiles and K ----
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0;
      for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
        const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          // A stage is free once its previous use is over: parity of the phase before this
          // one (a fresh barrier counts its phase "-1" as complete: the first round passes).
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);
          if (!mbar_rearm_ok(full0 + 8 * s, it / S)) return;  // given back early (hopper_ptx.cuh)
          mbar_arrive_expect_tx(full0 + 8 * s, kWsStageBytes);
          tma_load_2d(base + s * kWsStageBytes, &tm_a, kt * BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kWsStageBytes + kWsABytes, &tm_b, kt * BK, tc.n * kWsBN,
                      full0 + 8 * s);
        }
      }
    }
  } else {
    // ---- CONSUMERS: more registers; each warpgroup its 64 rows of every tile ----
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    auto release = [&](int it) {  // this warp is done with the stage of K tile `it`
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    int it = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc[128];
#pragma unroll
      for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        // ---- your code (1 of 3): wait for the copies of K tile `it` into stage s ----
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        // ---- end of your code ----
        pin(acc);
        wgmma_fence();
        wgmma_stage<256>(acc, base + s * kWsStageBytes + row0 * kSwizzleBytes,
                         base + s * kWsStageBytes + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        // ---- your code (2 of 3): give back the stage this warp is done with ----
        if (kt > 0) release(it - 1);
        // ---- end of your code ----
      }
      wgmma_wait<0>();
      pin(acc);
      // ---- your code (3 of 3): the release the loop has left for after it ----
      release(it - 1);
      // ---- end of your code ----
      store_acc<256>(acc, C, M, N, tc.m * kWsBM + row0, tc.n * kWsBN, t);
    }
  }
}

// group16's launch: persistent (one block per SM, each walking its tiles), G = 16.
void launch_ex_consumer_barriers(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
#ifdef EXERCISE_NOT_WRITTEN_CONSUMER_BARRIERS
  exercise_not_written("08_hopper/exercises/consumer_barriers.cuh");
#endif
  pad_operands_if_unaligned(M, N, K, A, Bt);
  // The stages, the barriers and the alignment slack.
  constexpr int kSmem = kWsStages * kWsStageBytes + 16 * kWsStages + 1024;
  static const bool once = (opt_in(ex_consumer_barriers_kernel, kSmem), arm_bounded_waits());
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, kWsBN);
  const int tiles = ((M + kWsBM - 1) / kWsBM) * ((N + kWsBN - 1) / kWsBN);
  const int grid = std::min(tiles, device_sm_count());  // 1 block per SM
  ex_consumer_barriers_kernel<<<grid, 3 * kWarpgroup, kSmem>>>(*ta, *tb, M, N, K, C, 16);
  CUDA_CHECK_LAUNCH();
}
