// Chapter 08, experiment: warp_spec_128, step 3's warp_spec at step 2's tile width. Step 3
// changes two things at once: copies and math go to different warps (a producer warpgroup and
// two consumer warpgroups, setmaxnreg), and the tile doubles from 128 x 128 to 128 x 256
// (m64n128 to m64n256). This copy of warp_spec_kernel keeps the first and not the second: the
// (128, 128) tile of tma_pipe, each consumer warpgroup m64n128k16 on 64 rows, the same ring of 4
// stages (now of 32 KiB) and the same launch (one block per tile, row by row). So
// tma_pipe -> warp_spec_128 is warp specialization alone, and warp_spec_128 -> warp_spec the
// tile alone (README.md, "Results"; NOTES.md).
//
//   ./build/08_hopper/hopper --kernel tma_pipe,warp_spec_128,warp_spec --size 4096 --bench
//
// Included once, by 08_hopper/kernels.cu, after the steps.
#pragma once

#include "08_hopper/steps/3_warp_spec.cuh"

constexpr int kWs128BN = 128;
constexpr int kWs128StageBytes = kWsABytes + kWs128BN * kSwizzleBytes;  // 32 KiB

__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    warp_spec_128_kernel(const __grid_constant__ CUtensorMap tm_a,
                         const __grid_constant__ CUtensorMap tm_b, int M, int N, int K,
                     float* __restrict__ C, int group) {
  constexpr int S = kWsStages;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kWs128StageBytes, empty0 = full0 + 8 * S;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + kWs128BN - 1) / kWs128BN;
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
          mbar_arrive_expect_tx(full0 + 8 * s, kWs128StageBytes);
          tma_load_2d(base + s * kWs128StageBytes, &tm_a, kt * BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kWs128StageBytes + kWsABytes, &tm_b, kt * BK, tc.n * kWs128BN,
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
      float acc[64];
#pragma unroll
      for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage<128>(acc, base + s * kWs128StageBytes + row0 * kSwizzleBytes,
                         base + s * kWs128StageBytes + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
      store_acc<128>(acc, C, M, N, tc.m * kWsBM + row0, tc.n * kWs128BN, t);
    }
  }
}

void launch_warp_spec_128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  constexpr int kSmem = kWsStages * kWs128StageBytes + 16 * kWsStages + 1024;
  static const bool once = (opt_in(warp_spec_128_kernel, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, kWs128BN);
  const int tiles = ((M + kWsBM - 1) / kWsBM) * ((N + kWs128BN - 1) / kWs128BN);
  warp_spec_128_kernel<<<tiles, 3 * kWarpgroup, kSmem>>>(*ta, *tb, M, N, K, C, 1);
  CUDA_CHECK_LAUNCH();
}
