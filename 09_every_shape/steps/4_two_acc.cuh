// Chapter 09, step 4: two accumulators. Step 3's kernel with the K loop alternating between two
// accumulators: the even K tiles of a work unit go into one, the odd into the other, and the two
// are added before the epilogue. A K tile's wgmma group then no longer waits for the previous
// one's (which wrote the other accumulator), so two groups are in flight. That matters where a
// group is short: on the 64-row tiles each warpgroup's wgmma are m64n64 or m64n32, and a K tile
// took about as long as the group's latency, whatever its width (README, "Two accumulators").
// The menu's 64-row tiles in this kernel (step 5 gives them one consumer warpgroup):
//   acc2_64x128, acc2_64x64   two_acc_kernel<64, BN>, each on plan_wave's schedule
//
//   ./build/09_every_shape/every_shape --kernel m64x128,acc2_64x128 --size 1024 --bench
//   tools/steps.py diff acc2_64x128       # against steps/3_menu.cuh
//
// Included once, by 09_every_shape/kernels.cu.
#pragma once

#include "shared/tensorcore/pad.cuh"
#include "shared/tensorcore/pipelined.cuh"  // grouped_tile
#include "shared/hopper/hopper_device.cuh"
#include "09_every_shape/steps/2_split_wave.cuh"  // SplitWorkspace, split_workspace
#include "09_every_shape/steps/3_menu.cuh"        // kMenuStages
#include "shared/hopper/tma_host.cuh"            // opt_in, tensor_map
#include "common/device.h"                   // device_sm_count

