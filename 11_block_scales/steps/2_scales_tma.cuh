// Chapter 11, step 2: scales_tma. Step 1's kernel with its scales copied by TMA, in the same
// stage as the tiles they scale: the producer thread adds two copies to each stage, the K
// block's 128 A scales of the tile's rows (a box of 128 x 1 floats; rows past M come in as
// zeros) and the four Bᵀ scales around the tile's (a box of 4 x 1, 16 bytes, the least TMA
// copies), and the stage's full barrier expects their bytes too. The scale warp, its global
// loads, its stores and its 32 arrivals a stage go; the producer warpgroup gives back what
// chapter 10's step 4 did, so the consumers get 232 registers again. The consumers read the
// three scales a K tile needs from shared memory right after the full barrier's wait, before the K tile's
// wgmma (as DeepGEMM does; step 1 read them after wgmma_wait, on the promotion's path: NOTES.md
// times both). DeepGEMM stages its A scales the same way (a TMA box of BLOCK_M floats a stage).
//
//   ./build/11_block_scales/block_scales --kernel scales_tma,block_scaled --size 4096 --bench
//   tools/steps.py diff scales_tma        # against steps/1_block_scaled.cuh
//
// Included once, by 11_block_scales/kernels.cu.
#pragma once

#include "11_block_scales/steps/1_block_scaled.cuh"

// A stage's scales in shared memory: 128 A scales (512 bytes), then 4 Bᵀ scales (16 bytes); a
// TMA destination is 128-byte aligned, so a stage's take 640 bytes.
constexpr int kTsScaleBytes = 640;
// The tile is (128, BN): 128 here (kPromBN); step 3 times BN = 64 too, whose 64 columns lie in
// one Bᵀ scale block as well. Stages: 5 at 128 (a sixth does not fit beside the bands: 232,448
// bytes), 7 at 64.
template <int BN>
constexpr int kTsStagesOf = BN == 128 ? 5 : 7;
template <int BN>
constexpr int kTsSmemOf = kTsStagesOf<BN> * kFp8StageBytes<BN> + 1024 + 1024 + kEpiBytes +
                          kTsStagesOf<BN> * kTsScaleBytes;
template <int BN>  // a stage's copies: the tiles, 128 A scales, 4 Bᵀ scales
constexpr uint32_t kTsTxBytesOf = kFp8StageBytes<BN> + 4 * kWsBM + 16;
static_assert(kTsSmemOf<128> <= 232448 && kTsSmemOf<64> <= 232448,
              "beyond the opt-in shared memory of sm_90");
// Step 2's own width (and the experiments'):
constexpr int kTsStages = kTsStagesOf<kPromBN>;
constexpr int kTsSmem = kTsSmemOf<kPromBN>;
constexpr uint32_t kTsTxBytes = kTsTxBytesOf<kPromBN>;

template <int BN, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    scales_tma_kernel(const __grid_constant__ CUtensorMap tm_a,
                      const __grid_constant__ CUtensorMap tm_b,
                      const __grid_constant__ CUtensorMap tm_sa,  // A's scales: (M, KB) floats
                      const __grid_constant__ CUtensorMap tm_sb,  // Bᵀ's: (b_scale_ld, NB)
                      const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                      __nv_bfloat16* D, Epi epi, int group) {
  static_assert(BN == 128 || BN == 64, "a tile's columns lie in one Bᵀ scale block");
  constexpr int S = kTsStagesOf<BN>, kStage = kFp8StageBytes<BN>;
  constexpr int kABytes = kWsBM * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const uint32_t scales0 = bands0 + kEpiBytes;  // stage s's scales at scales0 + s * kTsScaleBytes
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
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
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
      float acc[BN / 2], part[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
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
          if constexpr (BN == 128)
            wgmma_m64n128k32_e4m3(part, SmemDesc::k_major_sw128(a_tile + 32 * k32),
                                  SmemDesc::k_major_sw128(b_tile + 32 * k32), k32 > 0);
          else
            wgmma_m64n64k32_e4m3(part, SmemDesc::k_major_sw128(a_tile + 32 * k32),
                                 SmemDesc::k_major_sw128(b_tile + 32 * k32), k32 > 0);
        wgmma_commit();
        wgmma_wait<0>();
        pin(part);
        release(it);
        BlockScales{}.promote(acc, part, sc);
      }
      store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, tma, &tm_d, D, bands,
                          next_band);
    }
    store_drain(tma);
  }
}

