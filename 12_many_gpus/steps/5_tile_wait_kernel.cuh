// Step 5's GEMM: chapter 09's tile kernel (09_every_shape/steps/1_tile128.cuh, tile_kernel, at
// 128 x 256 with 4 stages) with three changes, each marked "(11)":
//   1. the tiles walk the rows in the order their data arrive (TileWait::blocks: own shard
//      first, then the peers' pieces as the copy engines deliver them), not in row order;
//   2. before the loads of a tile, its producer thread waits until every piece of A the tile's
//      rows touch has arrived: a flag per piece that the copy stream sets after the piece's
//      copy (cuStreamWriteValue32, steps/5_tile_wait.cuh), compared with this launch's number;
//   3. a tile that lies inside this rank's own shard reads it where it is (a second tensor map,
//      on a_shard), without a wait.
// Steps 7 and 9 launch it too, with no wait on A: step 7 rounds its output to BF16 (OutT);
// step 9 adds the peers' BF16 terms before it stores, the producer loading each tile's rows of
// them into the stages once their flags are set (kTerms). Step 10 waits per K slice
// (TileWait::slices).
// The kernel is launched before any piece has arrived and holds every SM while it waits: the
// copies need no SM (copy engines) and the flags are written by the stream's front end, so
// nothing it waits for needs a block of its own. Compiled for sm_90a alone (kernels.cu).
//
// Counterparts: Flux (arXiv 2406.06858: tiles wait on per-tile signals in the GEMM's prologue);
// PyTorch's async-TP and TransformerEngine wait per chunk, between GEMM launches (steps 2-3).
#pragma once

#include <algorithm>

#include "shared/tensorcore/pipelined.cuh"  // grouped_tile
#include "shared/hopper/hopper_device.cuh"
#include "shared/hopper/tma_host.cuh"  // opt_in, tensor_map
#include "common/device.h"             // device_sm_count
#include "12_many_gpus/tile_wait.h"    // (11) TileWait

// (11) Waits (acquire, GPU scope) until *flag >= target, then orders the async proxy's reads
// after it: the TMA loads that follow read what the copy engine wrote before the flag. Bounded:
// after 20 s it gives up (the tile then reads whatever is there and the check fails) rather
// than hang the GPU.
__device__ __forceinline__ void wait_arrived(const unsigned* flag, unsigned target) {
  uint64_t t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (;;) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    if (int(v - target) >= 0) break;  // launch numbers wrap after 2^32 launches
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 > 20000000000ull) break;
    __nanosleep(200);
  }
  asm volatile("fence.proxy.async.global;" ::: "memory");
}

static_assert(kArrivalBlock == kWsBM, "arrival_order's blocks are the tiles' rows");
static_assert(kKUnit == BK, "step 10's K slices are whole K tiles");

// --- Step 9: the peers' terms, added in the epilogue ---------------------------------------------
// (12, step 9) After a tile's K tiles, its producer waits until the pieces of every term that the
// tile's rows touch have arrived, then loads the tile's rows of each term into the stages like
// a K tile: term j's (128, BN) BF16 tile is two stages, rows 0-63 (the first consumer
// warpgroup's) and 64-127 (the second's), each BN / 64 boxes of (64, 64) with the 128-byte
// swizzle. The terms lie in recv16, term j in slot j + 1: rows (j + 1) S + m of one tensor map.
constexpr int kTermBoxBytes = 64 * kSwizzleBytes;  // (64 rows, 64 BF16)
template <int BN, int S>
__device__ __forceinline__ void load_terms(const EpilogueTerms& t, const CUtensorMap* tm_terms,
                                           int m0, int n0, int M, uint32_t base, uint32_t full0,
                                           uint32_t empty0, int& it) {
  const int p0 = piece_of(t.shard, t.pieces, m0);
  const int p1 = piece_of(t.shard, t.pieces, min(M, m0 + kWsBM) - 1);
  for (int j = 0; j < t.count; ++j)
    for (int p = p0; p <= p1; ++p) wait_arrived(t.ready + j * t.pieces + p, t.target);
  for (int j = 0; j < t.count; ++j)
    for (int half = 0; half < 2; ++half, ++it) {
      const int s = it % S;
      mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // as a K tile's stage
      mbar_arrive_expect_tx(full0 + 8 * s, BN / 64 * kTermBoxBytes);
      for (int b = 0; b < BN / 64; ++b)
        tma_load_2d(base + s * kTileStageBytes<BN> + b * kTermBoxBytes, tm_terms, n0 + 64 * b,
                    int((j + 1) * t.shard) + m0 + 64 * half, full0 + 8 * s);
    }
}
// (12, step 9) acc += this warpgroup's rows of a term, from its stage at `stage`: element
// (row, col) of the accumulator (WgmmaAcc: register 4 J + 2 h + e holds row 16 w + lane / 4 +
// 8 h, column 8 J + 2 (lane % 4) + e) is in box col / 64, row `row`, 16-byte chunk
// (col % 64) / 8 = J % 8, stored at chunk J % 8 ^ row % 8 (the swizzle): the 8 rows of a
// quarter-warp hit 8 different chunks, 32 different banks.
template <int BN>
__device__ __forceinline__ void add_term_stage(float (&acc)[BN / 2], const unsigned char* stage,
                                               int t) {
  const int lane = t % 32, w = t / 32;
#pragma unroll
  for (int J = 0; J < BN / 8; ++J)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = 16 * w + lane / 4 + 8 * h;
      const int at = (J / 8) * kTermBoxBytes + row * kSwizzleBytes +
                     (((J % 8) ^ (row % 8)) * 16) + 4 * (lane % 4);
      const float2 v = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(stage + at));
      acc[4 * J + 2 * h] += v.x;
      acc[4 * J + 2 * h + 1] += v.y;
    }
}

