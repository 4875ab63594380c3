// Chapter 10, step 10: bias_gelu_split. Step 1's kernel at 128 x 192 on a schedule that splits
// the last, partial wave in K, over rounds (rounds.h: plan_rounds). At 4096 x 2112 x 7168 the
// menu's best entry is 128 x 192 (352 tiles on 132 SMs: 2.67 waves, so three tiles of time), and
// cuBLASLt's kernel there is a 176 x 128 tile (384 tiles, 2.91 waves; NOTES.md, "cuBLASLt's
// GELU-bias kernels"). Chapter 09's split_wave cuts a last wave of R tiles into G / R slices, one
// a block, which at R = 88 is no split at all; plan_rounds cuts the 88 tiles into thirds, 44
// tiles a round, each block taking one slice in each of two rounds, then its two whole tiles:
// 2.67 tiles of time, and the fixups. A slice stores its FP32 partial tile to a workspace
// (PartialVec: the registers' order) and counts itself in; the slice that counts last sums the
// tile's S partials in slice order (the same bits every run, whichever block is last) and stores
// the tile through the epilogue as a whole one (GELU is not linear: it waits for the whole sum).
// The others go on at once, so no block waits for another (chapter 09's and chapter 11's split
// kernels have every slice wait and share the sum; here a block's two slices would wait on
// blocks still in their first). The kernel runs its slices first, then its whole tiles in a
// loop of their own, as chapter 11's step 7 (NOTES there, "Step 7, rewritten").
// bias_gelu_split: step 9's menu with this kernel as a sixth entry (128 x 192, the last wave
// split), timed at every shape; where plan_rounds splits nothing it runs step 1's schedule.
// CUTLASS's Stream-K scheduler mixes whole tiles and split ones the same way (its data-parallel +
// Stream-K hybrid); in its ReductionMode::Deterministic the partials are added in order too.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel bias_gelu_stsm_192,bias_gelu_split_192 --shapes 4096x2112x7168 --bench
//   tools/steps.py diff bias_gelu_split   # against steps/1_bf16_out.cuh
//
// Included once, by 10_fp8_epilogue/kernels.cu.
#pragma once

#include "10_fp8_epilogue/rounds.h"  // plan_rounds, rounds_slice (host-tested)
#include "10_fp8_epilogue/steps/9_lean_loop.cuh"

// A slice of a split tile (consumer threads only): its partial into the workspace as the
// registers hold it (PartialVec: float4 256 i + c is registers 4 i .. 4 i + 3 of consumer thread
// c), then a count of the tile's slices. The block that counts last finds every other partial
// there: it sums all S in slice order into acc (the same bits whichever block is last) and
// returns true, and the caller stores the tile as a whole one (step 8's store). The others go on
// to their next unit at once: no block waits for another.
template <int BN>
__device__ __forceinline__ bool rounds_fixup(float (&acc)[BN / 2], const WorkUnit& u,
                                             const RoundsPlan& plan, float* ws, int* counters,
                                             int* last) {
  constexpr int kVecs = 2 * kWarpgroup * BN / 8;  // a (128, BN) partial tile, in float4
  const int c = threadIdx.x - kWarpgroup;         // consumer thread 0-255
  float4* slices = reinterpret_cast<float4*>(ws) + int64_t(u.tile) * plan.splits * kVecs;
#pragma unroll
  for (int i = 0; i < BN / 8; ++i)
    slices[int64_t(u.slice) * kVecs + 2 * kWarpgroup * i + c] =
        make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
  __threadfence();  // this thread's partial reaches the GPU's view before the count does
  consumer_sync();  // all 256 consumer threads have stored theirs
  if (threadIdx.x == kWarpgroup) {
    *last = atomicAdd(counters + u.tile, 1) == plan.splits - 1;
    if (*last) counters[u.tile] = 0;  // every slice has counted: zero for the next launch
  }
  consumer_sync();  // *last is written
  if (!*last) return false;
  __threadfence();  // the other slices' partials, fenced before their counts, are seen here
  // The sum in slice order 0 .. S - 1, this block's own slice read back too, loaded past L1
  // (other SMs wrote them).
#pragma unroll
  for (int i = 0; i < BN / 8; ++i) {
    const float4 v = __ldcg(slices + 2 * kWarpgroup * i + c);
    acc[4 * i] = v.x, acc[4 * i + 1] = v.y, acc[4 * i + 2] = v.z, acc[4 * i + 3] = v.w;
  }
  for (int s = 1; s < plan.splits; ++s)
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) {
      const float4 v = __ldcg(slices + int64_t(s) * kVecs + 2 * kWarpgroup * i + c);
      acc[4 * i] += v.x, acc[4 * i + 1] += v.y, acc[4 * i + 2] += v.z, acc[4 * i + 3] += v.w;
    }
  return true;
}