// Block b walks its work units (wave_unit: a split tile's slice first, then whole tiles), the
// tiles numbered in chapter 07's grouped order. ws holds plan.splits partial (BM, BN) tiles per
// split tile (MenuTile's order); counters two ints per split tile, zero before and after
// every launch.
template <int BM, int BN, int S>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    two_acc_kernel(const __grid_constant__ CUtensorMap tm_a,
                      const __grid_constant__ CUtensorMap tm_b, int M, int N, int K,
                      float* __restrict__ C, int group, const WavePlan plan,
                      float* __restrict__ ws, int* __restrict__ counters) {
  using Tile = MenuTile<BM, BN>;
  constexpr int WN = Tile::WN, kABytes = BM * kSwizzleBytes;
  constexpr int kStageBytes = kABytes + BN * kSwizzleBytes;
  // The epilogue stages 32 columns at a time, or 16 where WN is no multiple of 32 (144).
  constexpr int kCols = WN % kBandCols == 0 ? kBandCols : 16;
  static_assert(WN % kCols == 0, "the epilogue's bands cover the accumulator");
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStageBytes, empty0 = full0 + 8 * S;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;

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
        const WorkUnit u = wave_unit(plan, blockIdx.x, j);
        if (u.tile < 0) break;
        const TileCoord tc = grouped_tile(u.tile, tiles_m, tiles_n, group);
        for (int kt = u.k_begin; kt < u.k_end; kt += u.k_step, ++it) {
          const int s = it % S;
          // A stage is free once its previous use is over: parity of the phase before this
          // one (a fresh barrier counts its phase "-1" as complete: the first round passes).
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);
          mbar_arrive_expect_tx(full0 + 8 * s, kStageBytes);
          tma_load_2d(base + s * kStageBytes, &tm_a, kt * BK, tc.m * BM, full0 + 8 * s);
          tma_load_2d(base + s * kStageBytes + kABytes, &tm_b, kt * BK, tc.n * BN,
                      full0 + 8 * s);
        }
      }
    }
  } else {
    // ---- CONSUMERS: more registers; each warpgroup its (64, WN) part of every tile ----
    setmaxnreg_inc<232>();
    const int row0 = Tile::row0(wg - 1), col0 = Tile::col0(wg - 1);
    auto release = [&](int it) {  // this warp is done with the stage of K tile `it`
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    // The (64, WN) accumulator through shared memory: each warp owns 16 rows of it (WgmmaAcc),
    // so each warp stages its own band, 32 columns at a time, in rows of 32 + 8 floats (the
    // 8-byte writes of a half-warp's 4 rows land 8 banks apart, as in chapter 07's epilogue),
    // and stores it back as whole 128-byte row pieces, 16 bytes a lane.
    auto store_acc_staged = [&](const float (&acc)[WN / 2], int m0, int n0, float* band) {
      const int lane = t % 32, w = t / 32;
      const bool vec = N % 4 == 0 && (reinterpret_cast<uintptr_t>(C) & 15) == 0;
#pragma unroll
      for (int c = 0; c < WN / kCols; ++c) {
#pragma unroll
        for (int jj = 0; jj < kCols / 8; ++jj)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = 4 * (c * kCols / 8 + jj) + 2 * h;  // the register pair
            *reinterpret_cast<float2*>(
                &band[(lane / 4 + 8 * h) * kBandRow + 8 * jj + 2 * (lane % 4)]) =
                make_float2(acc[r], acc[r + 1]);
          }
        __syncwarp();  // the band is written before lanes read other lanes' values
#pragma unroll
        for (int q = lane; q < 16 * kCols / 4; q += 32) {
          const int row = q / (kCols / 4), col = 4 * (q % (kCols / 4));
          const int m = m0 + 16 * w + row, n = n0 + c * kCols + col;
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
    // A slice of a split tile: its partial tile into the workspace as the registers hold it
    // (MenuTile: a warp instruction writes 512 contiguous bytes), then, once all S slices are
    // there, this block's share of the sum into C.
    auto fixup = [&](const float (&acc)[WN / 2], const WorkUnit& u, const TileCoord& tc) {
      constexpr int kVecs = BM * BN / 4;  // float4 in a partial tile
      const int m0 = tc.m * BM, n0 = tc.n * BN;
      const int c = threadIdx.x - kWarpgroup;  // consumer thread 0-255
      const float4* slices =
          reinterpret_cast<const float4*>(ws) + int64_t(u.tile) * plan.splits * kVecs;
      float4* mine =
          reinterpret_cast<float4*>(ws) + (int64_t(u.tile) * plan.splits + u.slice) * kVecs;
      // Rows and columns inside C only; float4 256 i + c is 8 i columns right of float4 c.
      const bool row_in = m0 + Tile::vec_row(c) < M;
      const int cols_left = N - n0 - Tile::vec_col(c);
#pragma unroll
      for (int i = 0; i < WN / 8; ++i)
        if (row_in && 8 * i < cols_left)
          mine[256 * i + c] =
              make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
      int* arrived = counters + 2 * u.tile;
      int* done = arrived + 1;
      __threadfence();  // this thread's partial reaches the GPU's view before the count does
      consumer_sync();  // all 256 consumer threads have stored theirs
      if (threadIdx.x == kWarpgroup) {
        atomicAdd(arrived, 1);
        while (ld_acquire_gpu(arrived) < plan.splits) {  // the tile's other blocks
        }
      }
      consumer_sync();  // every slice of this tile is in the workspace
      // This block's share: float4 q in [lo, hi), each the sum of its S slices in the order
      // 0 .. S - 1, loaded past L1 (other SMs wrote them). The sums are in order, but the loads
      // need not be: a thread takes two float4 at a time and loads 8 slices of both before it
      // adds, 16 loads in flight instead of one.
      constexpr int kBatch = 8;
      const int lo = int(int64_t(u.slice) * kVecs / plan.splits);
      const int hi = int(int64_t(u.slice + 1) * kVecs / plan.splits);
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
      // With few float4 to a share (many slices), the slices are divided among G groups of
      // threads instead: group g sums slices [g S / G, (g + 1) S / G) of each float4, in order,
      // and group 0 adds the G group sums, in order (the same bits every run), through shared
      // memory (the bands). G = 1: every thread its own float4, all S slices.
      const int share = hi - lo;
      const int G = share <= 64 ? 4 : share <= 128 ? 2 : 1;
      if (G > 1) {
        constexpr int kGroupBatch = 4;
        const int per = 2 * kWarpgroup / G, g = c / per, r = c % per;
        const int q = lo + r;
        const bool in = r < share && m0 + Tile::vec_row(q) < M && n0 + Tile::vec_col(q) < N;
        const int s_lo = g * plan.splits / G, s_hi = (g + 1) * plan.splits / G;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int s0 = s_lo; s0 < s_hi; s0 += kGroupBatch) {
          float4 w[kGroupBatch];
#pragma unroll
          for (int b = 0; b < kGroupBatch; ++b)
            if (in && s0 + b < s_hi) w[b] = __ldcg(slices + int64_t(s0 + b) * kVecs + q);
#pragma unroll
          for (int b = 0; b < kGroupBatch; ++b)
            if (in && s0 + b < s_hi) {
              v.x += w[b].x;
              v.y += w[b].y;
              v.z += w[b].z;
              v.w += w[b].w;
            }
        }
        float4* sums = reinterpret_cast<float4*>(smem_raw + (base - smem_addr(smem_raw)) +
                                                 S * kStageBytes + 16 * S);
        sums[g * per + r] = v;
        consumer_sync();  // every group's sums are in shared memory
        if (g == 0 && in) {
          float4 t4 = sums[r];
          for (int h = 1; h < G; ++h) {
            const float4 x = sums[h * per + r];
            t4.x += x.x;
            t4.y += x.y;
            t4.z += x.z;
            t4.w += x.w;
          }
          const int m = m0 + Tile::vec_row(q), n = n0 + Tile::vec_col(q);
          put(m, n, t4.x, t4.y);
          if (m + 8 < M) put(m + 8, n, t4.z, t4.w);
        }
        consumer_sync();  // group 0 has read the sums before the bands are used again
      }
      for (int q0 = lo + c; G == 1 && q0 < hi; q0 += 4 * kWarpgroup) {
        int q[2];
        bool in[2];
        float4 v[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          q[e] = q0 + e * 2 * kWarpgroup;
          in[e] = q[e] < hi && m0 + Tile::vec_row(q[e]) < M && n0 + Tile::vec_col(q[e]) < N;
          v[e] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
        for (int s0 = 0; s0 < plan.splits; s0 += kBatch) {
          float4 w[2][kBatch];
#pragma unroll
          for (int e = 0; e < 2; ++e)
#pragma unroll
            for (int b = 0; b < kBatch; ++b)
              if (in[e] && s0 + b < plan.splits)
                w[e][b] = __ldcg(slices + int64_t(s0 + b) * kVecs + q[e]);
#pragma unroll
          for (int e = 0; e < 2; ++e)
#pragma unroll
            for (int b = 0; b < kBatch; ++b)
              if (in[e] && s0 + b < plan.splits) {
                v[e].x += w[e][b].x;
                v[e].y += w[e][b].y;
                v[e].z += w[e][b].z;
                v[e].w += w[e][b].w;
              }
        }
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (!in[e]) continue;
          const int m = m0 + Tile::vec_row(q[e]), n = n0 + Tile::vec_col(q[e]);
          put(m, n, v[e].x, v[e].y);
          if (m + 8 < M) put(m + 8, n, v[e].z, v[e].w);
        }
      }
      // Every block of the tile has passed its wait once all have counted themselves done: the
      // last sets both counters back to zero for the next launch.
      if (threadIdx.x == kWarpgroup && atomicAdd(done, 1) == plan.splits - 1) {
        *arrived = 0;
        *done = 0;
      }
    };
    int it = 0;
    for (int j = 0;; ++j) {
      const WorkUnit u = wave_unit(plan, blockIdx.x, j);
      if (u.tile < 0) break;
      const TileCoord tc = grouped_tile(u.tile, tiles_m, tiles_n, group);
      // acc: the even K tiles of the unit (counting from k_begin), acc_odd: the odd ones.
      float acc[WN / 2], acc_odd[WN / 2];
#pragma unroll
      for (int i = 0; i < WN / 2; ++i) acc[i] = acc_odd[i] = 0.0f;
      auto k_tile = [&](float (&a)[WN / 2], int kt) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        pin(acc);
        pin(acc_odd);
        wgmma_fence();
        wgmma_stage<WN>(a, base + s * kStageBytes + row0 * kSwizzleBytes,
                        base + s * kStageBytes + kABytes + col0 * kSwizzleBytes);
        wgmma_commit();
        // The previous K tile's group has finished. It wrote the other accumulator, so it ran
        // beside this one's group instead of before it.
        wgmma_wait<1>();
        pin(acc);
        pin(acc_odd);
        if (kt > u.k_begin) release(it - 1);
        ++it;
      };
      // Two K tiles a round, one into each accumulator; no branch chooses between them (a
      // wgmma whose accumulator depends on a branch is serialized by ptxas).
      int kt = u.k_begin;
      for (; kt + u.k_step < u.k_end; kt += 2 * u.k_step) {
        k_tile(acc, kt);
        k_tile(acc_odd, kt + u.k_step);
      }
      if (kt < u.k_end) k_tile(acc, kt);
      wgmma_wait<0>();
      pin(acc);
      pin(acc_odd);
      release(it - 1);
#pragma unroll
      for (int i = 0; i < WN / 2; ++i) acc[i] += acc_odd[i];  // the K sum, in a fixed order
      if (u.slice >= 0) {
        fixup(acc, u, tc);
        continue;
      }
      // Each consumer warp's band (kBandBytes; warps 4-11 of the block), after the stages and
      // the barriers.
      store_acc_staged(acc, tc.m * BM + row0, tc.n * BN + col0,
                       reinterpret_cast<float*>(smem_raw + (base - smem_addr(smem_raw)) +
                                                S * kStageBytes + 16 * S) +
                           (threadIdx.x / 32 - 4) * (kBandBytes / 4));
    }
  }
}

