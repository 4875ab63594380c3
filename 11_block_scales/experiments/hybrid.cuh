// Chapter 11, an experiment (--kernel sweep): hybrid. Step 4's tall tile on a Stream-K hybrid
// schedule (plan_hybrid, hybrid.h): the last full wave's tiles and the partial wave's are dealt
// to the blocks by K tile, evenly, and the other tiles follow whole. At 8192^3 the 2,048 tiles
// of 256 x 128 are 15 full waves and 68 tiles: whole, the busiest block computes 16 tiles;
// dealt, 200 tiles share 132 blocks (1.52 tiles each), then 14 waves: 15.52 tiles, 3 % less.
// Step 7 could not take it: plan_wave cuts each of the R tiles of the last wave into G / R
// slices, fewer than 2 at R > G / 2 (68, 116 and 104 at three of the issue's shapes).
// A block's range of dealt K tiles may begin inside a tile (a later part: the block stores its
// registers into its own slot of the workspace, then raises its flag) and end inside another
// (that tile's first part: the block owns it, waits for the flags of the blocks after it, adds
// their parts in K order, the same bits every run, and stores the tile through the usual
// epilogue). A later part is its block's first unit, so an owner waits at the end of its range
// for work that began at its start. The parts go out and come back one float a thread an
// instruction (a warp: 128 contiguous bytes), so the registers keep any order.
// Correct, deterministic, and slower than step 4's grid at every shape measured (NOTES.md,
// "A Stream-K hybrid"): the dealt ranges start at K offsets that differ from block to block, so
// the blocks that share rows of A or Bᵀ no longer read the same K tile at about the same time.
// Counterparts: CUTLASS's sm90 Stream-K tile scheduler (data-parallel + Stream-K); chapter 09's
// Stream-K experiment (experiments/stream_k.cuh) dealt every tile.
//
//   ./build/11_block_scales/block_scales --kernel block_straight_256,hybrid --size 8192 --bench
//
// Included once, by 11_block_scales/kernels.cu.
#pragma once

#include "11_block_scales/hybrid.h"               // plan_hybrid, hybrid_unit (host-tested)
#include "11_block_scales/steps/7_split_wave.cuh"  // step 4's tile, step 7's workspace

// A part in the workspace: float 256 i + c is register i of consumer thread c (0-255), slab 0's
// 64 registers, then slab 1's.
constexpr int kHybridPartFloats = kTallBM * kPromBN;  // 32,768: 128 KiB a slot

// A later part of a tile (consumer threads only): into this block's slot, then its flag up.
__device__ __forceinline__ void hybrid_hand_over(const float (&acc0)[kPromBN / 2],
                                                 const float (&acc1)[kPromBN / 2], float* ws,
                                                 int* flags) {
  const int c = threadIdx.x - kWarpgroup;
  float* mine = ws + int64_t(blockIdx.x) * kHybridPartFloats;
#pragma unroll
  for (int i = 0; i < kPromBN / 2; ++i) {
    __stcg(mine + 256 * i + c, acc0[i]);
    __stcg(mine + 256 * (i + kPromBN / 2) + c, acc1[i]);
  }
  __threadfence();  // this thread's part reaches the GPU's view before the flag does
  consumer_sync();  // all 256 consumer threads have stored theirs
  if (threadIdx.x == kWarpgroup) atomicAdd(&flags[blockIdx.x], 1);
}

// The first part of a tile (consumer threads only): blocks blockIdx.x + 1 .. last hold the
// rest; their parts, in that order (K order), added into the registers.
__device__ __forceinline__ void hybrid_take_parts(float (&acc0)[kPromBN / 2],
                                                  float (&acc1)[kPromBN / 2], int last,
                                                  const float* ws, int* flags) {
  const int c = threadIdx.x - kWarpgroup;
  if (threadIdx.x == kWarpgroup)
    for (int p = blockIdx.x + 1; p <= last; ++p) {
      while (ld_acquire_gpu(&flags[p]) == 0) {  // block p's part is in its slot
      }
      flags[p] = 0;  // read by this block alone: down again for the next launch
    }
  consumer_sync();  // every part of the tile is in the workspace
  for (int p = blockIdx.x + 1; p <= last; ++p) {
    const float* part = ws + int64_t(p) * kHybridPartFloats;  // loaded past L1: another SM's
#pragma unroll
    for (int i = 0; i < kPromBN / 2; ++i) {
      acc0[i] += __ldcg(part + 256 * i + c);
      acc1[i] += __ldcg(part + 256 * (i + kPromBN / 2) + c);
    }
  }
}