// --- The kernel ----------------------------------------------------------------------------------
// (12, step 7) OutT: float, or bf16 for step 7's partials rounded in the epilogue.
// (12, step 9) kTerms: each tile adds `terms` before it stores (FP32 out).
template <int BN, int S, typename OutT = float, bool kTerms = false>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    ag_tile_wait_kernel(const __grid_constant__ CUtensorMap tm_own,
                        const __grid_constant__ CUtensorMap tm_a,
                        const __grid_constant__ CUtensorMap tm_b, int M, int N, int K,
                        OutT* __restrict__ C, int group, const TileWait wait,
                        const __grid_constant__ CUtensorMap tm_terms, const EpilogueTerms terms) {
  static_assert(BN == 128 || BN == 256, "the tiles of this kernel: 128 x 128 and 128 x 256");
  static_assert(!kTerms || sizeof(OutT) == 4, "step 9 sums into FP32");
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
        const BlockWait blk = wait.blocks[tc.m];  // (11) the tc.m-th block to arrive
        const bool own = blk.first < 0;
        for (int f = blk.first; f <= blk.last && !own && wait.slices == 0; ++f)
          wait_arrived(wait.ready + f, wait.target);
        const int row = blk.m * kWsBM - (own ? wait.own_row0 : 0);
        int slice = -1, slice_end = 0;  // (12, step 10) K tiles below slice_end have arrived
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          // (12, step 10) At a slice's first K tile: that slice of every shard the rows touch.
          while (wait.slices > 0 && !own && kt * BK >= slice_end) {
            slice_end = int(split_range(K, wait.slices, BK, ++slice).end);
            for (int sh = blk.first; sh <= blk.last; ++sh)
              wait_arrived(wait.ready + sh * wait.slices + slice, wait.target);
          }
          const int s = it % S;
          // A stage is free once its previous use is over: parity of the phase before this
          // one (a fresh barrier counts its phase "-1" as complete: the first round passes).
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);
          mbar_arrive_expect_tx(full0 + 8 * s, kStageBytes);
          tma_load_2d(base + s * kStageBytes, own ? &tm_own : &tm_a, kt * BK, row,
                      full0 + 8 * s);  // (11) the own shard where it lies
          tma_load_2d(base + s * kStageBytes + kWsABytes, &tm_b, kt * BK, tc.n * BN,
                      full0 + 8 * s);
        }
        if constexpr (kTerms)  // (12, step 9) then the tile's rows of every term, as K tiles are
          load_terms<BN, S>(terms, &tm_terms, blk.m * kWsBM, tc.n * BN, M, base, full0, empty0,
                            it);
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
      const bool vec = N % 4 == 0 && (reinterpret_cast<uintptr_t>(C) & (4 * sizeof(OutT) - 1)) == 0;
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
          OutT* dst = C + int64_t(m) * N + n;
          if constexpr (sizeof(OutT) == 2) {  // (12, step 7) rounded to nearest, 8 bytes a lane
            if (vec && n + 3 < N) {
              const __nv_bfloat162 lo = __floats2bfloat162_rn(v.x, v.y);
              const __nv_bfloat162 hi = __floats2bfloat162_rn(v.z, v.w);
              *reinterpret_cast<uint2*>(dst) = make_uint2(
                  *reinterpret_cast<const uint32_t*>(&lo), *reinterpret_cast<const uint32_t*>(&hi));
            } else {
              const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
              for (int u = 0; u < 4; ++u)
                if (n + u < N) dst[u] = __float2bfloat16_rn(e[u]);
            }
          } else if (vec && n + 3 < N) {
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
      const int m_block = wait.blocks[tc.m].m;  // (11) the rows the producer loaded
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
      if constexpr (kTerms)  // (12, step 9) acc + term 0 + term 1 + ..., this warpgroup's rows
        for (int j = 0; j < terms.count; ++j)
          for (int half = 0; half < 2; ++half, ++it) {
            const int s = it % S;
            mbar_wait(full0 + 8 * s, (it / S) & 1);  // the term's rows have landed
            if (half == wg - 1)
              add_term_stage<BN>(acc, smem_raw + (base - smem_addr(smem_raw)) + s * kStageBytes,
                                 t);
            release(it);
          }
      // Each consumer warp's band (kBandBytes; warps 4-11 of the block), after the stages and
      // the barriers.
      store_acc_staged(acc, m_block * kWsBM + row0, tc.n * BN,
                       reinterpret_cast<float*>(smem_raw + (base - smem_addr(smem_raw)) +
                                                S * kStageBytes + 16 * S) +
                           (threadIdx.x / 32 - 4) * (kBandBytes / 4));
    }
  }
}

