// Chapter 11, step 7: block_wave. Step 4's tall tile on chapter 09's schedule: the last,
// partial wave split in K. At 4096 x 2112 the 256 x 128 tiles are 272 on 132 SMs: two full waves
// and 8 tiles, so the third wave keeps 8 SMs busy for a whole tile's K loop while 124 wait
// (makespan 3 tiles for 2.06 tiles of work). plan_wave (09_every_shape/schedule.cuh, host-tested
// there) cuts each of those R tiles into S = min(SMs / R, K tiles) slices of K, one a block, and
// runs them first; the full waves follow, one tile a block a wave, as in step 4. A slice's
// blocks meet in a workspace, as chapter 09's split_wave_kernel's do: each stores its promoted
// FP32 partial tile (TallVec: the registers' order, pairs swapped), counts itself in, waits for
// the tile's other S - 1 blocks, then sums 1/S of the tile over the S slices in slice order (the
// same bits every run) and applies the epilogue to it, element pairs stored directly. A slice takes every
// S-th K tile (wave_unit), each a whole K block of 128, so each K block's scales apply as in
// step 4. block_wave: step 6's block_straight with this kernel as a fourth menu entry, timed
// where plan_wave splits (R > 0 and SMs / R >= 2).
// Each block runs its slice (if it has one), then its whole tiles in a loop of their own, the
// unit's body inlined into both (run_unit, load_unit): the whole tiles' K loop is compiled with
// step 4's bounds (from 0, stride 1). Walked as one loop over wave_unit's units, the same kernel
// ran 3-4 % slower than step 4's where nothing is split (4096 x 4224 x 16384) and 4096 x 2112 x
// 7168 ran at 95-97 % of lt_fp8_block; written this way, 1-3.5 % faster than step 4's and
// 103 % (wave_rewritten.csv). Why was not found: the K loops differ by a few instructions
// (NOTES.md, "Step 7, rewritten").
// Chapter 09's split_wave is the BF16 counterpart; CUTLASS's Stream-K scheduler mixes whole
// tiles and split ones the same way (its data-parallel + Stream-K hybrid).
//
//   ./build/11_block_scales/block_scales --kernel block_straight,block_wave --shapes 4096x2112x7168 --bench
//   tools/steps.py diff block_wave        # against steps/4_tall_tile.cuh
//
// Included once, by 11_block_scales/kernels.cu.
#pragma once

#include "09_every_shape/schedule.cuh"  // plan_wave, wave_unit (host-tested with chapter 09)
#include "11_block_scales/steps/6_straight.cuh"
#include "11_block_scales/tall_vec.h"

// A split tile's partial in the workspace: TallVec (tall_vec.h, host-tested), the registers'
// order with each pair swapped. A 16-byte store takes four registers from one that is a multiple
// of 4, so stored in the registers' order acc[4 i] would sit at an even register, as part[4 i]
// does (the wgmma result, from R24): every promotion FFMA (acc += part * scale) would then read
// two registers of the same bank, and did (128 of 128 in the K loop, cuobjdump: the kernel 10 %
// slower than step 4's at 4096^3). Swapped, acc[i] and part[i] fall in different banks (0 of
// 128; about 4 % slower: NOTES.md, "Step 7").
static_assert(TallVec::kRows == kTallBM && TallVec::kCols == kPromBN, "the tall tile");

