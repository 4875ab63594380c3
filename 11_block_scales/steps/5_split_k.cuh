// Chapter 11, step 5: split_tuned. Step 2's kernel with K split where the tiles are few: at
// 256×256×65536 the 128×128 tiles are 4, so 4 SMs of 132 run the whole K loop (512 K tiles)
// while the rest wait. Here each work item is a tile and a slice of its K tiles; the consumers
// write their promoted FP32 sums of the slice, unscaled by alpha, to a workspace (one M×N plane
// a slice), and a second kernel adds the planes in slice order and applies the epilogue
// (split_k_sum_kernel: the same bits every run). The rule: split where 4 × the tiles fit in the
// SMs, into as many slices as the SMs hold (each at least kSplitMinKTiles K tiles); elsewhere
// tall_tuned (step 4). The slices keep step 2's promotion: a slice boundary is a K-tile
// boundary, so each K block's scales apply as before.
// Chapter 06's split-K and chapter 09's split last wave do the same for BF16; cuBLASLt splits K
// at small M too (its `splitKreduce_kernel` at 128×7168×16384, NOTES.md); CUTLASS's
// counterparts are its split-K and Stream-K tile schedulers.
//
//   ./build/11_block_scales/block_scales --kernel split_tuned,tall_tuned --shapes 256x256x65536
//   tools/steps.py diff split_tuned       # against steps/2_scales_tma.cuh
//
// Included once, by 11_block_scales/kernels.cu.
#pragma once

#include "11_block_scales/steps/4_tall_tile.cuh"

// A work item: tile b / splits, slice b % splits (a tile's slices on neighbouring blocks, so
// its A and Bᵀ rows are read from L2 by the blocks that share them at once).
// Shared memory as step 2's at BN = 128 (the bands stay unused: nothing is stored through them).
constexpr int kSplitMinKTiles = 4;  // a slice's K tiles, at least: 512 K

__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    split_k_kernel(const __grid_constant__ CUtensorMap tm_a,
                   const __grid_constant__ CUtensorMap tm_b,
                   const __grid_constant__ CUtensorMap tm_sa,  // A's scales: (M, KB) floats
                   const __grid_constant__ CUtensorMap tm_sb,  // Bᵀ's: (b_scale_ld, NB)
                   int M, int N, int K, int splits, int k_per_split, float* ws, int group) {
  constexpr int BN = kPromBN;
  constexpr int S = kTsStagesOf<BN>, kStage = kFp8StageBytes<BN>;
  constexpr int kABytes = kWsBM * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const uint32_t scales0 = bands0 + kEpiBytes;  // stage s's scales at scales0 + s * kTsScaleBytes
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int work = tiles_m * tiles_n * splits;
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
      for (int b = blockIdx.x; b < work; b += gridDim.x) {
        const TileCoord tc = grouped_tile(b / splits, tiles_m, tiles_n, group);
        const int k0 = (b % splits) * k_per_split, k1 = min(k0 + k_per_split, k_tiles);
        for (int kt = k0; kt < k1; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // the stage's last use is over
          mbar_arrive_expect_tx(full0 + 8 * s, kTsTxBytesOf<BN>);
          const uint32_t sc = scales0 + s * kTsScaleBytes;
          tma_load_2d(base + s * kStage, &tm_a, kt * kFp8BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kABytes, &tm_b, kt * kFp8BK, tc.n * BN, full0 + 8 * s);
          tma_load_2d(sc, &tm_sa, tc.m * kWsBM, kt, full0 + 8 * s);    // A: rows m0 .. m0 + 127
          tma_load_2d(sc + 4 * kWsBM, &tm_sb, kt & ~3, tc.n * BN / kScaleBlock,  // Bᵀ: kb & ~3 ..
                      full0 + 8 * s);
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
    for (int b = blockIdx.x; b < work; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b / splits, tiles_m, tiles_n, group);
      const int k0 = (b % splits) * k_per_split, k1 = min(k0 + k_per_split, k_tiles);
      float acc[BN / 2], part[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = k0; kt < k1; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the tiles and scales of this K tile landed
        // The multipliers of this K block for the thread's two rows (Bᵀ's is float kt % 4 of the
        // four copied), read while nothing waits for them: the wgmma below do not use them.
        const uint32_t sc_at = scales0 + s * kTsScaleBytes;
        float sa_lo, sa_hi, sb;
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sa_lo) : "r"(sc_at + 4 * row_lo));
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sa_hi) : "r"(sc_at + 4 * (row_lo + 8)));
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sb) : "r"(sc_at + 4 * (kWsBM + kt % 4)));
        const float2 sc = make_float2(sa_lo * sb, sa_hi * sb);
        wgmma_fence();  // the promotion read `part`: done before wgmma writes it again
        const uint32_t a_tile = base + s * kStage + row0 * kSwizzleBytes;
        const uint32_t b_tile = base + s * kStage + kABytes;
