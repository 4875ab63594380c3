// Chapter 10, step 9: bias_gelu_lean. Step 7's kernel with its K loops' bookkeeping done by
// addition. Step 7's math warpgroups (96 registers with two epilogue warpgroups) rebuild every
// wgmma descriptor from its shared-memory address in vector registers, masking and shifting
// (SmemDesc::k_major_sw128: (addr & 0x3FFFF) >> 4, or LBO), and find the stage and its phase
// as it % S and it / S of a signed counter: 88 instructions a warp and K tile around four
// wgmma, most of them on the ALU pipe that the epilogue's GELU uses too. Here a descriptor's
// low word (start address >> 4, with LBO) is made once a block; a K tile's is that plus the
// stage's offset, a k16 slice's plus 2 (32 bytes), its high word (SBO, swizzle) a constant; the
// stage and the phase are counters that wrap. The descriptor's start field holds addresses below
// 256 KiB, so the additions never carry out of it. The producer's loop counts the same way. A's
// descriptor depends on the warpgroup; with the warpgroup index broadcast from lane 0
// (__shfl_sync) ptxas knows it is warp-uniform and keeps the descriptors, and their additions,
// in uniform registers, where wgmma reads them. 46 instructions a K tile, 31 of them uniform; at
// 4096x32768x512 the ALU pipe's instructions fall from 54.7 M to 20.3 M
// (docs/results/h200/lean_loop_counters.csv; NOTES.md, "The K loop's bookkeeping").
// Kernel, tile, warpgroups, registers, launch (launch_wg_kernel) and menu are step 7's, the
// bands written by step 8's stmatrix. The menu's two straight entries (128 x 256, 128 x 192,
// whose consumers store their own tiles) take the same loop in lean_straight_kernel, a copy of
// step 1's kernel: 93 -> 50 instructions a K tile, and within 1 % of step 8's time (their
// tensor pipe is 90 % busy at 4096x2112x7168 either way: docs/results/h200/lean_straight.csv).
// CUTLASS does both: CuTe's GMMA::DescriptorIterator adds an offset to a descriptor made once,
// and canonical_warp_group_idx() broadcasts the warpgroup index for the same reason.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel bias_gelu_stsm_wg2_128,bias_gelu_lean_wg2_128 --shapes 4096x24576x1536 --bench
//   tools/steps.py diff bias_gelu_lean     # against steps/7_epilogue_wg.cuh
//
// Included once, by 10_fp8_epilogue/kernels.cu.
#pragma once

#include "10_fp8_epilogue/steps/8_stmatrix.cuh"

static_assert(kWgSmem<128, 2> <= (1 << 18) && kWgSmem<128, 1> <= (1 << 18) &&
                  kWgSmem<64, 1> <= (1 << 18) && kEpiSmem<256> <= (1 << 18) &&
                  kEpiSmem<192> <= (1 << 18),
              "a descriptor's start field (14 bits of address >> 4) holds the block's shared "
              "memory");

// A K tile's wgmma from the low words of its first k16 slice's descriptors (da, db), each later
// slice 32 bytes (2 in the start field) on; the high word, SBO and swizzle, is the same for all.
template <int BN>
__device__ __forceinline__ void wgmma_stage_lo(float (&acc)[BN / 2], uint32_t da, uint32_t db) {
#pragma unroll
  for (int k = 0; k < BK / 16; ++k) {
    const uint64_t a = kSw128DescHi | (da + 2 * k), b = kSw128DescHi | (db + 2 * k);
    if constexpr (BN == 256) wgmma_m64n256k16(acc, a, b, 1);
    else if constexpr (BN == 192) wgmma_m64n192k16(acc, a, b, 1);
    else if constexpr (BN == 176) wgmma_m64n176k16(acc, a, b, 1);  // step 10's width
    else if constexpr (BN == 128) wgmma_m64n128k16(acc, a, b, 1);
    else wgmma_m64n64k16(acc, a, b, 1);
  }
}