// Block b walks its work units (its slice in each round of rounds_slice, then whole tiles), the
// tiles in step 1's grouped order. ws: plan.splits partial tiles per split tile; counters: one
// int per split tile, zero before and after every launch.
template <int BN, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    split_rounds_kernel(const __grid_constant__ CUtensorMap tm_a,
                        const __grid_constant__ CUtensorMap tm_b,
                        const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N,
                        __nv_bfloat16* D, Epi epi, int group, const RoundsPlan plan,
                        float* __restrict__ ws, int* __restrict__ counters) {
  constexpr int S = kEpiStages<BN>, kStage = kEpiStageBytes<BN>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;  // 1024-aligned: the bands are swizzle atoms
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int rounds = rounds_count(plan);

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);   // the producer's arrive.expect_tx
      mbar_init(empty0 + 8 * s, 8);  // one arrival per consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();  // the barriers exist before anyone uses them

  // `it` counts this block's K tiles over all its units: stage it % S, phase (it / S) % 2.
  if (wg == 0) {
    // ---- PRODUCER: step 1's, over the block's units ----
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0;
      auto load_unit = [&](int tile, int k_begin, int k_end, int k_step) {
        const TileCoord tc = grouped_tile(tile, tiles_m, tiles_n, group);
        for (int kt = k_begin; kt < k_end; kt += k_step, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // the stage's last use is over
          mbar_arrive_expect_tx(full0 + 8 * s, kStage);
          tma_load_2d(base + s * kStage, &tm_a, kt * BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kWsABytes, &tm_b, kt * BK, tc.n * BN, full0 + 8 * s);
        }
      };
      // The consumers' order (below): the block's slices, round by round, then its whole tiles.
      for (int r = 0; r < rounds; ++r) {
        const WorkUnit u = rounds_slice(plan, blockIdx.x, r);
        if (u.tile >= 0) load_unit(u.tile, u.k_begin, u.k_end, u.k_step);
      }
      for (int tile = plan.split_tiles + blockIdx.x; tile < plan.tiles; tile += plan.grid)
        load_unit(tile, 0, plan.k_tiles, 1);
    }
  } else {
    // ---- CONSUMERS: step 1's K loop; a slice ends in the fixup, a whole tile in the store ----
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    auto release = [&](int it) {  // this warp is done with the stage of K tile `it`
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    __shared__ int last;  // rounds_fixup's answer, for the whole block
    int it = 0;
    auto run_unit = [&](const WorkUnit& u, int k_begin, int k_end, int k_step) {
      const TileCoord tc = grouped_tile(u.tile, tiles_m, tiles_n, group);
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = k_begin; kt < k_end; kt += k_step, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage<BN>(acc, base + s * kStage + row0 * kSwizzleBytes,
                        base + s * kStage + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > k_begin) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
      // A slice: stored, and unless it is the tile's last, done (the last one holds the sum).
      if (u.slice >= 0 && !rounds_fixup<BN>(acc, u, plan, ws, counters, &last)) return;
      store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, tma, &tm_d, D, bands,
                          next_band);
    };
    for (int r = 0; r < rounds; ++r) {
      const WorkUnit u = rounds_slice(plan, blockIdx.x, r);
      if (u.tile >= 0) run_unit(u, u.k_begin, u.k_end, u.k_step);
    }
    for (int tile = plan.split_tiles + blockIdx.x; tile < plan.tiles; tile += plan.grid)
      run_unit(WorkUnit{tile, 0, plan.k_tiles, -1}, 0, plan.k_tiles, 1);
    store_drain(tma);
  }
}

