// Chapter 11, step 10: block_lean. Step 7's kernel with its K loops' bookkeeping done by
// addition, as chapter 10's step 9 does for its epilogue warpgroups. Step 7's consumers rebuild
// each wgmma descriptor from its shared-memory address ((addr & 0x3FFFF) >> 4, LBO or-ed in:
// A's in vector registers, since it depends on the warpgroup) and find the stage and its phase
// as it % 3 and it / 3 of a signed counter: in the whole tiles' K loop, from its full-barrier
// wait to its branch, 117 of 245 instructions are not the promotion's 128 FFMA (cuobjdump
// -sass). Here a descriptor's low word is made once a block and advanced by adding (the stage's
// offset, 64 rows for slab 1, 2 a k32 slice), its high word a constant (kSw128DescHi); stage and
// phase are counters that wrap, in the producer too. The warpgroup index is read through
// __shfl_sync from lane 0, so ptxas knows it is warp-uniform and keeps A's descriptor, too, in
// uniform registers (R2UR in the kernel 75 -> 44; CUTLASS's canonical_warp_group_idx()). 85
// such instructions remain. Kernel, tile,
// schedule, registers (168, STACK 0) and the FFMA register banks (0 of 128 with Ra and Rc of one
// parity) are step 7's, and so is the launch (launch_plan_wave); step 9's menu with this kernel
// in place of step 7's.
// CuTe's GMMA::DescriptorIterator advances a descriptor made once by adding an offset.
//
//   ./build/11_block_scales/block_scales --kernel block_wave_256,block_lean_256 --shapes 8192x8192x8192 --bench
//   tools/steps.py diff block_lean        # against steps/7_split_wave.cuh
//
// Included once, by 11_block_scales/kernels.cu.
#pragma once

#include "11_block_scales/steps/9_split_timed.cuh"

static_assert(kTallSmem <= (1 << 18),
              "a descriptor's start field (14 bits of address >> 4) holds the block's shared "
              "memory, so adding to it never carries out");
// Block b walks its work units (wave_unit: a split tile's slice first, then whole tiles), the
// tiles in step 4's grouped order. ws: plan.splits partial tiles per split tile; counters: two
// ints per split tile, zero before and after every launch.
template <class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    lean_wave_kernel(const __grid_constant__ CUtensorMap tm_a,   // boxes of 128 k x 256 rows
                     const __grid_constant__ CUtensorMap tm_b,   // boxes of 128 k x 128 rows
                     const __grid_constant__ CUtensorMap tm_sa,  // A's scales: (M, KB) floats
                     const __grid_constant__ CUtensorMap tm_sb,  // Bᵀ's: (b_scale_ld, NB)
                     const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                     __nv_bfloat16* D, Epi epi, int group, const WavePlan plan,
                     float* __restrict__ ws, int* __restrict__ counters) {
  constexpr int BM = kTallBM, BN = kPromBN;
  constexpr int S = kTallStages, kStage = kTallStageBytes;
  constexpr int kABytes = BM * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const uint32_t scales0 = bands0 + kEpiBytes;  // stage s's scales at scales0 + s * kTallScaleBytes
  // The warpgroup, broadcast from lane 0: known warp-uniform, so A's descriptor stays uniform.
  const int wg = __shfl_sync(0xffffffffu, threadIdx.x / kWarpgroup, 0);
  const int t = threadIdx.x % kWarpgroup;
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
      int s = 0;           // the stage: the K tile's count over all units, modulo S
      uint32_t phase = 0;  // and how often the stages have wrapped, modulo 2
      auto load_unit = [&](int tile, int k_begin, int k_end, int k_step) {
        const TileCoord tc = grouped_tile(tile, tiles_m, tiles_n, group);
        for (int kt = k_begin; kt < k_end; kt += k_step) {
          mbar_wait(empty0 + 8 * s, phase ^ 1);  // the stage's last use is over
          mbar_arrive_expect_tx(full0 + 8 * s, kTallTxBytes);
          const uint32_t sc = scales0 + s * kTallScaleBytes;
          tma_load_2d(base + s * kStage, &tm_a, kt * kFp8BK, tc.m * BM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kABytes, &tm_b, kt * kFp8BK, tc.n * BN, full0 + 8 * s);
          // A: rows m0 .. m0 + 255 as two of step 2's boxes (rows past M come in as zeros)
          tma_load_2d(sc, &tm_sa, tc.m * BM, kt, full0 + 8 * s);
          tma_load_2d(sc + 4 * kWsBM, &tm_sa, tc.m * BM + kWsBM, kt, full0 + 8 * s);
          tma_load_2d(sc + 4 * BM, &tm_sb, kt & ~3, tc.n * BN / kScaleBlock,  // Bᵀ: kb & ~3 ..
                      full0 + 8 * s);
          if (++s == S) s = 0, phase ^= 1;
        }
      };
      // wave_unit's units in its order: the block's slice, then its whole tiles (below).
      if (plan.split_tiles > 0 && int(blockIdx.x) < plan.split_tiles * plan.splits) {
        const WorkUnit u = wave_unit(plan, blockIdx.x, 0);
        load_unit(u.tile, u.k_begin, u.k_end, u.k_step);
      }
      for (int tile = plan.split_tiles + blockIdx.x; tile < plan.tiles; tile += plan.grid)
        load_unit(tile, 0, plan.k_tiles, 1);
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 128 * (wg - 1);  // this warpgroup's rows: two slabs, row0 and row0 + 64
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    const int row_lo = row0 + WgmmaAcc::row(t, 0);  // the thread's rows: row_lo, +8 (slab 0);
                                                    // row_lo + 64, +72 (slab 1)
    // This warp is done with stage s: its lanes' reads of the scales come before lane 0's
    // arrive (__syncwarp), and the arrive releases them before TMA refills the stage.
    auto release = [&](int stage) {
      __syncwarp();
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * stage);
    };
    // The descriptors' low words at stage 0: this warpgroup's slab 0 of A, and Bᵀ.
    const uint32_t da0 = uint32_t(SmemDesc::k_major_sw128(base + row0 * kSwizzleBytes));
    const uint32_t db0 = uint32_t(SmemDesc::k_major_sw128(base + kABytes));
    int s = 0;  // the stage of this K tile
    uint32_t phase = 0;
    auto run_unit = [&](const WorkUnit& u, int k_begin, int k_end, int k_step) {
      const TileCoord tc = grouped_tile(u.tile, tiles_m, tiles_n, group);
      float acc0[BN / 2], acc1[BN / 2], part[BN / 2];  // slabs 0 and 1, (64, 128) each
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc0[i] = acc1[i] = 0.0f;
      for (int kt = k_begin; kt < k_end; kt += k_step) {
        mbar_wait(full0 + 8 * s, phase);  // the tiles and scales of this K tile landed
        // The multipliers of this K block for the thread's four rows (Bᵀ's is float kt & 3 of
        // the four copied), read while nothing waits for them: the wgmma below do not use them.
        const uint32_t sc_at = scales0 + s * kTallScaleBytes;
        float sa[4], sb;  // rows row_lo, +8, +64, +72
#pragma unroll
        for (int r = 0; r < 4; ++r)
          asm volatile("ld.shared.f32 %0, [%1];\n"
                       : "=f"(sa[r])
                       : "r"(sc_at + 4 * (row_lo + 8 * (r % 2) + 64 * (r / 2))));
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sb) : "r"(sc_at + 4 * (BM + (kt & 3))));
        const uint32_t db = db0 + uint32_t(s) * (kStage >> 4);  // this stage's Bᵀ