// The producer's loop (one thread): this block's tiles, each K tile into the next stage; the
// stage and its phase as counters that wrap.
template <int BN, int S, int kStage>
__device__ __forceinline__ void lean_produce(const CUtensorMap* tm_a, const CUtensorMap* tm_b,
                                             uint32_t base, uint32_t full0, uint32_t empty0,
                                             int out_tiles, int tiles_m, int tiles_n, int k_tiles,
                                             int group) {
  int s = 0;           // the stage: the K tile's count over all tiles, modulo S
  uint32_t phase = 0;  // and how often the stages have wrapped, modulo 2
  for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
    const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
    for (int kt = 0; kt < k_tiles; ++kt) {
      mbar_wait(empty0 + 8 * s, phase ^ 1);  // the stage's last use is over
      mbar_arrive_expect_tx(full0 + 8 * s, kStage);
      tma_load_2d(base + s * kStage, tm_a, kt * BK, tc.m * kWsBM, full0 + 8 * s);
      tma_load_2d(base + s * kStage + kWsABytes, tm_b, kt * BK, tc.n * BN, full0 + 8 * s);
      if (++s == S) s = 0, phase ^= 1;
    }
  }
}

template <int BN, int E, class Epi>
__global__ void __launch_bounds__((3 + E) * kWarpgroup, 1)
    lean_wg_kernel(const __grid_constant__ CUtensorMap tm_a,
                       const __grid_constant__ CUtensorMap tm_b,
                       const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                       __nv_bfloat16* D, Epi epi, int group) {
  static_assert(BN == 128 || BN == 64, "the hand-off fits at BN 128 and 64");
  static_assert(E == 1 || (E == 2 && BN == 128),
                "one epilogue warpgroup for both slabs, or (at BN 128) one a slab");
  using R = WgRegs<E>;
  constexpr int S = kWgStages<BN>, kStage = kEpiStageBytes<BN>;
  constexpr int kSlabBytes = kHandBytes<BN> / 2;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t acc_full = empty0 + 8 * S, acc_empty = acc_full + 8;
  const uint32_t bands0 = full0 + 1024;  // 1024-aligned: the bands are swizzle atoms
  const uint32_t hand = bands0 + kWgEpiBytes<E>;
  // The warpgroup, broadcast from lane 0: ptxas then knows it is the same in every lane, and
  // keeps A's descriptor (which depends on it) in uniform registers, where wgmma reads it; from
  // threadIdx.x alone it stayed in vector registers, moved by 16 R2UR a K tile.
  const int wg = __shfl_sync(0xffffffffu, threadIdx.x / kWarpgroup, 0);
  const int t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + BK - 1) / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);   // the producer's arrive.expect_tx
      mbar_init(empty0 + 8 * s, 8);  // one arrival per math warp
    }
    // Every thread that writes (or reads) the hand-off arrives: an arrive releases the arriving
    // thread's own accesses only (NOTES.md, "Block scales": racecheck).
    mbar_init(acc_full, 2 * kWarpgroup);  // both math warpgroups have stored
    mbar_init(acc_empty, E * kWarpgroup);  // the epilogue has read both slabs
    fence_barrier_init();
  }
  __syncthreads();  // the barriers exist before anyone uses them

  if (wg == 0) {
    // ---- PRODUCER: step 7's, the stage and its phase as counters ----
    setmaxnreg_dec<R::kProducer>();
    if (t == 0)
      lean_produce<BN, S, kStage>(&tm_a, &tm_b, base, full0, empty0, out_tiles, tiles_m, tiles_n,
                                  k_tiles, group);
  } else if (wg <= 2) {
    // ---- MATH: step 7's, the K loop's descriptors and stage by addition ----
    if constexpr (R::kMath > R::kLaunch) setmaxnreg_inc<R::kMath>();  // (else as launched)
    const int row0 = 64 * (wg - 1);
    const uint32_t slab = hand + (wg - 1) * kSlabBytes;
    // The descriptors' low words at stage 0: this warpgroup's 64 rows of A, and Bᵀ.
    const uint32_t da0 = uint32_t(SmemDesc::k_major_sw128(base + row0 * kSwizzleBytes));
    const uint32_t db0 = uint32_t(SmemDesc::k_major_sw128(base + kWsABytes));
    int s = 0, prev = 0;  // the stage of this K tile, and of the one before
    uint32_t phase = 0;
    int j = 0;  // j: this block's tiles
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x, ++j) {
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt) {
        mbar_wait(full0 + 8 * s, phase);  // the copies of this K tile have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage_lo<BN>(acc, da0 + s * (kStage >> 4), db0 + s * (kStage >> 4));
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > 0 && t % 32 == 0) mbar_arrive(empty0 + 8 * prev);  // this warp is done with it
        prev = s;
        if (++s == S) s = 0, phase ^= 1;
      }
      wgmma_wait<0>();
      pin(acc);
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * prev);
      // The epilogue warpgroup has read tile j - 1's accumulators (the first wait passes).
      mbar_wait(acc_empty, (j & 1) ^ 1);
