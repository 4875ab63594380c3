// Chapter 11, step 1: block_scaled. Chapter 10's promoted kernel (its step 4) with fine-grained
// scales: one per 1 x 128 of A (a row's K block) and one per 128 x 128 of Bᵀ (the DeepSeek-V3
// report's recipe; cuBLASLt's VEC128_32F and BLK128x128_32F scale modes). A K tile of 128 is one
// K block, so the promotion that chapter 10's step 4 does anyway is where the scales go:
// acc += part * a_dq(m, kb) * b_dq(nb, kb) (the tile's 128 columns are one Bᵀ block: nb is the tile's column index). The scales travel with
// the tiles: a second producer warp stores each stage's 129 floats into shared memory and
// arrives on the stage's full barrier too, so a consumer reads its three from shared memory.
// (Loaded by the consumers themselves from global memory, it was slower still: NOTES.md.) Five
// stages: a sixth and the scales do not fit in 227 KiB beside the bands.
//
//   ./build/11_block_scales/block_scales --kernel block_scaled --size 4096 --bench
//   tools/steps.py diff block_scaled      # against 10_fp8_epilogue/steps/4_promoted.cuh
//
// Included once, by 11_block_scales/kernels.cu (and, FP8_TEMPLATES_ONLY, by the exercise).
#pragma once

#include "10_fp8_epilogue/steps/4_promoted.cuh"

// The scales, and the promotion with them: acc += part * the multiplier of the register's row.
// Registers 4 j and 4 j + 1 hold the thread's row m_lo, 4 j + 2 and 4 j + 3 row m_lo + 8
// (WgmmaAcc); sc = (a_dq(m_lo) b_dq, a_dq(m_lo + 8) b_dq). One FFMA a register.
struct BlockScales {
  const float* a_dq;  // a_scale_index(m, kb, M)
  const float* b_dq;  // b_scale_index(nb, kb, K)
  template <int R>
  __device__ __forceinline__ void promote(float (&acc)[R], const float (&part)[R],
                                          float2 sc) const {
#pragma unroll
    for (int i = 0; i < R; ++i) acc[i] = fmaf(part[i], (i % 4) < 2 ? sc.x : sc.y, acc[i]);
  }
};
static_assert(kPromBN == kScaleBlock && kFp8BK == kScaleBlock,
              "a tile's columns are one Bᵀ scale block, a K tile one K block");

constexpr int kBlkStages = 5;
constexpr int kScaleBytes = (kWsBM + 1) * 4 + 12;  // a stage's 129 scales, 16-byte aligned
constexpr int kBlkSmem =
    kBlkStages * kFp8StageBytes<kPromBN> + 1024 + 1024 + kEpiBytes + kBlkStages * kScaleBytes;



template <class Scales, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    block_scaled_kernel(const __grid_constant__ CUtensorMap tm_a,
                        const __grid_constant__ CUtensorMap tm_b,
                        const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                        Scales scales, __nv_bfloat16* D, Epi epi, int group) {
  constexpr int BN = kPromBN, S = kBlkStages, kStage = kFp8StageBytes<BN>;
  constexpr int kABytes = kWsBM * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const uint32_t scales0 = bands0 + kEpiBytes;  // stage s's scales at scales0 + s * kScaleBytes
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + kFp8BK - 1) / kFp8BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1 + 32);  // the producer's arrive.expect_tx, the scale warp's lanes
      mbar_init(empty0 + 8 * s, 256);  // every consumer thread: each read the stage's scales
    }
    fence_barrier_init();
  }
  __syncthreads();  // the barriers exist before anyone uses them

  if (wg == 0) {
    // 48 registers for the scale warp's prefetch (40 spill); so the consumers get 224, not 232:
    // 128 x (168 - 48) given back covers 256 x (224 - 168) taken.
    setmaxnreg_dec<48>();
    if (t / 32 == 1) {
      // ---- THE SCALE WARP: stage s gets, with its tiles, the K block's 128 A scales of the
      // tile's rows (zeros past M) and the Bᵀ block's one. A lane loads 4 (+ 1) of them a K
      // tile, one K tile ahead (the loads of the next fly while the warp waits for a free
      // stage), stores them, and arrives on the stage's full barrier.
      const int lane = t % 32;
      float a[kWsBM / 32], bs = 0.0f;
      auto load = [&](const TileCoord& tc, int kt, float(&va)[kWsBM / 32], float& vb) {
#pragma unroll
        for (int j = 0; j < kWsBM / 32; ++j) {
          const int m = tc.m * kWsBM + lane + 32 * j;
          va[j] = m < M ? __ldg(scales.a_dq + a_scale_index(m, kt, M)) : 0.0f;
        }
        vb = lane == 0 ? __ldg(scales.b_dq + b_scale_index(tc.n, kt, K)) : 0.0f;
      };
      int it = 0;
      bool first = true;
      for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
        const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          if (first) load(tc, kt, a, bs), first = false;
          // The next K tile's scales (this tile's next K block, or the next tile's first).
          float a_next[kWsBM / 32], b_next = 0.0f;
          if (kt + 1 < k_tiles) {
            load(tc, kt + 1, a_next, b_next);
          } else if (b + int(gridDim.x) < out_tiles) {
            load(grouped_tile(b + gridDim.x, tiles_m, tiles_n, group), 0, a_next, b_next);
          }
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // the stage's last use is over
          const uint32_t dst = scales0 + s * kScaleBytes;
#pragma unroll
          for (int j = 0; j < kWsBM / 32; ++j)
            asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(dst + 4 * (lane + 32 * j)), "f"(a[j])
                         : "memory");
          if (lane == 0)
            asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(dst + 4 * kWsBM), "f"(bs) : "memory");
          // Every lane arrives: an arrive releases the arriving thread's own stores only (PTX
          // memory model), so one lane's arrive after a __syncwarp would not publish the others'.
          mbar_arrive(full0 + 8 * s);
