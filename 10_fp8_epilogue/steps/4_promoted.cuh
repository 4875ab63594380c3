// Chapter 10, step 4: promoted. The tensor cores do not keep a full FP32 sum of e4m3 products
// (NOTES.md measures it; README.md, "Why"): over a long K, step 3's accumulator loses bits at
// every K tile. Here each K tile's four k32 wgmma start a fresh accumulator (`part`, scale-d 0 on
// the first), and the consumers add it into an FP32 register accumulator (`acc`) with ordinary
// FP32 adds: two-level accumulation, promotion every 128 K (the DeepSeek-V3 report's interval;
// CUTLASS: GmmaFP8Accumulation and its promotion interval, in the FP8 sm90 mainloop that the
// ...FP8FastAccum schedules leave out). The accumulators of 64 x BN need BN / 2 floats a thread
// each: BN = 128 (step 3's fp8_128 is the same tile without promotion, to tell the two costs
// apart). The per-tensor scales still multiply the sum once, at the end, as in step 3.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel promoted,fp8_128 --size 4096 --bench
//   tools/steps.py diff promoted          # against steps/3_fp8.cuh
//
// Included once, by 10_fp8_epilogue/kernels.cu (and, FP8_TEMPLATES_ONLY, by the exercise).
#pragma once

#include "10_fp8_epilogue/steps/3_fp8.cuh"

constexpr int kPromBN = 128;

template <class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    promoted_kernel(const __grid_constant__ CUtensorMap tm_a,
                    const __grid_constant__ CUtensorMap tm_b,
                    const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                    const float* __restrict__ a_dq, const float* __restrict__ b_dq,
                    __nv_bfloat16* D, Epi epi, int group) {
  constexpr int BN = kPromBN, S = kFp8Stages<BN>, kStage = kFp8StageBytes<BN>;
  constexpr int kABytes = kWsBM * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + kFp8BK - 1) / kFp8BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);   // the producer's arrive.expect_tx
      mbar_init(empty0 + 8 * s, 8);  // one arrival per consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();  // the barriers exist before anyone uses them

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0;
      for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
        const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // the stage's last use is over
          mbar_arrive_expect_tx(full0 + 8 * s, kStage);
          tma_load_2d(base + s * kStage, &tm_a, kt * kFp8BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kABytes, &tm_b, kt * kFp8BK, tc.n * BN, full0 + 8 * s);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    const float dq = *a_dq * *b_dq;  // the two per-tensor scales, once per thread
    auto release = [&](int it) {  // this warp is done with the stage of K tile `it`
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    int it = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc[BN / 2], part[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        wgmma_fence();  // the promotion read `part`: done before wgmma writes it again
        const uint32_t a_tile = base + s * kStage + row0 * kSwizzleBytes;
        const uint32_t b_tile = base + s * kStage + kABytes;
#pragma unroll
        for (int k32 = 0; k32 < kFp8BK / 32; ++k32)  // a fresh `part`: scale-d 0 on the first
          wgmma_m64n128k32_e4m3(part, SmemDesc::k_major_sw128(a_tile + 32 * k32),
                                SmemDesc::k_major_sw128(b_tile + 32 * k32), k32 > 0);
        wgmma_commit();
        // `part` complete. No second `part` to fill meanwhile: ptxas serializes every wgmma of a
        // kernel that reads one accumulator while another's wgmma run (C7514; NOTES.md). The
        // other consumer warpgroup's wgmma may run meanwhile (mostly, both wait at once: README).
        wgmma_wait<0>();
        pin(part);
        release(it);
        // The promotion: FP32 adds, rounded to nearest, in registers.
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] += part[i];
      }
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] *= dq;
      store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, tma, &tm_d, D, bands,
                          next_band);
    }
    store_drain(tma);
  }
}

template <class Epi>
void launch_promoted_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const uint8_t *qA = p.qA, *qBt = p.qBt;
  pad_e4m3_if_unaligned(p.M, p.N, K, qA, qBt);
  static const bool once = (opt_in(promoted_kernel<Epi>, kFp8Smem<kPromBN>), true);
  (void)once;
  const CUtensorMap* ta = e4m3_map(qA, p.M, K, kWsBM);
  const CUtensorMap* tb = e4m3_map(qBt, p.N, K, kPromBN);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + kPromBN - 1) / kPromBN);
  const int grid = std::min(tiles, device_sm_count());
  constexpr int kSmem = kFp8Smem<kPromBN>;
  promoted_kernel<Epi><<<grid, 3 * kWarpgroup, kSmem>>>(
      *ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N, K, p.a_dq, p.b_dq, p.D, epi, 16);
  CUDA_CHECK_LAUNCH();
}

// The launchers the program lists (chapter10.h). The exercise's translation unit defines
// FP8_TEMPLATES_ONLY: it compiles the templates it needs, and no launcher twice.
#ifndef FP8_TEMPLATES_ONLY

void launch_promoted(const GemmProblem& p) {
  launch_promoted_with(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
#endif  // FP8_TEMPLATES_ONLY
