// Chapter 10, step 1: bf16_out. Chapter 08's staged kernel (the tile chapter 09's rule takes at
// 4096^3 and 8192^3: 128 x 256, a producer and two consumer warpgroups, a persistent grid in
// group16's order), with the output a model wants: D in BF16, D = alpha * A Bᵀ + beta * C, written
// through shared memory by TMA stores (epilogue.cuh, store_tile_bf16) instead of FP32 stores.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel bf16_out --size 4096 --bench
//   tools/steps.py diff bf16_out          # against 08_hopper/steps/4_staged.cuh
//
// Included once, by 10_fp8_epilogue/kernels.cu (and, FP8_TEMPLATES_ONLY, by the exercise).
#pragma once

#include <algorithm>

#include "10_fp8_epilogue/epilogue.cuh"
#include "shared/tensorcore/pad.cuh"
#include "shared/tensorcore/pipelined.cuh"  // grouped_tile
#include "common/device.h"                  // device_sm_count

// The epilogue of this step: alpha * acc + beta * C(m, n). C is read only where beta != 0 (a
// uniform branch) and only inside the matrix (the tile's edge runs past it). It needs nothing per
// column (Column: empty).
struct AlphaBeta {
  float alpha, beta;
  const __nv_bfloat16* C;
  int M, N;
  struct Column {};
  __device__ __forceinline__ Column column(int) const { return {}; }
  __device__ __forceinline__ float operator()(float acc, int m, int n) const {
    float v = alpha * acc;
    if (beta != 0.0f && m < M && n < N) v += beta * __bfloat162float(C[int64_t(m) * N + n]);
    return v;
  }
  __device__ __forceinline__ float operator()(float acc, int m, int n, Column, int) const {
    return (*this)(acc, m, n);
  }
};

// The tile is (128, BN): 256 here, as chapter 08's; step 5 times BN = 192, 128 and 64 too. Its
// stages, as many as fit beside the barriers and the bands (227 KiB in all): 4 of 48 KiB at
// BN = 256 (chapter 08's), 4 of 40 KiB at 192, 6 of 32 KiB at 128, 8 of 24 KiB at 64 (and
// 5 of 38 KiB at step 10's 176).
template <int BN>
constexpr int kEpiStageBytes = kWsABytes + BN * kSwizzleBytes;
// The shared memory: the stages, the barriers (and the 1024-byte alignment of both the stages
// and the bands), then 8 warps' two bands.
template <int BN>
constexpr int kEpiStages = (227 * 1024 - 1024 - 1024 - kEpiBytes) / kEpiStageBytes<BN>;
template <int BN>
constexpr int kEpiSmem = kEpiStages<BN> * kEpiStageBytes<BN> + 1024 + 1024 + kEpiBytes;
static_assert(kEpiStages<256> == 4 && kEpiStages<192> == 4 && kEpiStages<176> == 5 &&
                  kEpiStages<128> == 6 && kEpiStages<64> == 8,
              "the stages the comment above names (and the records were taken with)");

template <int BN, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    bf16_out_kernel(const __grid_constant__ CUtensorMap tm_a,
                    const __grid_constant__ CUtensorMap tm_b,
                    const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                    __nv_bfloat16* D, Epi epi, int group) {
  constexpr int S = kEpiStages<BN>, kStage = kEpiStageBytes<BN>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;  // 1024-aligned: the bands are swizzle atoms
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
    // ---- PRODUCER: as in chapter 08 ----
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0;
      for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
        const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // the stage's last use is over
          mbar_arrive_expect_tx(full0 + 8 * s, kStage);
          tma_load_2d(base + s * kStage, &tm_a, kt * BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kWsABytes, &tm_b, kt * BK, tc.n * BN, full0 + 8 * s);
        }
      }
    }
  } else {
    // ---- CONSUMERS: each warpgroup its 64 rows of every tile ----
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    auto release = [&](int it) {  // this warp is done with the stage of K tile `it`
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
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
        wgmma_stage<BN>(acc, base + s * kStage + row0 * kSwizzleBytes,
                        base + s * kStage + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
      store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, tma, &tm_d, D, bands,
                          next_band);
    }
    store_drain(tma);
  }
}

// Launches `kernel` (this one, or step 9's, which has the same arguments, tile, threads and
// shared memory) with epilogue `epi` on the persistent grid of group16 (G = 16).
template <int BN, class Epi, class Kernel>
void launch_straight_kernel(Kernel kernel, const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const __nv_bfloat16 *A = p.A, *Bt = p.Bt;
  pad_operands_if_unaligned(p.M, p.N, K, A, Bt);
  const CUtensorMap* ta = tensor_map(A, p.M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, p.N, K, BN);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());  // 1 block per SM
  constexpr int kSmem = kEpiSmem<BN>;
  kernel<<<grid, 3 * kWarpgroup, kSmem>>>(*ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N, K,
                                         p.D, epi, 16);
  CUDA_CHECK_LAUNCH();
}
template <int BN = 256, class Epi>
void launch_bf16_out_with(const GemmProblem& p, const Epi& epi) {
  static const bool once = (opt_in(bf16_out_kernel<BN, Epi>, kEpiSmem<BN>), true);
  (void)once;
  launch_straight_kernel<BN>(bf16_out_kernel<BN, Epi>, p, epi);
}

// The launchers the program lists (chapter10.h). The exercise's translation unit defines
// FP8_TEMPLATES_ONLY: it compiles the templates above with its own policy, and no launcher twice.
#ifndef FP8_TEMPLATES_ONLY

void launch_bf16_out(const GemmProblem& p) {
  launch_bf16_out_with(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
#endif  // FP8_TEMPLATES_ONLY
