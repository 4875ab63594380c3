// Chapter 08, step 3: warp_spec, and its launches raster, persistent and group16. Warp
// specialization: a producer warpgroup whose one thread only issues the TMA copies (setmaxnreg
// 40: it gives its registers back) and two consumer warpgroups that only compute (setmaxnreg
// 232), each m64n256k16 on 64 rows of a (128, 256) tile, through a ring of 4 stages of 48 KiB.
// The launches differ in the grid only (launch_warp_spec_grid):
//   warp_spec   one block per tile, row by row
//   raster      the grouped block order (chapter 07's grouped_tile), G = 8
//   persistent  one block per SM, each walking its tiles: the barriers' phases run on, so the
//               producer fills the next tile's stages while the consumers store this one
//   group16     persistent, G = 16
//
//   ./build/08_hopper/hopper --kernel warp_spec,raster,persistent,group16 --size 4096 --bench
//   tools/steps.py diff warp_spec         # against steps/2_tma.cuh
//
// Included once, by 08_hopper/kernels.cu (experiments/cluster.cuh is a copy with clusters).
#pragma once

#include <algorithm>

#include "shared/tensorcore/pad.cuh"
#include "shared/tensorcore/pipelined.cuh"  // grouped_tile
#include "shared/hopper/hopper_device.cuh"
#include "shared/hopper/tma_host.cuh"  // opt_in, tensor_map
#include "common/device.h"         // device_sm_count

// The grid walks the output tiles in chapter 07's grouped order (group 1: row by row): block b
// takes tiles b, b + gridDim.x, ... A grid of one block per tile is the plain launch; a grid of
// one block per SM is persistent: each block keeps its barriers' phases running from one tile
// to the next, so the producer loads the next tile while the consumers store this one.
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    warp_spec_kernel(const __grid_constant__ CUtensorMap tm_a,
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
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage<256>(acc, base + s * kWsStageBytes + row0 * kSwizzleBytes,
                         base + s * kWsStageBytes + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
      store_acc<256>(acc, C, M, N, tc.m * kWsBM + row0, tc.n * kWsBN, t);
    }
  }
}

// Every launch of this file: the block order's G (grouped_tile; 1: row by row) and the grid
// (one block per tile, or persistent: one block per SM, each walking its tiles).
static void launch_warp_spec_grid(int M, int N, int K, const bf16* A, const bf16* Bt, float* C,
                                  int group, bool persistent) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  // The stages, the barriers and the alignment slack.
  constexpr int kSmem = kWsStages * kWsStageBytes + 16 * kWsStages + 1024;
  static const bool once = (opt_in(warp_spec_kernel, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, kWsBN);
  const int tiles = ((M + kWsBM - 1) / kWsBM) * ((N + kWsBN - 1) / kWsBN);
  const int grid = persistent ? std::min(tiles, device_sm_count()) : tiles;  // 1 block per SM
  warp_spec_kernel<<<grid, 3 * kWarpgroup, kSmem>>>(*ta, *tb, M, N, K, C, group);
  CUDA_CHECK_LAUNCH();
}
void launch_warp_spec(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_warp_spec_grid(M, N, K, A, Bt, C, 1, false);
}
void launch_hopper_raster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_warp_spec_grid(M, N, K, A, Bt, C, 8, false);  // G = 8 (chapter 07 settled on 16)
}
void launch_persistent(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_warp_spec_grid(M, N, K, A, Bt, C, 8, true);
}
// The persistent grid's 132 blocks cover 16 tile rows and 9 tile columns at once: about as
// many rows of A (16 x 128) as of Bᵀ (9 x 256), the least operand data for that many tiles.
void launch_group16(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_warp_spec_grid(M, N, K, A, Bt, C, 16, true);
}
