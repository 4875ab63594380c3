// Chapter 11, step 8: block_fill. Step 2's kernel at a width that is no power of two, 56
// columns, so that one row of tiles fills the SMs: at 128 x 7168 (a decoding step) 128 tiles of
// 128 x 56 keep 128 of the 132 SMs streaming Bᵀ, where step 3's 128 x 64 kept 112 and 128 x 128
// kept 56. Three things follow from the width:
// - A 56-wide tile can straddle two 128-wide Bᵀ scale blocks (the tile from column 112 holds 16
//   columns of one and 40 of the next). The producer copies two Bᵀ scales a K block (a box of
//   4 x 2 floats: the tile's first block and the next; past the last block TMA writes zeros,
//   never used), and each 8-column group of the accumulator takes its block's scale. How many
//   groups lie in the first block (F, 1 .. 7) is known per tile: the K loop is compiled once
//   for each F and a branch a tile picks the copy, so the promotion stays step 2's FFMAs.
// - 56 is no multiple of the 64-column band: the consumers store their elements straight from
//   the registers into D (a BF16 pair a store). At 128 x 7168 D is 1.6 % of Bᵀ's bytes.
// - Without the bands, 9 stages fit (step 2: 7 at 64).
// block_fill is step 7's menu with this width as one entry more, timed at every shape.
// DeepGEMM chooses its BLOCK_N among the multiples of 8 by the waves it gives on the SMs, and
// takes two Bᵀ scales where a block straddles two (its num_former_iters, dispatched to a
// constant as here); CUTLASS's tiles are fixed per kernel, its heuristics pick among kernels.
//
//   ./build/11_block_scales/block_scales --kernel block_wave,block_fill \
//       --shapes 128x7168x16384 --bench
//   tools/steps.py diff block_fill        # against steps/2_scales_tma.cuh
//
// Included once, by 11_block_scales/kernels.cu.
#pragma once

#include "11_block_scales/steps/7_split_wave.cuh"  // step 7's menu; step 2's scale maps
#include <type_traits>  // std::integral_constant

constexpr int kFillBN = 56;  // 7168 / 56 = 128 tiles at one tile row
// A stage's scales in shared memory: 128 A scales (512 bytes), then 2 x 4 Bᵀ scales (32 bytes);
// 640 bytes a stage, as step 2's. No bands: as many stages as fit beside the barriers.
template <int BN>
constexpr int kFillStagesOf = (232448 - 1024 - 1024) / (kFp8StageBytes<BN> + kTsScaleBytes);
template <int BN>
constexpr int kFillSmemOf =
    kFillStagesOf<BN> * kFp8StageBytes<BN> + 1024 + 1024 + kFillStagesOf<BN> * kTsScaleBytes;
template <int BN>  // a stage's copies: the tiles, 128 A scales, 2 x 4 Bᵀ scales
constexpr uint32_t kFillTxBytesOf = kFp8StageBytes<BN> + 4 * kWsBM + 32;
static_assert(kFillStagesOf<kFillBN> == 9 && kFillSmemOf<kFillBN> <= 232448,
              "9 stages of 23 KiB and their scales in the opt-in shared memory of sm_90");

// The promotion with two Bᵀ scales: the thread's registers 4j .. 4j + 3 are columns 8j .. 8j + 7
// of the tile (WgmmaAcc::col); the first F groups take sc0 (the tile's first Bᵀ block), the
// others sc1. F is a constant here: the kernel compiles its K loop once per F (with_former), so
// each FFMA reads one of four fixed multipliers, as step 2's read one of two. Chosen at run time
// inside the loop instead (a select a group, a pinned multiplier a group, or a branch a K
// tile), the same kernel 64 wide ran 7-15 % slower than with one scale at 128 x 7168 x 16384
// (NOTES.md, "Step 8").
struct TwoBlockScales {
  template <int F, int R>
  __device__ __forceinline__ static void promote(float (&acc)[R], const float (&part)[R],
                                                 float2 sc0, float2 sc1) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const float2 sc = i / 4 < F ? sc0 : sc1;  // a constant choice: i and F are
      acc[i] = fmaf(part[i], (i % 4) < 2 ? sc.x : sc.y, acc[i]);
    }
  }
};
// fn(integral_constant<int, former>) for former in 1 .. G: one uniform branch a tile picks the
// copy of fn compiled for it (a tile's first column is a multiple of 8, so at least one group
// lies in its first Bᵀ block). DeepGEMM dispatches its num_former_iters to a constant the same
// way.
template <int G, class Fn>
__device__ __forceinline__ void with_former(int former, Fn&& fn) {
  if constexpr (G > 1) {
    if (former != G) return with_former<G - 1>(former, fn);
  }
  fn(std::integral_constant<int, G>{});
}