// A slice of a split tile (consumer threads only): its partial into the workspace as the
// registers hold it, then, once all S slices are there, this block's 1/S of the tile summed over
// the slices in slice order, through the epilogue into D (element pairs, stored directly).
template <class Epi>
__device__ __forceinline__ void tall_fixup(const float (&acc0)[kPromBN / 2],
                                           const float (&acc1)[kPromBN / 2], const WorkUnit& u,
                                           int m0, int n0, int M, int N, __nv_bfloat16* D,
                                           const Epi& epi, const WavePlan& plan, float* ws,
                                           int* counters) {
  constexpr int kVecs = TallVec::kVecs;
  const int c = threadIdx.x - kWarpgroup;  // consumer thread 0-255
  const float4* slices =
      reinterpret_cast<const float4*>(ws) + int64_t(u.tile) * plan.splits * kVecs;
  float4* mine = reinterpret_cast<float4*>(ws) + (int64_t(u.tile) * plan.splits + u.slice) * kVecs;
#pragma unroll
  for (int i = 0; i < kPromBN / 8; ++i) {
    mine[256 * i + c] = make_float4(acc0[4 * i + 1], acc0[4 * i], acc0[4 * i + 3], acc0[4 * i + 2]);
    mine[256 * (i + kPromBN / 8) + c] =
        make_float4(acc1[4 * i + 1], acc1[4 * i], acc1[4 * i + 3], acc1[4 * i + 2]);
  }
  int* arrived = counters + 2 * u.tile;
  int* done = arrived + 1;
  __threadfence();  // this thread's partial reaches the GPU's view before the count does
  consumer_sync();  // all 256 consumer threads have stored theirs
  if (threadIdx.x == kWarpgroup) {
    atomicAdd(arrived, 1);
    while (ld_acquire_gpu(arrived) < plan.splits) {  // the tile's other blocks
    }
  }
  consumer_sync();  // every slice of this tile is in the workspace
  // This block's share, float4 lo .. hi - 1: each the sum of the S slices in the order
  // 0 .. S - 1, loaded past L1 (other SMs wrote them), 4 loads in flight before the adds.
  const int lo = int(int64_t(u.slice) * kVecs / plan.splits);
  const int hi = int(int64_t(u.slice + 1) * kVecs / plan.splits);
  auto put = [&](int m, int n, float x, float y) {  // D(m, n) and D(m, n + 1), n even
    const typename Epi::Column col = epi.column(n);
    D[int64_t(m) * N + n] = __float2bfloat16_rn(epi(x, m, n, col, 0));
    if (n + 1 < N) D[int64_t(m) * N + n + 1] = __float2bfloat16_rn(epi(y, m, n + 1, col, 1));
  };
  constexpr int kBatch = 4;
  for (int q = lo + c; q < hi; q += 2 * kWarpgroup) {
    const int m = m0 + TallVec::row(q), n = n0 + TallVec::col(q);
    if (m >= M || n >= N) continue;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int s0 = 0; s0 < plan.splits; s0 += kBatch) {
      float4 w[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (s0 + b < plan.splits) w[b] = __ldcg(slices + int64_t(s0 + b) * kVecs + q);
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (s0 + b < plan.splits) {
          v.x += w[b].x;
          v.y += w[b].y;
          v.z += w[b].z;
          v.w += w[b].w;
        }
    }
    put(m, n, v.y, v.x);
    if (m + 8 < M) put(m + 8, n, v.w, v.z);
  }
  // Every block of the tile has passed its wait once all have counted themselves done: the
  // last sets both counters back to zero for the next launch.
  if (threadIdx.x == kWarpgroup && atomicAdd(done, 1) == plan.splits - 1) {
    *arrived = 0;
    *done = 0;
  }
}

