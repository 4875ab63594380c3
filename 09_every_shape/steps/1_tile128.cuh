// Chapter 09, step 1: tile128. Chapter 08's staged kernel (its step 4) with the tile's width
// BN and the ring's depth S as template arguments: tile_kernel<BN, S>. The two consumer
// warpgroups still take 64 rows each of a 128-row tile; with BN = 128 each issues wgmma
// m64n128k16 (64 accumulator registers a thread), a stage holds 32 KiB instead of 48, and 6
// stages fit. A shape with few 128 x 256 tiles has twice as many 128 x 128 tiles: 1536^3 has
// 72 of 128 x 256 (0.55 waves on 132 SMs) and 144 of 128 x 128 (1.09 waves); the README's
// waves table lists every shape.
//
//   ./build/09_every_shape/every_shape --kernel staged,tile128 --size 1536 --bench
//   tools/steps.py diff tile128           # against 08_hopper/steps/4_staged.cuh
//
// Included once, by 09_every_shape/kernels.cu.
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
template <int BN, int S>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    tile_kernel(const __grid_constant__ CUtensorMap tm_a,
                const __grid_constant__ CUtensorMap tm_b, int M, int N, int K,
                float* __restrict__ C, int group) {
  static_assert(BN == 128 || BN == 256, "the tiles of this kernel: 128 x 128 and 128 x 256");
  constexpr int kStageBytes = kTileStageBytes<BN>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStageBytes, empty0 = full0 + 8 * S;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
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
          mbar_arrive_expect_tx(full0 + 8 * s, kStageBytes);
          tma_load_2d(base + s * kStageBytes, &tm_a, kt * BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStageBytes + kWsABytes, &tm_b, kt * BK, tc.n * BN,
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
    // The (64, BN) accumulator through shared memory: each warp owns 16 rows of it (WgmmaAcc),
    // so each warp stages its own band, 32 columns at a time, in rows of 32 + 8 floats (the
    // 8-byte writes of a half-warp's 4 rows land 8 banks apart, as in chapter 07's epilogue),
    // and stores it back as whole 128-byte row pieces, 16 bytes a lane.
    auto store_acc_staged = [&](const float (&acc)[BN / 2], int m0, int n0, float* band) {
      const int lane = t % 32, w = t / 32;
      const bool vec = N % 4 == 0 && (reinterpret_cast<uintptr_t>(C) & 15) == 0;
#pragma unroll
      for (int c = 0; c < BN / kBandCols; ++c) {
#pragma unroll
        for (int jj = 0; jj < kBandCols / 8; ++jj)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = 4 * (c * kBandCols / 8 + jj) + 2 * h;  // the register pair
            *reinterpret_cast<float2*>(
                &band[(lane / 4 + 8 * h) * kBandRow + 8 * jj + 2 * (lane % 4)]) =
                make_float2(acc[r], acc[r + 1]);
          }
        __syncwarp();  // the band is written before lanes read other lanes' values
#pragma unroll
        for (int q = lane; q < 16 * kBandCols / 4; q += 32) {
          const int row = q / (kBandCols / 4), col = 4 * (q % (kBandCols / 4));
          const int m = m0 + 16 * w + row, n = n0 + c * kBandCols + col;
          if (m >= M) continue;
          const float4 v = *reinterpret_cast<const float4*>(&band[row * kBandRow + col]);
          float* dst = C + int64_t(m) * N + n;
          if (vec && n + 3 < N) {
            *reinterpret_cast<float4*>(dst) = v;
          } else {
            const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int u = 0; u < 4; ++u)
              if (n + u < N) dst[u] = e[u];
          }
        }
        __syncwarp();  // everyone has read the band before the next one overwrites it
      }
    };
    int it = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage<BN>(acc, base + s * kStageBytes + row0 * kSwizzleBytes,
                        base + s * kStageBytes + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
      // Each consumer warp's band (kBandBytes; warps 4-11 of the block), after the stages and
      // the barriers.
      store_acc_staged(acc, tc.m * kWsBM + row0, tc.n * BN,
                       reinterpret_cast<float*>(smem_raw + (base - smem_addr(smem_raw)) +
                                                S * kStageBytes + 16 * S) +
                           (threadIdx.x / 32 - 4) * (kBandBytes / 4));
    }
  }
}

// The persistent grid in the order of group16 (G = 16), with room for the 8 consumer warps' bands.
template <int BN, int S>
void launch_tile(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  // The stages, the barriers, the alignment slack and the 8 consumer warps' bands.
  constexpr int kSmem = S * kTileStageBytes<BN> + 16 * S + 1024 + 8 * kBandBytes;
  static const bool once = (opt_in(tile_kernel<BN, S>, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, BN);
  const int tiles = ((M + kWsBM - 1) / kWsBM) * ((N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());  // 1 block per SM
  tile_kernel<BN, S><<<grid, 3 * kWarpgroup, kSmem>>>(*ta, *tb, M, N, K, C, 16);
  CUDA_CHECK_LAUNCH();
}
// 128 x 128: 6 stages of 32 KiB (4 of 48 KiB at 128 x 256).
void launch_tile128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_tile<128, 6>(M, N, K, A, Bt, C);
}
