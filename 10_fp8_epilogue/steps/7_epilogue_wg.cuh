// Chapter 10, step 7: bias_gelu_wg. The epilogue in warpgroups of its own, beside the next
// tile's math. In steps 1-6 the two consumer warpgroups that run a tile's wgmma also run its
// epilogue, and while they add the bias, apply GELU and store, no wgmma is issued: at
// 4096x32768x512 the epilogue is about half of a consumer's time (NOTES.md, "GELU's constants
// folded"). Here E more warpgroups take it (E = 1 or 2): at the end of a tile the two math
// warpgroups copy their FP32 accumulators into shared memory (the hand-off, 64 KiB at BN = 128),
// arrive on `acc_full` and go on to the next tile's K loop; an epilogue warpgroup reads a slab
// (64 rows) into its registers, arrives on `acc_empty` once the hand-off is read, and runs step
// 10's store_tile_bf16 on it while the tensor cores work on the next tile. Epilogue thread t
// holds what math thread t held, so the WgmmaAcc map, the bands and the functor are step 6's.
// E = 1: one warpgroup stores both slabs (one warp a scheduler); E = 2: one a slab. At K = 512 a
// tile's epilogue takes one warpgroup about twice its K loop (clock64, NOTES.md "Step 7 one
// change apart"), so there the second warpgroup pays; at long K it costs 8-12 % (its math
// warpgroups' K loop builds the wgmma descriptors in vector registers: NOTES.md, "Step 7").
//
// The cost: 64 KiB of shared memory for the hand-off, so the tile is (128, 128) with 4 stages
// (or (128, 64) with 7); at long K the (128, 256) tile of step 6 stays faster, and the menu
// (step 5's: 256 and 192 from step 6 beside this step's 128 and 64, and 128 with E = 2)
// chooses per shape. Registers (WgRegs): setmaxnreg.inc takes registers only from what the
// block's own setmaxnreg.dec gave back, so the warpgroups' sum stays within the launch's.
// CUTLASS's sm90 kernels keep the epilogue in the consumer warpgroups (the ping-pong kernel
// overlaps it by alternating tiles; NOTES.md, "Ping-pong"); warpgroups for the epilogue alone are
// the form of its sm100 kernels, whose accumulators live in tensor memory.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel bias_gelu_wg_128,bias_gelu_wg2_128 --shapes 4096x32768x512 --bench
//   tools/steps.py diff bias_gelu_wg       # against steps/1_bf16_out.cuh (step 2's kernel)
//
// Included once, by 10_fp8_epilogue/kernels.cu.
#pragma once

#include "10_fp8_epilogue/steps/6_straight.cuh"

// The hand-off: slab x (math warpgroup x + 1's 64 rows), float4 q of thread t at byte
// ((x * BN / 8 + q) * 128 + t) * 16. A warp's 32 float4 lie side by side (512 bytes: four
// wavefronts, no bank twice), written and read in the same order.
template <int BN>
constexpr int kHandBytes = 2 * kWarpgroup * (BN / 2) * 4;  // 64 KiB at BN = 128
// E epilogue warpgroups, 4 warps each, two bands a warp: 16 KiB a warpgroup.
template <int E>
constexpr int kWgEpiBytes = E * 4 * kEpiBandsPerWarp * kBandBf16Bytes;
template <int BN>
constexpr int kWgStages = BN == 128 ? 4 : 7;  // as many as fit beside the hand-off
template <int BN, int E>
constexpr int kWgSmem =
    kWgStages<BN> * kEpiStageBytes<BN> + 1024 + 1024 + kWgEpiBytes<E> + kHandBytes<BN>;
static_assert(kWgSmem<128, 1> <= 227 * 1024 && kWgSmem<64, 1> <= 227 * 1024 &&
                  kWgSmem<128, 2> <= 227 * 1024,
              "a block's shared memory: at most 227 KiB on sm_90");
// Registers a thread. setmaxnreg.inc takes registers only from what the block's own
// setmaxnreg.dec gave back (a per-block pool; it waits until they are there), so the
// warpgroups' sum stays within the launch's: 512 threads launch at 128 a thread, 640 at 96 (with
// more than the pool holds, the first launch hung: NOTES.md, "Step 7").
template <int E>
struct WgRegs;
template <>
struct WgRegs<1> {
  static constexpr int kLaunch = 128, kProducer = 40, kMath = 152, kEpilogue = 168;
};
template <>
struct WgRegs<2> {  // the math warpgroups stay at the launch's 96 (64 accumulators)
  static constexpr int kLaunch = 96, kProducer = 24, kMath = 96, kEpilogue = 128;
};
template <int E>
constexpr bool kWgRegsFit = WgRegs<E>::kProducer + 2 * WgRegs<E>::kMath +
                                E * WgRegs<E>::kEpilogue <= (3 + E) * WgRegs<E>::kLaunch;