#pragma unroll
      for (int q = 0; q < BN / 8; ++q)
        asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(
                         slab + (q * kWarpgroup + t) * 16),
                     "f"(acc[4 * q]), "f"(acc[4 * q + 1]), "f"(acc[4 * q + 2]),
                     "f"(acc[4 * q + 3])
                     : "memory");
      mbar_arrive(acc_full);  // releases this thread's stores to the epilogue's reads
    }
  } else {
    // ---- EPILOGUE: tile j's slabs through step 6's store (E = 2: warpgroup 3 + x, slab x) ----
    setmaxnreg_inc<R::kEpilogue>();
    const int e = wg - 3;  // this epilogue warpgroup
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 12) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0, j = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x, ++j) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      mbar_wait(acc_full, j & 1);  // both math warpgroups have stored tile j
#pragma unroll 1
      for (int x = e; x < 2; x += E) {
        float acc[BN / 2];  // math thread t's registers of math warpgroup x + 1
#pragma unroll
        for (int q = 0; q < BN / 8; ++q)
          asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                       : "=f"(acc[4 * q]), "=f"(acc[4 * q + 1]), "=f"(acc[4 * q + 2]),
                         "=f"(acc[4 * q + 3])
                       : "r"(hand + x * kSlabBytes + (q * kWarpgroup + t) * 16)
                       : "memory");
        // The epilogue's slabs are in registers: the math warpgroups may store tile j + 1
        // (the arrive releases this thread's reads).
        if (E == 2 || x == 1) mbar_arrive(acc_empty);
        store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + 64 * x, tc.n * BN, M, N, tma, &tm_d, D,
                            bands, next_band);
      }
    }
    store_drain(tma);
  }
}


// The menu's two straight entries (128 x 256, 128 x 192): step 1's kernel, whose consumers store
// their own tiles, with the same K loops.
template <int BN, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    lean_straight_kernel(const __grid_constant__ CUtensorMap tm_a,
                         const __grid_constant__ CUtensorMap tm_b,
                         const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                         __nv_bfloat16* D, Epi epi, int group) {
  constexpr int S = kEpiStages<BN>, kStage = kEpiStageBytes<BN>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;  // 1024-aligned: the bands are swizzle atoms
  const int wg = __shfl_sync(0xffffffffu, threadIdx.x / kWarpgroup, 0);  // (as above)
  const int t = threadIdx.x % kWarpgroup;
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

  if (wg == 0) {
    // ---- PRODUCER: step 1's, the stage and its phase as counters ----
    setmaxnreg_dec<40>();
    if (t == 0)
      lean_produce<BN, S, kStage>(&tm_a, &tm_b, base, full0, empty0, out_tiles, tiles_m, tiles_n,
                                  k_tiles, group);
  } else {
    // ---- CONSUMERS: step 1's, the K loop's descriptors and stage by addition ----
    // (lean_wg_kernel's K loop, copied: as a shared function ptxas scheduled the 128 x 256
    // entry's epilogue differently, and these kernels are the ones measured.)
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    const uint32_t da0 = uint32_t(SmemDesc::k_major_sw128(base + row0 * kSwizzleBytes));
    const uint32_t db0 = uint32_t(SmemDesc::k_major_sw128(base + kWsABytes));
    int s = 0, prev = 0;  // the stage of this K tile, and of the one before
    uint32_t phase = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt) {
        mbar_wait(full0 + 8 * s, phase);  // the copies of this K tile have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage_lo<BN>(acc, da0 + s * (kStage >> 4), db0 + s * (kStage >> 4));
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > 0 && t % 32 == 0) mbar_arrive(empty0 + 8 * prev);  // this warp is done with it
        prev = s;
        if (++s == S) s = 0, phase ^= 1;
      }
      wgmma_wait<0>();
      pin(acc);
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * prev);
      store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, tma, &tm_d, D, bands,
                          next_band);
    }
    store_drain(tma);
  }
}