#pragma unroll
        for (int k32 = 0; k32 < kFp8BK / 32; ++k32)  // a fresh `part`: scale-d 0 on the first
          wgmma_m64n128k32_e4m3(part, SmemDesc::k_major_sw128(a_tile + 32 * k32),
                                SmemDesc::k_major_sw128(b_tile + 32 * k32), k32 > 0);
        wgmma_commit();
        wgmma_wait<0>();
        pin(part);
        release(it);
        BlockScales{}.promote(acc, part, sc);
      }
      // The slice's sum into its plane of the workspace, element by element (masked at M, N):
      // register r is row row_lo + 8 ((r % 4) / 2), column WgmmaAcc::col(t, r) of the tile.
      float* plane = ws + int64_t(b % splits) * M * N;
      const int m_lo = tc.m * kWsBM + row_lo, n0 = tc.n * BN;
#pragma unroll
      for (int r = 0; r < BN / 2; ++r) {
        const int m = m_lo + 8 * ((r % 4) / 2), n = n0 + WgmmaAcc::col(t, r);
        if (m < M && n < N) plane[int64_t(m) * N + n] = acc[r];
      }
    }
  }
}

// D = epi(the slices' planes added in slice order): one thread an element, the same order on
// every run.
template <class Epi>
__global__ void split_k_sum_kernel(const float* __restrict__ ws, int splits, int M, int N,
                                   Epi epi, __nv_bfloat16* __restrict__ D) {
  const int64_t plane = int64_t(M) * N;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < plane;
       i += int64_t(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int s = 0; s < splits; ++s) sum += ws[s * plane + i];
    D[i] = __float2bfloat16_rn(epi(sum, int(i / N), int(i % N)));
  }
}

#ifndef FP8_TEMPLATES_ONLY
// The slices that fit: one a free SM, each at least kSplitMinKTiles K tiles.
inline int split_k_fit(const GemmProblem& p) {
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + kPromBN - 1) / kPromBN);
  const int k_tiles = (p.K + kFp8BK - 1) / kFp8BK;
  return std::min(device_sm_count() / tiles, k_tiles / kSplitMinKTiles);
}
// The rule: the slices K is split into, or 0 where step 4 runs the shape instead.
int split_k_slices(const GemmProblem& p) {
  const int want = split_k_fit(p);
  return want < 4 ? 0 : want;  // enough tiles (or too little K): no split
}

// Step 2's kernel on `want` slices of K (at most), then the sum (step 9 times it as an entry).
void launch_split_slices(const GemmProblem& p, int want) {
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + kPromBN - 1) / kPromBN);
  const int k_tiles = (p.K + kFp8BK - 1) / kFp8BK, sms = device_sm_count();
  const int k_per_split = (k_tiles + want - 1) / want;
  const int splits = (k_tiles + k_per_split - 1) / k_per_split;  // each slice non-empty
  int K = p.K;
  const uint8_t *qA = p.qA_blk, *qBt = p.qBt_blk;
  pad_e4m3_if_unaligned(p.M, p.N, K, qA, qBt);  // (the K blocks stay those of the unpadded K)
  static const bool once = (opt_in(split_k_kernel, kTsSmem), true);
  (void)once;
  const CUtensorMap* ta = e4m3_map(qA, p.M, K, kWsBM);
  const CUtensorMap* tb = e4m3_map(qBt, p.N, K, kPromBN);
  const CUtensorMap* tsa = a_scale_map(p.a_dq_blk, p.M, p.K);
  const CUtensorMap* tsb = b_scale_map(p.b_dq_blk, p.N, p.K);
  static DeviceBuffer<float> planes;  // splits x M x N floats, kept
  float* ws = planes.reserve(size_t(splits) * p.M * p.N);
  const int grid = std::min(tiles * splits, sms);
  constexpr int kSmem = kTsSmemOf<kPromBN>;
  split_k_kernel<<<grid, 3 * kWarpgroup, kSmem>>>(
      *ta, *tb, *tsa, *tsb, p.M, p.N, p.K, splits, k_per_split, ws, 16);
  CUDA_CHECK_LAUNCH();
  const AlphaBeta epi{p.alpha, p.beta, p.C, p.M, p.N};
  const int64_t blocks = std::min<int64_t>((int64_t(p.M) * p.N + 255) / 256, 4 * sms);
  split_k_sum_kernel<<<unsigned(blocks), 256>>>(ws, splits, p.M, p.N, epi, p.D);
  CUDA_CHECK_LAUNCH();
}

void launch_split_tuned(const GemmProblem& p) {
  const int want = split_k_slices(p);
  if (want == 0) return launch_tall_tuned(p);  // step 4
  launch_split_slices(p, want);
}
#endif  // FP8_TEMPLATES_ONLY