#ifndef FP8_TEMPLATES_ONLY
// The split tiles' partials and counters, grown when a launch needs more and kept (the timed
// runs, after a verified one, allocate nothing). The counters are zeroed when allocated, and
// every launch leaves them at zero.
struct RoundsWorkspace {
  float* partials;
  int* counters;
};
inline RoundsWorkspace rounds_workspace(size_t partial_floats, int counters) {
  static DeviceBuffer<float> partials;
  static DeviceBuffer<int> flags;
  const size_t had = flags.size();
  int* c = flags.reserve(counters > 0 ? counters : 1);
  if (flags.size() != had) CUDA_CHECK(cudaMemset(c, 0, flags.bytes()));  // grown: zero again
  return {partials.reserve(partial_floats > 0 ? partial_floats : 1), c};
}

// A fixup's partial tile in K tiles of operand bytes (plan_rounds' cost): 96 KiB against 40 KiB.
template <int BN>
constexpr double kFixupKTiles = double(kWsBM * BN * 4) / kEpiStageBytes<BN>;

// The plan's grid, one block an SM at most; no block waits for another (rounds_fixup).
template <int BN, class Epi>
void launch_split_rounds_with(const GemmProblem& p, const Epi& epi) {
  static const bool once = (opt_in(split_rounds_kernel<BN, Epi>, kEpiSmem<BN>), true);
  (void)once;
  int K = p.K;
  const __nv_bfloat16 *A = p.A, *Bt = p.Bt;
  pad_operands_if_unaligned(p.M, p.N, K, A, Bt);
  const CUtensorMap* ta = tensor_map(A, p.M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, p.N, K, BN);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + BN - 1) / BN);
  const RoundsPlan plan =
      plan_rounds(tiles, (K + BK - 1) / BK, device_sm_count(), kFixupKTiles<BN>);
  const RoundsWorkspace w =
      rounds_workspace(size_t(plan.split_tiles) * plan.splits * kWsBM * BN, plan.split_tiles);
  constexpr int kSmem = kEpiSmem<BN>;
  split_rounds_kernel<BN, Epi><<<plan.grid, 3 * kWarpgroup, kSmem>>>(
      *ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N, p.D, epi, 16, plan, w.partials,
      w.counters);
  CUDA_CHECK_LAUNCH();
}

// Step 9's menu with this kernel as a sixth entry (128 x 192, the last wave split: kSplitEntry).
constexpr int kSplitEntry = 3000 + 192;
constexpr int kSplitMenu[] = {256, 192, kEpiWg + 128, kEpiWg + 64, kEpiWg2 + 128, kSplitEntry};
constexpr const char* kSplitMenuLabels[] = {"128x256", "128x192", "128x128 epilogue wg",
                                            "128x64 epilogue wg", "128x128 two epilogue wgs",
                                            "128x192 last wave split"};
constexpr int kSplitMenuCount = sizeof(kSplitMenu) / sizeof(kSplitMenu[0]);
static_assert(kSplitMenuCount == kEpiWgMenuCount + 1 &&
                  kSplitMenuCount == sizeof(kSplitMenuLabels) / sizeof(kSplitMenuLabels[0]),
              "step 9's menu and one entry more, a label each");
void launch_bias_gelu_split_menu(int entry, const GemmProblem& p) {
  if (entry == kSplitEntry) return launch_split_rounds_with<192>(p, stsm_bias_gelu(p));
  launch_bias_gelu_lean_menu(entry, p);
}
void launch_bias_gelu_split(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_bias_gelu_split_menu(tuned_width("bias_gelu_split", launch_bias_gelu_split_menu, chosen,
                                          p, kSplitMenu, kSplitMenuCount, kSplitMenuLabels),
                              p);
}
// The new entry alone (--kernel sweep), verified at every shape.
void launch_bias_gelu_split_192(const GemmProblem& p) {
  launch_bias_gelu_split_menu(kSplitEntry, p);
}
#endif  // FP8_TEMPLATES_ONLY
