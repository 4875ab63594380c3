// Chapter 09, an experiment (--kernel sweep): stream_k and stream_k128. Step 2's kernel on
// Stream-K's schedule (plan_stream_k, schedule.cuh): all K-tiles of all output tiles are dealt
// evenly to the blocks, so no block idles in a last partial wave, whatever the number of tiles.
// A block's range may begin inside a tile (that later part goes to the workspace, slot b, and a
// flag says it is there) and end inside another (the tile's first part: the block owns the
// tile, waits for the later parts' flags, adds them in K order, the same bits on every run, and
// stores the tile). The owner waits only for blocks after it, whose parts came first in their
// ranges.
//   stream_k     stream_k_kernel<256, 4>
//   stream_k128  stream_k_kernel<128, 6>
// Correct and deterministic, and slower than split_wave at every shape measured: each block
// walks its own run of consecutive tiles, so the 132 tiles in work at once lie far apart and
// share no rows of A or Bᵀ in L2 (README, "What limits it now"; NOTES.md).
//
//   ./build/09_every_shape/every_shape --kernel staged,split_wave,stream_k --size 1536 --bench
//
// Included once, by 09_every_shape/kernels.cu.
#pragma once

#include <algorithm>

#include "shared/tensorcore/pad.cuh"
#include "shared/tensorcore/pipelined.cuh"  // grouped_tile
#include "shared/hopper/hopper_device.cuh"
#include "shared/hopper/tma_host.cuh"  // opt_in, tensor_map
#include "09_every_shape/schedule.cuh"  // plan_wave, wave_unit, PartialVec
#include "09_every_shape/steps/2_split_wave.cuh"  // split_workspace, kNoPromotion
#include "common/device.h"         // device_sm_count