#pragma unroll
        for (int slab = 0; slab < 2; ++slab) {
          wgmma_fence();  // the promotion read `part`: done before wgmma writes it again
          const uint32_t da = da0 + uint32_t(s) * (kStage >> 4) + slab * (64 * kSwizzleBytes >> 4);
#pragma unroll
          for (int k32 = 0; k32 < kFp8BK / 32; ++k32)  // a fresh `part`: scale-d 0 on the first
            wgmma_m64n128k32_e4m3(part, kSw128DescHi | (da + 2 * k32),
                                  kSw128DescHi | (db + 2 * k32), k32 > 0);
          wgmma_commit();
          wgmma_wait<0>();
          pin(part);
          if (slab == 1) release(s);  // both slabs' wgmma have read the stage
          const float2 sc = make_float2(sa[2 * slab] * sb, sa[2 * slab + 1] * sb);
          if (slab == 0)
            BlockScales{}.promote(acc0, part, sc);
          else
            BlockScales{}.promote(acc1, part, sc);
        }
        if (++s == S) s = 0, phase ^= 1;
      }
      if (u.slice >= 0) {  // a slice: the tile's S blocks finish it together
        tall_fixup(acc0, acc1, u, tc.m * BM, tc.n * BN, M, N, D, epi, plan, ws, counters);
        return;
      }
      const int m0 = tc.m * BM + row0;
      store_tile_bf16<BN>(acc0, epi, m0, tc.n * BN, M, N, tma, &tm_d, D, bands, next_band);
      store_tile_bf16<BN>(acc1, epi, m0 + 64, tc.n * BN, M, N, tma, &tm_d, D, bands, next_band);
    };
    // As the producer: the block's slice, then its whole tiles in a loop of their own.
    if (plan.split_tiles > 0 && int(blockIdx.x) < plan.split_tiles * plan.splits) {
      const WorkUnit u = wave_unit(plan, blockIdx.x, 0);
      run_unit(u, u.k_begin, u.k_end, u.k_step);
    }
    for (int tile = plan.split_tiles + blockIdx.x; tile < plan.tiles; tile += plan.grid)
      run_unit(WorkUnit{tile, 0, plan.k_tiles, -1}, 0, plan.k_tiles, 1);
    store_drain(tma);
  }
}

#ifndef FP8_TEMPLATES_ONLY
template <class Epi>
void launch_lean_wave_with(const GemmProblem& p, const Epi& epi) {
  static const bool once = (opt_in(lean_wave_kernel<Epi>, kTallSmem), true);
  (void)once;
  launch_plan_wave(lean_wave_kernel<Epi>, p, epi);  // step 7's launch: plan_wave's grid
}

// Step 9's menu with this kernel where step 7's was.
constexpr int kLeanEntry = 4096;
void launch_block_lean_menu(int entry, const GemmProblem& p) {
  if (entry == kLeanEntry) return launch_lean_wave_with(p, straight_alpha_beta(p));
  launch_block_timed_menu(entry, p);
}
void launch_block_lean(const GemmProblem& p) {
  static WidthChoices chosen;
  int menu[kTimedMenuMax];
  const char* labels[kTimedMenuMax];
  const int n = timed_menu(p, kLeanEntry, "256x128 step 10", menu, labels);
  launch_block_lean_menu(
      tuned_width("block_lean", launch_block_lean_menu, chosen, p, menu, n, labels), p);
}
// The new entry alone (--kernel sweep), verified at every shape.
void launch_block_lean_256(const GemmProblem& p) { launch_block_lean_menu(kLeanEntry, p); }
#endif  // FP8_TEMPLATES_ONLY