// One warpgroup's (64, BN) accumulator, rows from m0 and columns from n0, through `epi` into D,
// straight from the registers (WgmmaAcc's map): a BF16 pair a store where D's rows keep pairs
// 4-byte aligned, else element by element; masked at M and N.
template <int BN, class Epi>
__device__ __forceinline__ void store_tile_direct(const float (&acc)[BN / 2], const Epi& epi,
                                                  int m0, int n0, int M, int N,
                                                  __nv_bfloat16* D) {
  const int t = threadIdx.x % kWarpgroup;
  const bool pairs = N % 2 == 0 && reinterpret_cast<uintptr_t>(D) % 4 == 0;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int n = n0 + WgmmaAcc::col(t, 4 * j);  // the pair n, n + 1
    const typename Epi::Column col = epi.column(n);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = 4 * j + 2 * h, m = m0 + WgmmaAcc::row(t, r);
      if (m >= M || n >= N) continue;
      const float v0 = epi(acc[r], m, n, col, 0), v1 = epi(acc[r + 1], m, n + 1, col, 1);
      __nv_bfloat16* d = D + int64_t(m) * N + n;
      if (pairs) {  // N even: n + 1 < N too
        *reinterpret_cast<__nv_bfloat162*>(d) = __floats2bfloat162_rn(v0, v1);
      } else {
        d[0] = __float2bfloat16_rn(v0);
        if (n + 1 < N) d[1] = __float2bfloat16_rn(v1);
      }
    }
  }
}

template <int BN, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    fill_kernel(const __grid_constant__ CUtensorMap tm_a,
                const __grid_constant__ CUtensorMap tm_b,
                const __grid_constant__ CUtensorMap tm_sa,  // A's scales: (M, KB) floats
                const __grid_constant__ CUtensorMap tm_sb,  // Bᵀ's: (b_scale_ld, NB), boxes 4 x 2
                int M, int N, int K, __nv_bfloat16* D, Epi epi, int group) {
  static_assert(BN == 56 || BN == 64, "the widths with a wgmma wrapper; a tile's columns lie "
                "in at most two Bᵀ scale blocks, in groups of 8");
  constexpr int S = kFillStagesOf<BN>, kStage = kFp8StageBytes<BN>;
  constexpr int kABytes = kWsBM * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t scales0 = full0 + 1024;  // stage s's scales at scales0 + s * kTsScaleBytes
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
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
          mbar_arrive_expect_tx(full0 + 8 * s, kFillTxBytesOf<BN>);
          const uint32_t sc = scales0 + s * kTsScaleBytes;
          tma_load_2d(base + s * kStage, &tm_a, kt * kFp8BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kABytes, &tm_b, kt * kFp8BK, tc.n * BN, full0 + 8 * s);
          tma_load_2d(sc, &tm_sa, tc.m * kWsBM, kt, full0 + 8 * s);    // A: rows m0 .. m0 + 127
          tma_load_2d(sc + 4 * kWsBM, &tm_sb, kt & ~3, tc.n * BN / kScaleBlock,  // Bᵀ: kb & ~3 ..
                      full0 + 8 * s);                                // .. + 3 of 2 N blocks
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const int row_lo = row0 + WgmmaAcc::row(t, 0);  // the thread's rows in the tile: row_lo, +8
    // This warp is done with the stage: its lanes' reads of the scales come before lane 0's
    // arrive (__syncwarp), and the arrive releases them before TMA refills the stage.
    auto release = [&](int it) {
      __syncwarp();
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    int it = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      // The tile's 8-column groups in its first Bᵀ block (BN / 8: the whole tile in one block).
      const int edge = (tc.n * BN / kScaleBlock + 1) * kScaleBlock - tc.n * BN;
      const int former = min(edge, BN) / 8;
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      with_former<BN / 8>(former, [&](auto kFormer) {  // the K loop, for this tile's F
        float part[BN / 2];
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(full0 + 8 * s, (it / S) & 1);  // the tiles and scales of this K tile landed
          // The multipliers of this K block for the thread's two rows, in the tile's first Bᵀ
          // block (sc0) and the next (sc1): floats kt % 4 of the two rows of four copied.
          const uint32_t sc_at = scales0 + s * kTsScaleBytes;
          float sa_lo, sa_hi, sb0, sb1;
          asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sa_lo) : "r"(sc_at + 4 * row_lo));
          asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sa_hi) : "r"(sc_at + 4 * (row_lo + 8)));
          asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sb0) : "r"(sc_at + 4 * (kWsBM + kt % 4)));
          asm volatile("ld.shared.f32 %0, [%1];\n"
                       : "=f"(sb1)
                       : "r"(sc_at + 4 * (kWsBM + 4 + kt % 4)));
          const float2 sc0 = make_float2(sa_lo * sb0, sa_hi * sb0);
          const float2 sc1 = make_float2(sa_lo * sb1, sa_hi * sb1);
          wgmma_fence();  // the promotion read `part`: done before wgmma writes it again
          const uint32_t a_tile = base + s * kStage + row0 * kSwizzleBytes;
          const uint32_t b_tile = base + s * kStage + kABytes;