// Block b walks its work units (sk_unit: perhaps a later part of a tile, whole tiles, perhaps
// the first part of a tile), the tiles numbered in chapter 07's grouped order. ws holds two
// partial (128, BN) tiles per block (PartialVec's order); flags one int per block, zero before
// and after every launch.
template <int BN, int S>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    stream_k_kernel(const __grid_constant__ CUtensorMap tm_a,
                    const __grid_constant__ CUtensorMap tm_b, int M, int N, int K,
                    float* __restrict__ C, int group, const StreamKPlan plan,
                    float* __restrict__ ws, int* __restrict__ flags) {
  static_assert(BN == 128 || BN == 256, "the tiles of this kernel: 128 x 128 and 128 x 256");
  constexpr int kStageBytes = kTileStageBytes<BN>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStageBytes, empty0 = full0 + 8 * S;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;

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
      for (int j = 0;; ++j) {
        const WorkUnit u = sk_unit(plan, blockIdx.x, j);
        if (u.tile < 0) break;
        const TileCoord tc = grouped_tile(u.tile, tiles_m, tiles_n, group);
        for (int kt = u.k_begin; kt < u.k_end; ++kt, ++it) {
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
    // The meeting of a tile's parts, in PartialVec's order (float4 256 i + ct is 8 i columns
    // right of float4 ct).
    constexpr int kVecs = kWsBM * BN / 4;  // float4 in a partial tile
    const int ct = threadIdx.x - kWarpgroup;  // consumer thread 0-255
    // A part of a tile into slot `slot` (rows and columns inside C only).
    auto store_part = [&](const float (&acc)[BN / 2], const TileCoord& tc, int slot) {
      float4* mine = reinterpret_cast<float4*>(ws) + int64_t(slot) * kVecs;
      const bool row_in = tc.m * kWsBM + PartialVec::row(ct) < M;
      const int cols_left = N - tc.n * BN - PartialVec::col(ct);
#pragma unroll
      for (int i = 0; i < BN / 8; ++i)
        if (row_in && 8 * i < cols_left)
          mine[256 * i + ct] =
              make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
    };
    // A later part of a tile: stored in slot b, then its flag up for the tile's owner.
    auto hand_over = [&](const float (&acc)[BN / 2], const TileCoord& tc) {
      store_part(acc, tc, blockIdx.x);
      __threadfence();  // this thread's part reaches the GPU's view before the flag does
      consumer_sync();  // all 256 consumer threads have stored theirs
      if (threadIdx.x == kWarpgroup) atomicAdd(&flags[blockIdx.x], 1);
    };
    // The first part of a tile that later blocks finish: this block's part (slot G + b: slot b
    // may hold this block's own later part of another tile, not yet read), then theirs (blocks
    // b + 1 .. last, in K order), summed float4 by float4 in that order, into C.
    auto finish_tile = [&](const float (&acc)[BN / 2], const WorkUnit& u, const TileCoord& tc) {
      store_part(acc, tc, plan.grid + blockIdx.x);
      const int last = sk_block_of(plan, int64_t(u.tile) * plan.k_tiles + plan.k_tiles - 1);
      if (threadIdx.x == kWarpgroup)
        for (int p = blockIdx.x + 1; p <= last; ++p) {
          while (ld_acquire_gpu(&flags[p]) == 0) {  // block p's part is in its slot
          }
          flags[p] = 0;  // read by this block alone: down again for the next launch
        }
      __threadfence();  // (for the loads below, as for the parts' stores above)
      consumer_sync();  // every part of the tile is in the workspace, this block's too
      // Two float4 a thread, 8 parts of both loaded before they are added: 16 loads in flight.
      constexpr int kBatch = 8;
      const float4* parts = reinterpret_cast<const float4*>(ws) + int64_t(blockIdx.x) * kVecs;
      const float4* own =
          reinterpret_cast<const float4*>(ws) + int64_t(plan.grid + blockIdx.x) * kVecs;
      const int n_parts = last - int(blockIdx.x) + 1;
      const int m0 = tc.m * kWsBM, n0 = tc.n * BN;
      const bool vec = N % 2 == 0 && (reinterpret_cast<uintptr_t>(C) & 7) == 0;
      auto put = [&](int m, int n, float x, float y) {  // (m, n) and (m, n + 1) of C
        float* dst = C + int64_t(m) * N + n;
        if (vec && n + 1 < N) {
          *reinterpret_cast<float2*>(dst) = make_float2(x, y);
        } else {
          dst[0] = x;
          if (n + 1 < N) dst[1] = y;
        }
      };
      for (int q0 = ct; q0 < kVecs; q0 += 4 * kWarpgroup) {
        int q[2];
        bool in[2];
        float4 v[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          q[e] = q0 + e * 2 * kWarpgroup;
          in[e] = m0 + PartialVec::row(q[e]) < M && n0 + PartialVec::col(q[e]) < N;
          v[e] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
        for (int s0 = 0; s0 < n_parts; s0 += kBatch) {
          float4 w[2][kBatch];
#pragma unroll
          for (int e = 0; e < 2; ++e)
#pragma unroll
            for (int b = 0; b < kBatch; ++b)
              if (in[e] && s0 + b < n_parts)
                w[e][b] = __ldcg((s0 + b == 0 ? own : parts + int64_t(s0 + b) * kVecs) + q[e]);
#pragma unroll
          for (int e = 0; e < 2; ++e)
#pragma unroll
            for (int b = 0; b < kBatch; ++b)
              if (in[e] && s0 + b < n_parts) {
                v[e].x += w[e][b].x;
                v[e].y += w[e][b].y;
                v[e].z += w[e][b].z;
                v[e].w += w[e][b].w;
              }
        }
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (!in[e]) continue;
          const int m = m0 + PartialVec::row(q[e]), n = n0 + PartialVec::col(q[e]);
          put(m, n, v[e].x, v[e].y);
          if (m + 8 < M) put(m + 8, n, v[e].z, v[e].w);
        }
      }
    };
    int it = 0;
    for (int j = 0;; ++j) {
      const WorkUnit u = sk_unit(plan, blockIdx.x, j);
      if (u.tile < 0) break;
      const TileCoord tc = grouped_tile(u.tile, tiles_m, tiles_n, group);
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = u.k_begin; kt < u.k_end; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage<BN>(acc, base + s * kStageBytes + row0 * kSwizzleBytes,
                        base + s * kStageBytes + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > u.k_begin) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
      if (u.slice >= 0) {  // a later part: the tile's owner stores it
        hand_over(acc, tc);
        continue;
      }
      if (u.k_end < plan.k_tiles) {  // the first part: this block stores the tile
        finish_tile(acc, u, tc);
        continue;
      }
      // Each consumer warp's band (kBandBytes; warps 4-11 of the block), after the stages and
      // the barriers.
      store_acc_staged(acc, tc.m * kWsBM + row0, tc.n * BN,
                       reinterpret_cast<float*>(smem_raw + (base - smem_addr(smem_raw)) +
                                                S * kStageBytes + 16 * S) +
                           (threadIdx.x / 32 - 4) * (kBandBytes / 4));
    }
  }
}

// plan_stream_k's grid in the order of group16 (G = 16), launched cooperatively: an owner waits
// for the blocks after it, so every block must be resident at once.
template <int BN, int S>
void launch_stream_k_tile(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  // The stages, the barriers, the alignment slack and the 8 consumer warps' bands.
  constexpr int kSmem = S * kTileStageBytes<BN> + 16 * S + 1024 + 8 * kBandBytes;
  static const bool once = (opt_in(stream_k_kernel<BN, S>, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kWsBM, kNoPromotion);
  const CUtensorMap* tb = tensor_map(Bt, N, K, BN, kNoPromotion);
  const int tiles = ((M + kWsBM - 1) / kWsBM) * ((N + BN - 1) / BN);
  const StreamKPlan plan = plan_stream_k(tiles, (K + BK - 1) / BK, device_sm_count());
  // Step 2's workspace: two partial tiles per block (a later part, slot b; a first part,
  // slot G + b), and its counters as one flag per block (zero before and after every launch).
  const SplitWorkspace w = split_workspace(size_t(2 * plan.grid) * kWsBM * BN, plan.grid);
  cudaLaunchAttribute cooperative;
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(plan.grid);
  config.blockDim = dim3(3 * kWarpgroup);
  config.dynamicSmemBytes = kSmem;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, stream_k_kernel<BN, S>, *ta, *tb, M, N, K, C, 16, plan,
                                w.partials, w.counters));
  CUDA_CHECK_LAUNCH();
}
void launch_stream_k(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_stream_k_tile<256, 4>(M, N, K, A, Bt, C);
}
void launch_stream_k128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_stream_k_tile<128, 6>(M, N, K, A, Bt, C);
}