#pragma unroll
          for (int j = 0; j < kWsBM / 32; ++j) a[j] = a_next[j];
          bs = b_next;
        }
      }
    } else if (t == 0) {
      int it = 0;
      for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
        const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // the stage's last use is over
          mbar_arrive_expect_tx(full0 + 8 * s, kStage);
          tma_load_2d(base + s * kStage, &tm_a, kt * kFp8BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kABytes, &tm_b, kt * kFp8BK, tc.n * BN, full0 + 8 * s);
        }
      }
    }
  } else {
    setmaxnreg_inc<224>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    const int row_lo = row0 + WgmmaAcc::row(t, 0);  // the thread's rows in the tile: row_lo, +8
    // Every consumer thread gives the stage back: its arrive releases its own reads of the
    // stage's scales, which the scale warp overwrites next round (one lane's would not).
    auto release = [&](int it) { mbar_arrive(empty0 + 8 * (it % S)); };
    int it = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc[BN / 2], part[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        wgmma_fence();  // the promotion read `part`: done before wgmma writes it again
        const uint32_t a_tile = base + s * kStage + row0 * kSwizzleBytes;
        const uint32_t b_tile = base + s * kStage + kABytes;
#pragma unroll
        for (int k32 = 0; k32 < kFp8BK / 32; ++k32)  // a fresh `part`: scale-d 0 on the first
          wgmma_m64n128k32_e4m3(part, SmemDesc::k_major_sw128(a_tile + 32 * k32),
                                SmemDesc::k_major_sw128(b_tile + 32 * k32), k32 > 0);
        wgmma_commit();
        // `part` complete. No second `part` to fill meanwhile: ptxas serializes every wgmma of a
        // kernel that reads one accumulator while another's wgmma run (C7514; NOTES.md). The
        // other consumer warpgroup's wgmma may run meanwhile (mostly, both wait at once: README).
        wgmma_wait<0>();
        pin(part);
        // The multipliers of this K block for the thread's two rows, from shared memory, read
        // after the wait: read before it, ptxas hoists them above the last wgmma, which then
        // waits for them (NOTES.md).
        const uint32_t sc_at = scales0 + s * kScaleBytes;
        float sa_lo, sa_hi, sb;
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sa_lo) : "r"(sc_at + 4 * row_lo));
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sa_hi) : "r"(sc_at + 4 * (row_lo + 8)));
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sb) : "r"(sc_at + 4 * kWsBM));
        release(it);
        scales.promote(acc, part, make_float2(sa_lo * sb, sa_hi * sb));
      }
      store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, tma, &tm_d, D, bands,
                          next_band);
    }
    store_drain(tma);
  }
}

template <class Scales, class Epi>
void launch_block_scaled_with(const GemmProblem& p, const Scales& scales, const Epi& epi) {
  int K = p.K;
  const uint8_t *qA = p.qA_blk, *qBt = p.qBt_blk;
  pad_e4m3_if_unaligned(p.M, p.N, K, qA, qBt);  // (the K blocks stay those of the unpadded K)
  static const bool once = (opt_in(block_scaled_kernel<Scales, Epi>, kBlkSmem), true);
  (void)once;
  const CUtensorMap* ta = e4m3_map(qA, p.M, K, kWsBM);
  const CUtensorMap* tb = e4m3_map(qBt, p.N, K, kPromBN);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + kPromBN - 1) / kPromBN);
  const int grid = std::min(tiles, device_sm_count());
  block_scaled_kernel<Scales, Epi><<<grid, 3 * kWarpgroup, kBlkSmem>>>(
      *ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N, p.K, scales, p.D, epi, 16);
  CUDA_CHECK_LAUNCH();
}

// The launcher the program lists (chapter10.h). The exercise's translation unit defines
// FP8_TEMPLATES_ONLY: it compiles the templates it needs, and no launcher twice.
#ifndef FP8_TEMPLATES_ONLY

void launch_block_scaled(const GemmProblem& p) {
  launch_block_scaled_with(p, BlockScales{p.a_dq_blk, p.b_dq_blk},
                           AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
#endif  // FP8_TEMPLATES_ONLY