#pragma unroll
          for (int k32 = 0; k32 < kFp8BK / 32; ++k32)  // a fresh `part`: scale-d 0 on the first
            if constexpr (BN == 56)
              wgmma_m64n56k32_e4m3(part, SmemDesc::k_major_sw128(a_tile + 32 * k32),
                                   SmemDesc::k_major_sw128(b_tile + 32 * k32), k32 > 0);
            else
              wgmma_m64n64k32_e4m3(part, SmemDesc::k_major_sw128(a_tile + 32 * k32),
                                   SmemDesc::k_major_sw128(b_tile + 32 * k32), k32 > 0);
          wgmma_commit();
          wgmma_wait<0>();
          pin(part);
          release(it);
          TwoBlockScales::promote<decltype(kFormer)::value>(acc, part, sc0, sc1);
        }
      });
      store_tile_direct<BN>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, D);
    }
  }
}

#ifndef FP8_TEMPLATES_ONLY
template <int BN, class Epi>
void launch_fill_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const uint8_t *qA = p.qA_blk, *qBt = p.qBt_blk;
  pad_e4m3_if_unaligned(p.M, p.N, K, qA, qBt);  // (the K blocks stay those of the unpadded K)
  static const bool once = (opt_in(fill_kernel<BN, Epi>, kFillSmemOf<BN>), true);
  (void)once;
  const CUtensorMap* ta = e4m3_map(qA, p.M, K, kWsBM);
  const CUtensorMap* tb = e4m3_map(qBt, p.N, K, BN);
  const CUtensorMap* tsa = a_scale_map(p.a_dq_blk, p.M, p.K);
  const CUtensorMap* tsb = b_scale_map(p.b_dq_blk, p.N, p.K, 2);  // two N blocks a box
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());
  constexpr int kSmem = kFillSmemOf<BN>;
  fill_kernel<BN, Epi><<<grid, 3 * kWarpgroup, kSmem>>>(*ta, *tb, *tsa, *tsb, p.M, p.N, p.K, p.D,
                                                        epi, 16);
  CUDA_CHECK_LAUNCH();
}

// Step 7's menu and 128 x 56 as one entry more, step 5's rule first, the straight functor.
constexpr int kFillWaveMenu[] = {kWaveEntry, 256, 128, 64, kFillBN};
constexpr const char* kFillWaveLabels[] = {"256x128 step 7", "256x128", "128x128", "128x64",
                                           "128x56"};
static_assert(sizeof(kFillWaveMenu) == sizeof(kWaveMenu) + sizeof(int),
              "step 7's menu and one entry more");
void launch_block_fill_menu(int entry, const GemmProblem& p) {
  if (entry == kFillBN) return launch_fill_with<kFillBN>(p, straight_alpha_beta(p));
  launch_block_wave_menu(entry, p);
}
void launch_block_fill(const GemmProblem& p) {
  if (split_k_slices(p) > 0) return launch_split_tuned(p);
  static WidthChoices chosen;
  launch_block_fill_menu(tuned_width("block_fill", launch_block_fill_menu, chosen, p,
                                     kFillWaveMenu, kWaveMenuCount + 1, kFillWaveLabels),
                         p);
}
// The new entry alone (--kernel sweep), verified at every shape.
void launch_block_fill_56(const GemmProblem& p) { launch_block_fill_menu(kFillBN, p); }
// The same kernel 64 wide (not on the menu): against block_fill_56, the width alone changes;
// against block_straight_64, the store and the stages (NOTES.md).
void launch_fill_64(const GemmProblem& p) { launch_fill_with<64>(p, straight_alpha_beta(p)); }
#endif  // FP8_TEMPLATES_ONLY