// --- The scales' tensor maps --------------------------------------------------------------
// A (rows x cols) row-major FP32 array with rows ld floats apart (ld % 4 == 0: TMA's strides are
// multiples of 16 bytes), boxes of box_cols x box_rows, no swizzle, no L2 promotion; zeros
// outside it (tensor_map_2d, cached as every map is).
inline const CUtensorMap* scale_map(const float* base, int rows, int cols, int ld, int box_cols,
                                    int box_rows = 1) {
  return tensor_map_2d(base, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, rows, cols, box_cols, box_rows,
                       CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, ld);
}

namespace {
// A's scales, KB rows of M, into rows of ld (ld > M: the extra columns are never read: TMA's box
// stops at M).
__global__ void pad_a_scales_kernel(const float* __restrict__ X, int M, int KB, int ld,
                                    float* __restrict__ Y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < int64_t(KB) * M;
       i += int64_t(gridDim.x) * blockDim.x)
    Y[(i / M) * ld + i % M] = X[i];
}
}  // namespace

// A's scale rows (M floats each) are a TMA row only where M % 4 == 0 (and the base is 16-byte
// aligned); otherwise a padded copy (a kept buffer, grown when needed) with rows of round_up(M, 4).
inline const CUtensorMap* a_scale_map(const float* a_dq, int M, int K) {
  const int KB = scale_blocks(K);
  if (M % 4 == 0 && reinterpret_cast<uintptr_t>(a_dq) % 16 == 0)
    return scale_map(a_dq, KB, M, M, kWsBM);
  static DeviceBuffer<float> buf;
  const int ld = (M + 3) / 4 * 4;
  float* padded = buf.reserve(size_t(KB) * ld);
  const int64_t blocks = std::min<int64_t>((int64_t(KB) * M + 255) / 256, 65535);
  pad_a_scales_kernel<<<unsigned(blocks), 256>>>(a_dq, M, KB, ld, padded);
  CUDA_CHECK_LAUNCH();
  return scale_map(padded, KB, M, ld, kWsBM);
}
// Bᵀ's: rows of b_scale_ld(K) floats (a multiple of 4 by construction), boxes of 4 x n_blocks
// (step 8 copies two N blocks' scales at once).
inline const CUtensorMap* b_scale_map(const float* b_dq, int N, int K, int n_blocks = 1) {
  return scale_map(b_dq, scale_blocks(N), b_scale_ld(K), b_scale_ld(K), 4, n_blocks);
}

template <int BN = kPromBN, class Epi>
void launch_scales_tma_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const uint8_t *qA = p.qA_blk, *qBt = p.qBt_blk;
  pad_e4m3_if_unaligned(p.M, p.N, K, qA, qBt);  // (the K blocks stay those of the unpadded K)
  static const bool once = (opt_in(scales_tma_kernel<BN, Epi>, kTsSmemOf<BN>), true);
  (void)once;
  const CUtensorMap* ta = e4m3_map(qA, p.M, K, kWsBM);
  const CUtensorMap* tb = e4m3_map(qBt, p.N, K, BN);
  const CUtensorMap* tsa = a_scale_map(p.a_dq_blk, p.M, p.K);
  const CUtensorMap* tsb = b_scale_map(p.b_dq_blk, p.N, p.K);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());
  constexpr int kSmem = kTsSmemOf<BN>;
  scales_tma_kernel<BN, Epi><<<grid, 3 * kWarpgroup, kSmem>>>(
      *ta, *tb, *tsa, *tsb, td ? *td : *ta, td != nullptr, p.M, p.N, p.K, p.D, epi, 16);
  CUDA_CHECK_LAUNCH();
}

void launch_scales_tma(const GemmProblem& p) {
  launch_scales_tma_with(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