// Block b walks its units (hybrid_unit: its part of the dealt tiles, then whole tiles), the
// tiles in step 4's grouped order. ws: one part per block; flags: one int per block, zero before
// and after every launch.
template <class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    hybrid_kernel(const __grid_constant__ CUtensorMap tm_a,   // boxes of 128 k x 256 rows
                  const __grid_constant__ CUtensorMap tm_b,   // boxes of 128 k x 128 rows
                  const __grid_constant__ CUtensorMap tm_sa,  // A's scales: (M, KB) floats
                  const __grid_constant__ CUtensorMap tm_sb,  // Bᵀ's: (b_scale_ld, NB)
                  const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                  __nv_bfloat16* D, Epi epi, int group, const HybridPlan plan,
                  float* __restrict__ ws, int* __restrict__ flags) {
  constexpr int BM = kTallBM, BN = kPromBN;
  constexpr int S = kTallStages, kStage = kTallStageBytes;
  constexpr int kABytes = BM * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const uint32_t scales0 = bands0 + kEpiBytes;  // stage s's scales at scales0 + s * kTallScaleBytes
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);   // the producer's arrive.expect_tx (tiles and scales)
      mbar_init(empty0 + 8 * s, 8);  // one arrival per consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();  // the barriers exist before anyone uses them

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0;
      for (int j = 0;; ++j) {
        const WorkUnit u = hybrid_unit(plan, blockIdx.x, j);
        if (u.tile < 0) break;
        const TileCoord tc = grouped_tile(u.tile, tiles_m, tiles_n, group);
        for (int kt = u.k_begin; kt < u.k_end; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // the stage's last use is over
          mbar_arrive_expect_tx(full0 + 8 * s, kTallTxBytes);
          const uint32_t sc = scales0 + s * kTallScaleBytes;
          tma_load_2d(base + s * kStage, &tm_a, kt * kFp8BK, tc.m * BM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kABytes, &tm_b, kt * kFp8BK, tc.n * BN, full0 + 8 * s);
          // A: rows m0 .. m0 + 255 as two of step 2's boxes (rows past M come in as zeros)
          tma_load_2d(sc, &tm_sa, tc.m * BM, kt, full0 + 8 * s);
          tma_load_2d(sc + 4 * kWsBM, &tm_sa, tc.m * BM + kWsBM, kt, full0 + 8 * s);
          tma_load_2d(sc + 4 * BM, &tm_sb, kt & ~3, tc.n * BN / kScaleBlock,  // Bᵀ: kb & ~3 ..
                      full0 + 8 * s);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 128 * (wg - 1);  // this warpgroup's rows: two slabs, row0 and row0 + 64
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    const int row_lo = row0 + WgmmaAcc::row(t, 0);  // the thread's rows: row_lo, +8 (slab 0);
                                                    // row_lo + 64, +72 (slab 1)
    // This warp is done with the stage: its lanes' reads of the scales come before lane 0's
    // arrive (__syncwarp), and the arrive releases them before TMA refills the stage.
    auto release = [&](int it) {
      __syncwarp();
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    int it = 0;
    for (int j = 0;; ++j) {
      const WorkUnit u = hybrid_unit(plan, blockIdx.x, j);
      if (u.tile < 0) break;
      const TileCoord tc = grouped_tile(u.tile, tiles_m, tiles_n, group);
      float acc0[BN / 2], acc1[BN / 2], part[BN / 2];  // slabs 0 and 1, (64, 128) each
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc0[i] = acc1[i] = 0.0f;
      for (int kt = u.k_begin; kt < u.k_end; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the tiles and scales of this K tile landed
        // The multipliers of this K block for the thread's four rows (Bᵀ's is float kt % 4 of
        // the four copied), read while nothing waits for them: the wgmma below do not use them.
        const uint32_t sc_at = scales0 + s * kTallScaleBytes;
        float sa[4], sb;  // rows row_lo, +8, +64, +72
#pragma unroll
        for (int r = 0; r < 4; ++r)
          asm volatile("ld.shared.f32 %0, [%1];\n"
                       : "=f"(sa[r])
                       : "r"(sc_at + 4 * (row_lo + 8 * (r % 2) + 64 * (r / 2))));
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sb) : "r"(sc_at + 4 * (BM + kt % 4)));
        const uint32_t b_tile = base + s * kStage + kABytes;
#pragma unroll
        for (int slab = 0; slab < 2; ++slab) {
          wgmma_fence();  // the promotion read `part`: done before wgmma writes it again
          const uint32_t a_tile = base + s * kStage + (row0 + 64 * slab) * kSwizzleBytes;
#pragma unroll
          for (int k32 = 0; k32 < kFp8BK / 32; ++k32)  // a fresh `part`: scale-d 0 on the first
            wgmma_m64n128k32_e4m3(part, SmemDesc::k_major_sw128(a_tile + 32 * k32),
                                  SmemDesc::k_major_sw128(b_tile + 32 * k32), k32 > 0);
          wgmma_commit();
          wgmma_wait<0>();
          pin(part);
          if (slab == 1) release(it);  // both slabs' wgmma have read the stage
          const float2 sc = make_float2(sa[2 * slab] * sb, sa[2 * slab + 1] * sb);
          if (slab == 0)
            BlockScales{}.promote(acc0, part, sc);
          else
            BlockScales{}.promote(acc1, part, sc);
        }
      }
      if (u.slice >= 0) {  // a later part: the tile's owner stores it
        hybrid_hand_over(acc0, acc1, ws, flags);
        continue;
      }
      if (u.k_end < plan.k_tiles)  // the first part: the later ones added, then stored
        hybrid_take_parts(acc0, acc1, hybrid_last_block(plan, u.tile), ws, flags);
      const int m0 = tc.m * BM + row0;
      store_tile_bf16<BN>(acc0, epi, m0, tc.n * BN, M, N, tma, &tm_d, D, bands, next_band);
      store_tile_bf16<BN>(acc1, epi, m0 + 64, tc.n * BN, M, N, tma, &tm_d, D, bands, next_band);
    }
    store_drain(tma);
  }
}

