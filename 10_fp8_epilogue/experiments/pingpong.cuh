// Chapter 10, experiment: pingpong, the epilogue overlapped with the next tile's math. In every
// step so far both consumer warpgroups work on one tile (64 rows each) and reach its epilogue
// together: while they add, round and store, no wgmma is issued. Where K is short the epilogue
// is a large share of a tile's time (4096x32768x512: 4 K tiles of FP8, then a 128 x 256 tile's
// epilogue). Here each consumer warpgroup owns whole tiles of (128, 128), the block's tiles taken
// in turn (tile j: warpgroup j % 2), and their main loops take turns on the tensor cores: tile j's
// wgmma are issued after tile j - 1's (a `turn` barrier each way), so while one warpgroup runs
// its epilogue the other issues its next tile's math. One producer feeds both through one ring
// of stages, in tile order. The operands are FP8 (per-tensor scales, as step 3) or BF16 (as
// steps 1-2), the epilogue functor any of steps 1-2's.
//
// The cost: a (128, 128) tile reads 32 KiB a K tile for 128 x 128 outputs where step 3's (128,
// 256) tile reads 48 KiB for twice as many; each warpgroup holds a whole tile's accumulator
// (two m64n128 halves, 128 registers a thread).
// Counterparts: CUTLASS's KernelTmaWarpSpecializedPingpong (its OrderedSequenceBarrier is the
// turn barriers here); fast.cu's and DeepGEMM's kernels keep the cooperative form.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel fp8_tuned,fp8_pingpong --shapes 4096x32768x512 --bench
//
// Included once, by 10_fp8_epilogue/kernels.cu, after the steps.
#pragma once

#include "10_fp8_epilogue/steps/10_straight.cuh"

constexpr int kPpBN = 128;                       // a warpgroup's tile: (128, 128)
constexpr int kPpStages = kEpiStages<kPpBN>;     // 6 of 32 KiB
constexpr int kPpStageBytes = kEpiStageBytes<kPpBN>;
constexpr int kPpSmem = kEpiSmem<kPpBN>;

template <bool kFp8, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    pingpong_kernel(const __grid_constant__ CUtensorMap tm_a,
                    const __grid_constant__ CUtensorMap tm_b,
                    const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                    const float* __restrict__ a_dq, const float* __restrict__ b_dq,
                    __nv_bfloat16* D, Epi epi, int group) {
  constexpr int BN = kPpBN, S = kPpStages, kStage = kPpStageBytes;
  constexpr int kBK = kFp8 ? kFp8BK : BK;  // a K tile: one 128-byte row either way
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t turn0 = empty0 + 8 * S;  // turn0 + 8 x: warpgroup x's turn to issue its math
  const uint32_t bands0 = full0 + 1024;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + kBK - 1) / kBK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);   // the producer's arrive.expect_tx
      mbar_init(empty0 + 8 * s, 4);  // one arrival per warp of the one warpgroup that reads it
    }
    mbar_init(turn0, kWarpgroup);      // every thread of the other warpgroup arrives
    mbar_init(turn0 + 8, kWarpgroup);
    fence_barrier_init();
  }
  __syncthreads();  // the barriers exist before anyone uses them

  // `it` counts the block's K tiles over all its output tiles: tile j's are j k_tiles onwards.
  if (wg == 0) {
    // ---- PRODUCER: every tile of the block in order, whichever warpgroup will read it ----
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0;
      for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
        const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // the stage's last use is over
          mbar_arrive_expect_tx(full0 + 8 * s, kStage);
          tma_load_2d(base + s * kStage, &tm_a, kt * kBK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kWsABytes, &tm_b, kt * kBK, tc.n * BN, full0 + 8 * s);
        }
      }
    }
  } else {
    // ---- CONSUMERS: warpgroup x = wg - 1 takes the block's tiles j = x, x + 2, ... ----
    setmaxnreg_inc<232>();
    const int x = wg - 1;
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    const float dq = kFp8 ? *a_dq * *b_dq : 1.0f;
    auto release = [&](int it) {  // this warp is done with the stage of K tile `it`
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    int j = x;
    for (int b = blockIdx.x + x * gridDim.x; b < out_tiles; b += 2 * gridDim.x, j += 2) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float lo[BN / 2], hi[BN / 2];  // rows 0-63 and 64-127 of the tile
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) lo[i] = hi[i] = 0.0f;
      // Tile j's math after tile j - 1's has been issued: the (j - 1) / 2-th phase of this
      // warpgroup's turn barrier (tile 0 goes first).
      if (j > 0) mbar_wait(turn0 + 8 * x, ((j - 1) / 2) & 1);
      int it = j * k_tiles;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        pin(lo);
        pin(hi);
        wgmma_fence();
        const uint32_t a = base + s * kStage, bt = a + kWsABytes;
        if constexpr (kFp8) {
          wgmma_stage_e4m3<BN>(lo, a, bt);
          wgmma_stage_e4m3<BN>(hi, a + 64 * kSwizzleBytes, bt);
        } else {
          wgmma_stage<BN>(lo, a, bt);
          wgmma_stage<BN>(hi, a + 64 * kSwizzleBytes, bt);
        }
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(lo);
        pin(hi);
        if (kt > 0) release(it - 1);
      }
      // Every wgmma of the tile is issued: the other warpgroup's turn (its next tile, j + 1).
      mbar_arrive(turn0 + 8 * (1 - x));
      wgmma_wait<0>();
      pin(lo);
      pin(hi);
      release(it - 1);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) lo[i] *= dq, hi[i] *= dq;
      // The epilogue, while the other warpgroup's wgmma run.
      store_tile_bf16<BN>(lo, epi, tc.m * kWsBM, tc.n * BN, M, N, tma, &tm_d, D, bands, next_band);
      store_tile_bf16<BN>(hi, epi, tc.m * kWsBM + 64, tc.n * BN, M, N, tma, &tm_d, D, bands,
                          next_band);
    }
    store_drain(tma);
  }
}

template <bool kFp8, class Epi>
void launch_pingpong_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const CUtensorMap *ta, *tb;
  if constexpr (kFp8) {
    const uint8_t *A = p.qA, *Bt = p.qBt;
    pad_e4m3_if_unaligned(p.M, p.N, K, A, Bt);
    ta = e4m3_map(A, p.M, K, kWsBM);
    tb = e4m3_map(Bt, p.N, K, kPpBN);
  } else {
    const __nv_bfloat16 *A = p.A, *Bt = p.Bt;
    pad_operands_if_unaligned(p.M, p.N, K, A, Bt);
    ta = tensor_map(A, p.M, K, kWsBM);
    tb = tensor_map(Bt, p.N, K, kPpBN);
  }
  static const bool once = (opt_in(pingpong_kernel<kFp8, Epi>, kPpSmem), true);
  (void)once;
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + kPpBN - 1) / kPpBN);
  const int grid = std::min(tiles, device_sm_count());  // 1 block per SM, two tiles at a time
  pingpong_kernel<kFp8, Epi><<<grid, 3 * kWarpgroup, kPpSmem>>>(
      *ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N, K, p.a_dq, p.b_dq, p.D, epi, 16);
  CUDA_CHECK_LAUNCH();
}

void launch_fp8_pingpong(const GemmProblem& p) {
  launch_pingpong_with<true>(p, straight_alpha_beta(p));
}
void launch_bias_gelu_pingpong(const GemmProblem& p) {
  launch_pingpong_with<false>(p, straight_bias_gelu(p));
}
