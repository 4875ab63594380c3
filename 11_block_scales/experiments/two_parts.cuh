// Chapter 11, experiment: two_parts, a side step from step 2 that gained little. Step 2's kernel
// with two `part` accumulators (pa, pb) in a loop unrolled by two, so that the warpgroup issues
// K tile kt + 1's wgmma into one before it waits for K tile kt's in the other (wgmma_wait<1>)
// and promotes it: the adds of one K tile run while the tensor cores work on the next. 64 more
// registers a thread (acc, pa, pb: 192 of the consumers' 232). The loop is straight-line code
// (the tail peeled): written with the waits under a condition, ptxas could not tell which group
// was in flight and serialized every wgmma (C7514). Within 3 points of step 2 at the M = 4096
// shapes, the tensor pipe 65.5 % busy against 63.2 % at 4096³ (NOTES.md, "Block scales at
// library speed").
//
//   ./build/11_block_scales/block_scales --kernel two_parts,scales_tma --size 4096 --bench
//
// Included once, by 11_block_scales/kernels.cu, after the steps.
#pragma once

#include "11_block_scales/steps/2_scales_tma.cuh"

template <class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    two_parts_kernel(const __grid_constant__ CUtensorMap tm_a,
                     const __grid_constant__ CUtensorMap tm_b,
                     const __grid_constant__ CUtensorMap tm_sa,
                     const __grid_constant__ CUtensorMap tm_sb,
                     const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                     __nv_bfloat16* D, Epi epi, int group) {
  constexpr int BN = kPromBN, S = kTsStages, kStage = kFp8StageBytes<BN>;
  constexpr int kABytes = kWsBM * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const uint32_t scales0 = bands0 + kEpiBytes;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + kFp8BK - 1) / kFp8BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, 8);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0;
      for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
        const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);
          mbar_arrive_expect_tx(full0 + 8 * s, kTsTxBytes);
          const uint32_t sc = scales0 + s * kTsScaleBytes;
          tma_load_2d(base + s * kStage, &tm_a, kt * kFp8BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kABytes, &tm_b, kt * kFp8BK, tc.n * BN, full0 + 8 * s);
          tma_load_2d(sc, &tm_sa, tc.m * kWsBM, kt, full0 + 8 * s);
          tma_load_2d(sc + 4 * kWsBM, &tm_sb, kt & ~3, tc.n, full0 + 8 * s);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    const int row_lo = row0 + WgmmaAcc::row(t, 0);
    auto release = [&](int it) {
      __syncwarp();
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    // Waits for K tile kt (ring position it), reads its scales, issues its four wgmma into p.
    auto issue = [&](float(&p)[BN / 2], int it, int kt) {
      const int s = it % S;
      mbar_wait(full0 + 8 * s, (it / S) & 1);
      const uint32_t sc_at = scales0 + s * kTsScaleBytes;
      float sa_lo, sa_hi, sb;
      asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sa_lo) : "r"(sc_at + 4 * row_lo));
      asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sa_hi) : "r"(sc_at + 4 * (row_lo + 8)));
      asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sb) : "r"(sc_at + 4 * (kWsBM + kt % 4)));
      wgmma_fence();  // p's last promotion is done before wgmma writes it again
      const uint32_t a_tile = base + s * kStage + row0 * kSwizzleBytes;
      const uint32_t b_tile = base + s * kStage + kABytes;
#pragma unroll
      for (int k32 = 0; k32 < kFp8BK / 32; ++k32)
        wgmma_m64n128k32_e4m3(p, SmemDesc::k_major_sw128(a_tile + 32 * k32),
                              SmemDesc::k_major_sw128(b_tile + 32 * k32), k32 > 0);
      wgmma_commit();
      return make_float2(sa_lo * sb, sa_hi * sb);
    };
    int it = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc[BN / 2], pa[BN / 2], pb[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      float2 sca = issue(pa, it, 0), scb;
      int kt = 0;
      // Steady state, straight-line: pa holds K tile kt in flight; kt + 1 and kt + 2 exist.
      for (; kt + 2 < k_tiles; kt += 2) {
        scb = issue(pb, it + kt + 1, kt + 1);
        wgmma_wait<1>();  // pa's group done, pb's in flight
        pin(pa);
        release(it + kt);
        BlockScales{}.promote(acc, pa, sca);
        sca = issue(pa, it + kt + 2, kt + 2);
        wgmma_wait<1>();  // pb's group done, pa's in flight
        pin(pb);
        release(it + kt + 1);
        BlockScales{}.promote(acc, pb, scb);
      }
      if (kt + 1 < k_tiles) {  // two K tiles left: kt in pa, kt + 1
        scb = issue(pb, it + kt + 1, kt + 1);
        wgmma_wait<1>();
        pin(pa);
        release(it + kt);
        BlockScales{}.promote(acc, pa, sca);
        wgmma_wait<0>();
        pin(pb);
        release(it + kt + 1);
        BlockScales{}.promote(acc, pb, scb);
      } else {  // one: kt in pa
        wgmma_wait<0>();
        pin(pa);
        release(it + kt);
        BlockScales{}.promote(acc, pa, sca);
      }
      it += k_tiles;
      store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, tma, &tm_d, D, bands,
                          next_band);
    }
    store_drain(tma);
  }
}

template <class Epi>
void launch_two_parts_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const uint8_t *qA = p.qA_blk, *qBt = p.qBt_blk;
  pad_e4m3_if_unaligned(p.M, p.N, K, qA, qBt);
  static const bool once = (opt_in(two_parts_kernel<Epi>, kTsSmem), true);
  (void)once;
  const CUtensorMap* ta = e4m3_map(qA, p.M, K, kWsBM);
  const CUtensorMap* tb = e4m3_map(qBt, p.N, K, kPromBN);
  const CUtensorMap* tsa = a_scale_map(p.a_dq_blk, p.M, p.K);
  const CUtensorMap* tsb = b_scale_map(p.b_dq_blk, p.N, p.K);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + kPromBN - 1) / kPromBN);
  const int grid = std::min(tiles, device_sm_count());
  two_parts_kernel<Epi><<<grid, 3 * kWarpgroup, kTsSmem>>>(
      *ta, *tb, *tsa, *tsb, td ? *td : *ta, td != nullptr, p.M, p.N, p.K, p.D, epi, 16);
  CUDA_CHECK_LAUNCH();
}

void launch_two_parts(const GemmProblem& p) {
  launch_two_parts_with(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