#ifndef FP8_TEMPLATES_ONLY
template <int BN, int E, class Epi>
void launch_lean_wg_with(const GemmProblem& p, const Epi& epi) {
  static const bool once = (opt_in(lean_wg_kernel<BN, E, Epi>, kWgSmem<BN, E>), true);
  (void)once;
  launch_wg_kernel<BN, E>(lean_wg_kernel<BN, E, Epi>, p, epi);  // step 7's launch
}
template <int BN, class Epi>
void launch_lean_straight_with(const GemmProblem& p, const Epi& epi) {
  static const bool once = (opt_in(lean_straight_kernel<BN, Epi>, kEpiSmem<BN>), true);
  (void)once;
  launch_straight_kernel<BN>(lean_straight_kernel<BN, Epi>, p, epi);  // step 1's launch
}

// Step 8's menu, its three epilogue-warpgroup entries from this kernel, for a functor of step
// 8's kind (step 11 passes its own).
template <class Epi>
void launch_lean_menu_with(int entry, const GemmProblem& p, const Epi& epi) {
  if (entry == kEpiWg + 128) return launch_lean_wg_with<128, 1>(p, epi);
  if (entry == kEpiWg + 64) return launch_lean_wg_with<64, 1>(p, epi);
  if (entry == kEpiWg2 + 128) return launch_lean_wg_with<128, 2>(p, epi);
  if (entry == 192) return launch_lean_straight_with<192>(p, epi);
  launch_lean_straight_with<256>(p, epi);  // the menu's first entry, 128 x 256
}
void launch_bias_gelu_lean_menu(int entry, const GemmProblem& p) {
  launch_lean_menu_with(entry, p, stsm_bias_gelu(p));
}
void launch_bias_gelu_lean(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_bias_gelu_lean_menu(tuned_width("bias_gelu_lean", launch_bias_gelu_lean_menu, chosen, p,
                                         kEpiWgMenu, kEpiWgMenuCount, kEpiWgMenuLabels),
                             p);
}
// The new entries alone (--kernel sweep), verified at every shape.
void launch_bias_gelu_lean_256(const GemmProblem& p) { launch_bias_gelu_lean_menu(256, p); }
void launch_bias_gelu_lean_192(const GemmProblem& p) { launch_bias_gelu_lean_menu(192, p); }
void launch_bias_gelu_lean_wg_128(const GemmProblem& p) {
  launch_bias_gelu_lean_menu(kEpiWg + 128, p);
}
void launch_bias_gelu_lean_wg_64(const GemmProblem& p) {
  launch_bias_gelu_lean_menu(kEpiWg + 64, p);
}
void launch_bias_gelu_lean_wg2_128(const GemmProblem& p) {
  launch_bias_gelu_lean_menu(kEpiWg2 + 128, p);
}
#endif  // FP8_TEMPLATES_ONLY