// Block b walks its work units (wave_unit: a split tile's slice first, then whole tiles), the
// tiles in step 4's grouped order. ws: plan.splits partial tiles per split tile; counters: two
// ints per split tile, zero before and after every launch.
template <class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    tall_wave_kernel(const __grid_constant__ CUtensorMap tm_a,   // boxes of 128 k x 256 rows
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
      auto load_unit = [&](int tile, int k_begin, int k_end, int k_step) {
        const TileCoord tc = grouped_tile(tile, tiles_m, tiles_n, group);
        for (int kt = k_begin; kt < k_end; kt += k_step, ++it) {
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
    // This warp is done with the stage: its lanes' reads of the scales come before lane 0's
    // arrive (__syncwarp), and the arrive releases them before TMA refills the stage.
    auto release = [&](int it) {
      __syncwarp();
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    int it = 0;
    auto run_unit = [&](const WorkUnit& u, int k_begin, int k_end, int k_step) {
      const TileCoord tc = grouped_tile(u.tile, tiles_m, tiles_n, group);
      float acc0[BN / 2], acc1[BN / 2], part[BN / 2];  // slabs 0 and 1, (64, 128) each
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc0[i] = acc1[i] = 0.0f;
      for (int kt = k_begin; kt < k_end; kt += k_step, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the tiles and scales of this K tile landed
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
// The split tiles' partials and counters, grown when a launch needs more and kept (the timed
// runs, after a verified one, allocate nothing). The counters are zeroed when allocated, and
// every launch leaves them at zero.
struct WaveWorkspace {
  float* partials;
  int* counters;
};
inline WaveWorkspace wave_workspace(size_t partial_floats, int counters) {
  static DeviceBuffer<float> partials;
  static DeviceBuffer<int> flags;
  const size_t had = flags.size();
  int* c = flags.reserve(counters > 0 ? counters : 1);
  if (flags.size() != had) CUDA_CHECK(cudaMemset(c, 0, flags.bytes()));  // grown: zero again
  return {partials.reserve(partial_floats > 0 ? partial_floats : 1), c};
}

// plan_wave's schedule for the tall tile at this shape (the launcher's, and the menu's test).
inline WavePlan tall_wave_plan(const GemmProblem& p) {
  const int tiles = ((p.M + kTallBM - 1) / kTallBM) * ((p.N + kPromBN - 1) / kPromBN);
  return plan_wave(tiles, (p.K + kFp8BK - 1) / kFp8BK, device_sm_count());
}

// plan_wave's grid; a plan that splits is launched cooperatively: the runtime refuses the
// launch unless every block can be resident at once, which the blocks of a split tile need,
// since each waits for the others.
// `kernel`: this step's, or step 10's (the same arguments, tile, threads and shared memory).
template <class Epi, class Kernel>
void launch_plan_wave(Kernel kernel, const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const uint8_t *qA = p.qA_blk, *qBt = p.qBt_blk;
  pad_e4m3_if_unaligned(p.M, p.N, K, qA, qBt);  // (the K blocks stay those of the unpadded K)
  const CUtensorMap* ta = e4m3_map(qA, p.M, K, kTallBM);
  const CUtensorMap* tb = e4m3_map(qBt, p.N, K, kPromBN);
  const CUtensorMap* tsa = a_scale_map(p.a_dq_blk, p.M, p.K);
  const CUtensorMap* tsb = b_scale_map(p.b_dq_blk, p.N, p.K);
  const CUtensorMap* td = output_map(p);
  const WavePlan plan = tall_wave_plan(p);
  const WaveWorkspace w = wave_workspace(
      size_t(plan.split_tiles) * plan.splits * TallVec::kVecs * 4, 2 * plan.split_tiles);
  cudaLaunchAttribute cooperative;
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = plan.splits > 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(plan.grid);
  config.blockDim = dim3(3 * kWarpgroup);
  config.dynamicSmemBytes = kTallSmem;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, *ta, *tb, *tsa, *tsb, td ? *td : *ta,
                                td != nullptr, p.M, p.N, p.K, p.D, epi, 16, plan, w.partials,
                                w.counters));
  CUDA_CHECK_LAUNCH();
}
template <class Epi>
void launch_tall_wave_with(const GemmProblem& p, const Epi& epi) {
  static const bool once = (opt_in(tall_wave_kernel<Epi>, kTallSmem), true);
  (void)once;
  launch_plan_wave(tall_wave_kernel<Epi>, p, epi);
}

// Step 6's menu (kTallMenu) with this kernel as a fourth entry (256 x 128, the last wave split;
// kWaveEntry), step 5's rule first, the straight epilogue. The entry is timed at every shape:
// where plan_wave splits nothing it runs step 4's schedule, as step 4's own kernel does, and ran
// 1-3.5 % faster than it there (NOTES.md, "Step 7, rewritten").
constexpr int kWaveEntry = 512;
constexpr int kWaveMenu[] = {kWaveEntry, 256, 128, 64};
constexpr const char* kWaveMenuLabels[] = {"256x128 step 7", "256x128", "128x128", "128x64"};
constexpr int kWaveMenuCount = sizeof(kWaveMenu) / sizeof(kWaveMenu[0]);
static_assert(kWaveMenuCount == kTallMenuCount + 1, "step 6's menu and one entry more");
void launch_block_wave_menu(int entry, const GemmProblem& p) {
  if (entry == kWaveEntry) return launch_tall_wave_with(p, straight_alpha_beta(p));
  launch_block_straight_menu(entry, p);
}
void launch_block_wave(const GemmProblem& p) {
  if (split_k_slices(p) > 0) return launch_split_tuned(p);
  static WidthChoices chosen;
  launch_block_wave_menu(tuned_width("block_wave", launch_block_wave_menu, chosen, p, kWaveMenu,
                                     kWaveMenuCount, kWaveMenuLabels),
                         p);
}
// The new entry alone (--kernel sweep), verified at every shape.
void launch_block_wave_256(const GemmProblem& p) { launch_block_wave_menu(kWaveEntry, p); }
#endif  // FP8_TEMPLATES_ONLY