template <int BM, int BN>
void launch_two_acc(int M, int N, int K, const bf16* A, const bf16* Bt, float* C, int max_splits) {
  constexpr int S = kMenuStages<BM, BN>;
  pad_operands_if_unaligned(M, N, K, A, Bt);
  // The stages, the barriers, the alignment slack and the 8 consumer warps' bands.
  constexpr int kSmem = S * (BM + BN) * kSwizzleBytes + 16 * S + 1024 + 8 * kBandBytes;
  static const bool once = (opt_in(two_acc_kernel<BM, BN, S>, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, BM, kNoPromotion);
  const CUtensorMap* tb = tensor_map(Bt, N, K, BN, kNoPromotion);
  const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
  const WavePlan plan = plan_wave(tiles, (K + BK - 1) / BK, device_sm_count(), max_splits);
  const SplitWorkspace w =
      split_workspace(size_t(plan.split_tiles) * plan.splits * BM * BN, 2 * plan.split_tiles);
  cudaLaunchAttribute cooperative;
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = plan.splits > 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(plan.grid);
  config.blockDim = dim3(3 * kWarpgroup);
  config.dynamicSmemBytes = kSmem;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, two_acc_kernel<BM, BN, S>, *ta, *tb, M, N, K, C, 16,
                                plan, w.partials, w.counters));
  CUDA_CHECK_LAUNCH();
}

// The 64-row tiles on their own, each on plan_wave's schedule (as m64x128 and m64x64 run step
// 3's kernel).
void launch_acc2_64x128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_two_acc<64, 128>(M, N, K, A, Bt, C, 1 << 30);
}
void launch_acc2_64x64(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_two_acc<64, 64>(M, N, K, A, Bt, C, 1 << 30);
}