// The persistent grid, 128 x 256 tiles with 4 stages of 48 KiB (chapter 08's tile).
void launch_ag_tile_wait_gemm(int M, int N, int K, const bf16* a_shard, int own_rows,
                              const bf16* a_full, int full_rows, const bf16* Bt, float* C,
                              int group, const TileWait& wait) {
  constexpr int BN = 256, S = 4;
  constexpr int kSmem = S * kTileStageBytes<BN> + 16 * S + 1024 + 8 * kBandBytes;
  static const bool once = (opt_in(ag_tile_wait_kernel<BN, S>, kSmem), true);
  (void)once;
  const CUtensorMap* to = tensor_map(a_shard, std::max(own_rows, 1), K, kWsBM);
  const CUtensorMap* ta = tensor_map(a_full, full_rows, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, BN);
  const int tiles = ((M + kWsBM - 1) / kWsBM) * ((N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());  // 1 block per SM, persistent
  ag_tile_wait_kernel<BN, S><<<grid, 3 * kWarpgroup, kSmem>>>(*to, *ta, *tb, M, N, K, C, group,
                                                              wait, *ta, EpilogueTerms{});
  CUDA_CHECK_LAUNCH();
}

// (12, steps 7 and 9) The kernel with nothing to wait for on A (`blocks`: block m is row block m,
// all "own", read from A): the launch both steps share. K % 8 == 0 and A 16-byte aligned (TMA).
// tm_terms: the terms' map (step 9), else null.
template <typename OutT, bool kTerms>
void launch_no_wait(int M, int N, int K, const bf16* A, const bf16* Bt, OutT* C,
                    const BlockWait* blocks, const CUtensorMap* tm_terms,
                    const EpilogueTerms& terms) {
  constexpr int BN = 256, S = 4;
  constexpr int kSmem = S * kTileStageBytes<BN> + 16 * S + 1024 + 8 * kBandBytes;
  static const bool once = (opt_in(ag_tile_wait_kernel<BN, S, OutT, kTerms>, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, BN);
  const int tiles = ((M + kWsBM - 1) / kWsBM) * ((N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());
  const TileWait wait{blocks, nullptr, 0u, 0};
  ag_tile_wait_kernel<BN, S, OutT, kTerms><<<grid, 3 * kWarpgroup, kSmem>>>(
      *ta, *ta, *tb, M, N, K, C, 8, wait, tm_terms ? *tm_terms : *ta, terms);
  CUDA_CHECK_LAUNCH();
}

// (12, step 7) C (M, N) BF16 = A (M, K) Bt (N, K)^T, rounded in the epilogue. On stream 0.
void launch_gemm_bf16_out(int M, int N, int K, const bf16* A, const bf16* Bt, bf16* C,
                          const BlockWait* blocks) {
  launch_no_wait<bf16, false>(M, N, K, A, Bt, C, blocks, nullptr, EpilogueTerms{});
}

// (12, step 9) C (M, N) FP32 = A (M, K) Bt (N, K)^T + the terms, added in each tile's epilogue
// after its rows' pieces of every term have arrived. N % 8 == 0 (the terms' TMA rows). On
// stream 0.
void launch_gemm_sum_terms(int M, int N, int K, const bf16* A, const bf16* Bt, float* C,
                           const BlockWait* blocks, const EpilogueTerms& terms) {
  // Every term's rows through one map of the receive area (slot j + 1: term j), (64, 64) boxes.
  const CUtensorMap* tt = tensor_map_2d(terms.slots, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                                        sizeof(bf16), int((terms.count + 1) * terms.shard), N, 64,
                                        64);
  launch_no_wait<float, true>(M, N, K, A, Bt, C, blocks, tt, terms);
}
