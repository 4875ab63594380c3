// Chapter 11, step 4: tall and tall_tuned. Step 2's kernel on a tile of 256 rows (BM 256, BN
// 128): each consumer warpgroup owns 128 rows, two slabs of 64 (two WgmmaAcc accumulators), and
// runs a K tile's wgmma for one slab into `part`, waits, promotes into that slab's accumulator,
// then the same for the other slab. Its registers: two accumulators and one part, 192 floats of
// its 232. A stage holds 256 rows of A beside the same 128 rows of Bᵀ, so each Bᵀ tile that TMA
// brings in feeds twice the rows (per output element, half the Bᵀ bytes through L2), and one
// K tile's full-barrier wait and release serve twice the math; the promotion's FFMA per output
// element stay as many. Stages: 3 of 48 KiB (step 2 had 5 of 32 KiB).
// What it costs: twice the rows per tile, so half the tiles: at 4096 x 2112 that is 272 tiles,
// 2.06 waves of 132 (step 2: 544, 4.12 waves), and at 128 rows half of every tile is empty.
// tall_tuned therefore puts the tall tile on step 3's menu for step 2 (256 x 128, 128 x 128,
// 128 x 64), timed on the shape's first call.
// DeepGEMM's FP8 kernel with 1D2D scales takes BLOCK_M 256 at BLOCK_N <= 128 in the same way
// (its WAVE_BLOCK_M loop: the math warpgroups' rows in waves of 64); CUTLASS's counterpart is a
// (256, 128) tile of its cooperative block-scaled kernel.
//
//   ./build/11_block_scales/block_scales --kernel tall,scales_tma --size 4096 --bench
//   tools/steps.py diff tall              # against steps/2_scales_tma.cuh
//
// Included once, by 11_block_scales/kernels.cu.
#pragma once

#include "11_block_scales/steps/3_tuned_width.cuh"

constexpr int kTallBM = 256;  // two consumer warpgroups of 128 rows: slabs of 64
// A stage's scales in shared memory: 256 A scales (1024 bytes), then 4 Bᵀ scales (16 bytes); a
// TMA destination is 128-byte aligned, so a stage's take 1152 bytes.
constexpr int kTallScaleBytes = 1152;
constexpr int kTallStageBytes = (kTallBM + kPromBN) * kSwizzleBytes;  // 32 + 16 KiB
// Stages: 3 (a fourth does not fit beside the bands: 232,448 bytes).
constexpr int kTallStages = 3;
constexpr int kTallSmem =
    kTallStages * kTallStageBytes + 1024 + 1024 + kEpiBytes + kTallStages * kTallScaleBytes;
// a stage's copies: the tiles, 256 A scales, 4 Bᵀ scales
constexpr uint32_t kTallTxBytes = kTallStageBytes + 4 * kTallBM + 16;
static_assert(kTallSmem <= 232448, "beyond the opt-in shared memory of sm_90");
static_assert(kTallBM == 2 * kWsBM, "A's scales come as two of step 2's 128-row boxes");

template <class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    tall_kernel(const __grid_constant__ CUtensorMap tm_a,   // boxes of 128 k x 256 rows
                const __grid_constant__ CUtensorMap tm_b,   // boxes of 128 k x 128 rows
                const __grid_constant__ CUtensorMap tm_sa,  // A's scales: (M, KB) floats
                const __grid_constant__ CUtensorMap tm_sb,  // Bᵀ's: (b_scale_ld, NB)
                const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                __nv_bfloat16* D, Epi epi, int group) {
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
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + kFp8BK - 1) / kFp8BK;

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
      for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
        const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
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
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc0[BN / 2], acc1[BN / 2], part[BN / 2];  // slabs 0 and 1, (64, 128) each
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc0[i] = acc1[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
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
      const int m0 = tc.m * BM + row0;
      store_tile_bf16<BN>(acc0, epi, m0, tc.n * BN, M, N, tma, &tm_d, D, bands, next_band);
      store_tile_bf16<BN>(acc1, epi, m0 + 64, tc.n * BN, M, N, tma, &tm_d, D, bands, next_band);
    }
    store_drain(tma);
  }
}

#ifndef FP8_TEMPLATES_ONLY
template <class Epi>
void launch_tall_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const uint8_t *qA = p.qA_blk, *qBt = p.qBt_blk;
  pad_e4m3_if_unaligned(p.M, p.N, K, qA, qBt);  // (the K blocks stay those of the unpadded K)
  static const bool once = (opt_in(tall_kernel<Epi>, kTallSmem), true);
  (void)once;
  const CUtensorMap* ta = e4m3_map(qA, p.M, K, kTallBM);
  const CUtensorMap* tb = e4m3_map(qBt, p.N, K, kPromBN);
  const CUtensorMap* tsa = a_scale_map(p.a_dq_blk, p.M, p.K);
  const CUtensorMap* tsb = b_scale_map(p.b_dq_blk, p.N, p.K);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kTallBM - 1) / kTallBM) * ((p.N + kPromBN - 1) / kPromBN);
  const int grid = std::min(tiles, device_sm_count());
  tall_kernel<Epi><<<grid, 3 * kWarpgroup, kTallSmem>>>(
      *ta, *tb, *tsa, *tsb, td ? *td : *ta, td != nullptr, p.M, p.N, p.K, p.D, epi, 16);
  CUDA_CHECK_LAUNCH();
}

void launch_tall(const GemmProblem& p) {
  launch_tall_with(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}

// --- tall_tuned: the tall tile on step 3's menu -------------------------------------------
// The menu's entries by their tile: 256 rows x 128 (this step), then step 2's 128 x 128 and
// 128 x 64 (launch_scales_width).
constexpr int kTallMenu[] = {256, 128, 64};  // 256: the tall tile; else step 2 at that width
constexpr const char* kTallMenuLabels[] = {"256x128", "128x128", "128x64"};
constexpr int kTallMenuCount = sizeof(kTallMenu) / sizeof(kTallMenu[0]);
static_assert(kTallMenuCount == sizeof(kTallMenuLabels) / sizeof(kTallMenuLabels[0]),
              "a label each");
template <class Epi>
void launch_tall_menu_with(int entry, const GemmProblem& p, const Epi& epi) {
  if (entry == 256) return launch_tall_with(p, epi);
  launch_scales_width_with(entry, p, epi);
}
void launch_tall_menu(int entry, const GemmProblem& p) {
  launch_tall_menu_with(entry, p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
void launch_tall_tuned(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_tall_menu(tuned_width("tall_tuned", launch_tall_menu, chosen, p, kTallMenu,
                               kTallMenuCount, kTallMenuLabels),
                   p);
}
#endif  // FP8_TEMPLATES_ONLY