static_assert(kWgRegsFit<1> && kWgRegsFit<2>, "within the launch's registers");

template <int BN, int E, class Epi>
__global__ void __launch_bounds__((3 + E) * kWarpgroup, 1)
    epilogue_wg_kernel(const __grid_constant__ CUtensorMap tm_a,
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
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
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
    // ---- PRODUCER: step 1's ----
    setmaxnreg_dec<R::kProducer>();
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
  } else if (wg <= 2) {
    // ---- MATH: step 1's K loop; the accumulators go to the hand-off, not to D ----
    if constexpr (R::kMath > R::kLaunch) setmaxnreg_inc<R::kMath>();  // (else as launched)
    const int row0 = 64 * (wg - 1);
    const uint32_t slab = hand + (wg - 1) * kSlabBytes;
    auto release = [&](int it) {  // this warp is done with the stage of K tile `it`
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    int it = 0, j = 0;  // j: this block's tiles
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x, ++j) {
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

#ifndef FP8_TEMPLATES_ONLY
// The launch of an epilogue-warpgroup kernel (this step's, and step 9's, which has the same
// arguments, tile, threads and shared memory): operands, maps, one block an SM.
template <int BN, int E, class Epi, class Kernel>
void launch_wg_kernel(Kernel kernel, const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const __nv_bfloat16 *A = p.A, *Bt = p.Bt;
  pad_operands_if_unaligned(p.M, p.N, K, A, Bt);
  const CUtensorMap* ta = tensor_map(A, p.M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, p.N, K, BN);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());  // 1 block per SM
  constexpr int kSmem = kWgSmem<BN, E>;
  kernel<<<grid, (3 + E) * kWarpgroup, kSmem>>>(*ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N,
                                                 K, p.D, epi, 16);
  CUDA_CHECK_LAUNCH();
}
template <int BN, int E, class Epi>
void launch_epilogue_wg_with(const GemmProblem& p, const Epi& epi) {
  static const bool once = (opt_in(epilogue_wg_kernel<BN, E, Epi>, kWgSmem<BN, E>), true);
  (void)once;
  launch_wg_kernel<BN, E>(epilogue_wg_kernel<BN, E, Epi>, p, epi);
}

// Step 5's menu for bias_gelu_straight with this step's kernel at 128 and 64, and at 128 with two
// epilogue warpgroups (step 6's widths 256 and 192 stay: at long K their wider tile wins).
constexpr int kEpiWg = 1000;   // entry - kEpiWg: BN, one epilogue warpgroup
constexpr int kEpiWg2 = 2000;  // entry - kEpiWg2: BN, two
constexpr int kEpiWgMenu[] = {256, 192, kEpiWg + 128, kEpiWg + 64, kEpiWg2 + 128};
constexpr const char* kEpiWgMenuLabels[] = {"128x256", "128x192", "128x128 epilogue wg",
                                            "128x64 epilogue wg", "128x128 two epilogue wgs"};
constexpr int kEpiWgMenuCount = sizeof(kEpiWgMenu) / sizeof(kEpiWgMenu[0]);
static_assert(kEpiWgMenuCount == sizeof(kEpiWgMenuLabels) / sizeof(kEpiWgMenuLabels[0]),
              "a label each");
void launch_bias_gelu_wg_menu(int entry, const GemmProblem& p) {
  if (entry == kEpiWg + 128) return launch_epilogue_wg_with<128, 1>(p, straight_bias_gelu(p));
  if (entry == kEpiWg + 64) return launch_epilogue_wg_with<64, 1>(p, straight_bias_gelu(p));
  if (entry == kEpiWg2 + 128) return launch_epilogue_wg_with<128, 2>(p, straight_bias_gelu(p));
  launch_bias_gelu_straight_width(entry, p);
}
void launch_bias_gelu_wg(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_bias_gelu_wg_menu(tuned_width("bias_gelu_wg", launch_bias_gelu_wg_menu, chosen, p,
                                       kEpiWgMenu, kEpiWgMenuCount, kEpiWgMenuLabels),
                           p);
}
// The new entries alone (--kernel sweep), verified at every shape.
void launch_bias_gelu_wg_128(const GemmProblem& p) { launch_bias_gelu_wg_menu(kEpiWg + 128, p); }
void launch_bias_gelu_wg_64(const GemmProblem& p) { launch_bias_gelu_wg_menu(kEpiWg + 64, p); }
void launch_bias_gelu_wg2_128(const GemmProblem& p) { launch_bias_gelu_wg_menu(kEpiWg2 + 128, p); }
#endif  // FP8_TEMPLATES_ONLY