#ifndef FP8_TEMPLATES_ONLY
// plan_hybrid's schedule for the tall tile at this shape (the launcher's and the menu's).
inline HybridPlan tall_hybrid_plan(const GemmProblem& p) {
  const int tiles = ((p.M + kTallBM - 1) / kTallBM) * ((p.N + kPromBN - 1) / kPromBN);
  return plan_hybrid(tiles, (p.K + kFp8BK - 1) / kFp8BK, device_sm_count());
}

// A plan that deals tiles is launched cooperatively: an owner waits for the blocks after it, so
// the runtime must refuse the launch unless every block can be resident at once. Step 7's
// workspace: one part per block, one flag per block.
template <class Epi>
void launch_hybrid_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const uint8_t *qA = p.qA_blk, *qBt = p.qBt_blk;
  pad_e4m3_if_unaligned(p.M, p.N, K, qA, qBt);  // (the K blocks stay those of the unpadded K)
  static const bool once = (opt_in(hybrid_kernel<Epi>, kTallSmem), true);
  (void)once;
  const CUtensorMap* ta = e4m3_map(qA, p.M, K, kTallBM);
  const CUtensorMap* tb = e4m3_map(qBt, p.N, K, kPromBN);
  const CUtensorMap* tsa = a_scale_map(p.a_dq_blk, p.M, p.K);
  const CUtensorMap* tsb = b_scale_map(p.b_dq_blk, p.N, p.K);
  const CUtensorMap* td = output_map(p);
  const HybridPlan plan = tall_hybrid_plan(p);
  const bool dealt = plan.sk_tiles > 0;
  const WaveWorkspace w =
      wave_workspace(dealt ? size_t(plan.grid) * kHybridPartFloats : 0, dealt ? plan.grid : 0);
  cudaLaunchAttribute cooperative;
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = dealt;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(plan.grid);
  config.blockDim = dim3(3 * kWarpgroup);
  config.dynamicSmemBytes = kTallSmem;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, hybrid_kernel<Epi>, *ta, *tb, *tsa, *tsb,
                                td ? *td : *ta, td != nullptr, p.M, p.N, p.K, p.D, epi, 16, plan,
                                w.partials, w.counters));
  CUDA_CHECK_LAUNCH();
}

void launch_hybrid(const GemmProblem& p) { launch_hybrid_with(p, straight_alpha_beta(p)); }
#endif  // FP8_TEMPLATES_ONLY
