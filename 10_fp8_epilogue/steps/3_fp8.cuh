// Chapter 10, step 3: fp8. Step 1's kernel on FP8 e4m3 operands: wgmma m64nNk32 e4m3 x e4m3 with
// FP32 accumulation, twice the BF16 rate. A K tile is still one 128-byte swizzled row, now of 128
// elements: the same tensor maps (of bytes), stages and descriptors, four k32 steps a tile. The
// operands carry one scale each (a_dq, b_dq: per tensor); the consumers multiply the
// accumulator by their product before the epilogue, as cuBLASLt's A and B scale pointers do.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel fp8 --size 4096 --bench
//   tools/steps.py diff fp8               # against steps/1_bf16_out.cuh
//
// Included once, by 10_fp8_epilogue/kernels.cu (and, FP8_TEMPLATES_ONLY, by the exercise).
#pragma once

#include <algorithm>

#include "10_fp8_epilogue/steps/2_bias_gelu.cuh"
#include "common/matrix.h"  // DeviceBuffer

constexpr int kFp8BK = 128;  // K elements a tile: one 128-byte row of e4m3

// The four k32 steps of one stage for one warpgroup: the 64 rows of the A tile at a_tile, the
// BN rows of the Bᵀ tile at b_tile. Step s reads bytes 32 s .. 32 s + 31 of every row.
template <int BN>
__device__ __forceinline__ void wgmma_stage_e4m3(float (&acc)[BN / 2], uint32_t a_tile,
                                                 uint32_t b_tile) {
  static_assert(BN == 64 || BN == 128 || BN == 192 || BN == 256,
                "the widths hopper_ptx.cuh has an e4m3 wgmma for");
#pragma unroll
  for (int s = 0; s < kFp8BK / 32; ++s) {
    const uint64_t da = SmemDesc::k_major_sw128(a_tile + 32 * s);
    const uint64_t db = SmemDesc::k_major_sw128(b_tile + 32 * s);
    if constexpr (BN == 64) wgmma_m64n64k32_e4m3(acc, da, db, 1);
    else if constexpr (BN == 128) wgmma_m64n128k32_e4m3(acc, da, db, 1);
    else if constexpr (BN == 192) wgmma_m64n192k32_e4m3(acc, da, db, 1);
    else wgmma_m64n256k32_e4m3(acc, da, db, 1);
  }
}

// A K tile of 128 e4m3 is one 128-byte row, as 64 BF16 are: step 1's stages, bytes and shared
// memory at every width (kEpiStages).
template <int BN>
constexpr int kFp8Stages = kEpiStages<BN>;
template <int BN>
constexpr int kFp8StageBytes = kEpiStageBytes<BN>;
template <int BN>
constexpr int kFp8Smem = kEpiSmem<BN>;

template <int BN, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    fp8_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
               const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
               const float* __restrict__ a_dq, const float* __restrict__ b_dq,
               __nv_bfloat16* D, Epi epi, int group) {
  constexpr int S = kFp8Stages<BN>, kStage = kFp8StageBytes<BN>, kABytes = kWsBM * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + kFp8BK - 1) / kFp8BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);   // the producer's arrive.expect_tx
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
          mbar_arrive_expect_tx(full0 + 8 * s, kStage);
          tma_load_2d(base + s * kStage, &tm_a, kt * kFp8BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kABytes, &tm_b, kt * kFp8BK, tc.n * BN, full0 + 8 * s);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    const float dq = *a_dq * *b_dq;  // the two per-tensor scales, once per thread
    auto release = [&](int it) {
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    int it = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage_e4m3<BN>(acc, base + s * kStage + row0 * kSwizzleBytes,
                             base + s * kStage + kABytes);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] *= dq;
      store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, tma, &tm_d, D, bands,
                          next_band);
    }
    store_drain(tma);
  }
}

// --- Host side ------------------------------------------------------------------------------------
namespace {
// Y (rows x Kp) = X (rows x K) with zero bytes K .. Kp - 1: TMA needs 16-byte aligned rows
// (K % 16 == 0 for e4m3), as chapter 07's pad_rows provides for BF16.
__global__ void pad_rows_e4m3_kernel(const uint8_t* __restrict__ X, int64_t rows, int K, int Kp,
                                     uint8_t* __restrict__ Y) {
  const int64_t total = rows * Kp;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / Kp;
    const int k = int(i % Kp);
    Y[i] = k < K ? X[r * K + k] : 0;
  }
}
}  // namespace

// Where K % 16 != 0 (or a base is not 16-byte aligned), A and Bᵀ become padded copies (two
// kept buffers, grown when needed) and K becomes round_up(K, 16); zero codes add exact zeros.
inline void pad_e4m3_if_unaligned(int M, int N, int& K, const uint8_t*& A, const uint8_t*& Bt) {
  if (K % 16 == 0 && reinterpret_cast<uintptr_t>(A) % 16 == 0 &&
      reinterpret_cast<uintptr_t>(Bt) % 16 == 0)
    return;
  static DeviceBuffer<uint8_t> buf[2];
  const int Kp = (K + 15) / 16 * 16;
  const uint8_t* src[2] = {A, Bt};
  const int rows[2] = {M, N};
  for (int w = 0; w < 2; ++w) {
    const size_t need = size_t(rows[w]) * Kp;
    uint8_t* padded = buf[w].reserve(need);
    const int64_t blocks = std::min<int64_t>((int64_t(need) + 255) / 256, 65535);
    pad_rows_e4m3_kernel<<<unsigned(blocks), 256>>>(src[w], rows[w], K, Kp, padded);
    CUDA_CHECK_LAUNCH();
  }
  A = buf[0].get();
  Bt = buf[1].get();
  K = Kp;
}

template <int BN, class Epi>
void launch_fp8_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const uint8_t *A = p.qA, *Bt = p.qBt;
  pad_e4m3_if_unaligned(p.M, p.N, K, A, Bt);
  static const bool once = (opt_in(fp8_kernel<BN, Epi>, kFp8Smem<BN>), true);
  (void)once;
  const CUtensorMap* ta = e4m3_map(A, p.M, K, kWsBM);
  const CUtensorMap* tb = e4m3_map(Bt, p.N, K, BN);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());
  constexpr int kSmem = kFp8Smem<BN>;
  fp8_kernel<BN, Epi><<<grid, 3 * kWarpgroup, kSmem>>>(
      *ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N, K, p.a_dq, p.b_dq, p.D, epi, 16);
  CUDA_CHECK_LAUNCH();
}

// The launchers the program lists (chapter10.h). The exercise's translation unit defines
// FP8_TEMPLATES_ONLY: it compiles the templates above with its own policy, and no launcher twice.
#ifndef FP8_TEMPLATES_ONLY

void launch_fp8(const GemmProblem& p) {
  launch_fp8_with<256>(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
// The same at BN = 128 (--kernel sweep): what step 4's tile costs without its promotion.
void launch_fp8_128(const GemmProblem& p) {
  launch_fp8_with<128>(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
#endif  // FP8_TEMPLATES_ONLY
