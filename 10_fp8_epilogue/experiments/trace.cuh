// TEMPORARY (not committed): steps 3 and 2's kernel with clock64 stamps per tile, block 0.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "10_fp8_epilogue/steps/3_fp8.cuh"

constexpr int kTrMax = 256;  // tiles traced
// rec[tile][0..5]: consumer wg1 t0: start(before first full wait), first full passed, last wgmma done, epilogue issued;
// producer: sum of empty waits in the tile, time at first load of the tile
template <bool kFp8, int S, int kBands, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    trace_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                 const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                 const float* __restrict__ a_dq, const float* __restrict__ b_dq,
                 __nv_bfloat16* D, Epi epi, int group, long long* rec) {
  constexpr int BN = 256, kStage = kEpiStageBytes<BN>;
  constexpr int kBK = kFp8 ? kFp8BK : BK;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + kBK - 1) / kBK;
  const bool tr = blockIdx.x == 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) { mbar_init(full0 + 8 * s, 1); mbar_init(empty0 + 8 * s, 8); }
    fence_barrier_init();
  }
  __syncthreads();
  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0, j = 0;
      for (int b = blockIdx.x; b < out_tiles; b += gridDim.x, ++j) {
        const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
        long long waited = 0, first = 0;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          const long long w0 = clock64();
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);
          const long long w1 = clock64();
          waited += w1 - w0;
          if (kt == 0) first = w1;
          mbar_arrive_expect_tx(full0 + 8 * s, kStage);
          tma_load_2d(base + s * kStage, &tm_a, kt * kBK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kStage + kWsABytes, &tm_b, kt * kBK, tc.n * BN, full0 + 8 * s);
        }
        if (tr && j < kTrMax) { rec[j * 8 + 4] = waited; rec[j * 8 + 5] = first; }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kBands * kBandBf16Bytes;
    int next_band = 0;
    const float dq = kFp8 ? *a_dq * *b_dq : 1.0f;
    auto release = [&](int it) { if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S)); };
    int it = 0, j = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x, ++j) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      long long c0 = clock64(), c1 = 0;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);
        if (kt == 0) c1 = clock64();
        pin(acc);
        wgmma_fence();
        if constexpr (kFp8) wgmma_stage_e4m3<BN>(acc, base + s * kStage + row0 * kSwizzleBytes, base + s * kStage + kWsABytes);
        else wgmma_stage<BN>(acc, base + s * kStage + row0 * kSwizzleBytes, base + s * kStage + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();
        pin(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      const long long c2 = clock64();
      release(it - 1);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] *= dq;
      store_tile_bf16<BN, Epi, kBands>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, tma, &tm_d, D, bands, next_band);
      const long long c3 = clock64();
      if (tr && t == 0 && wg == 1 && j < kTrMax) { rec[j*8+0]=c0; rec[j*8+1]=c1; rec[j*8+2]=c2; rec[j*8+3]=c3; }
    }
    store_drain(tma);
  }
}

template <bool kFp8, int S, int kBands, class Epi>
void launch_trace_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const CUtensorMap *ta, *tb;
  if constexpr (kFp8) {
    const uint8_t *A = p.qA, *Bt = p.qBt;
    pad_e4m3_if_unaligned(p.M, p.N, K, A, Bt);
    ta = e4m3_map(A, p.M, K, kWsBM); tb = e4m3_map(Bt, p.N, K, 256);
  } else {
    const __nv_bfloat16 *A = p.A, *Bt = p.Bt;
    pad_operands_if_unaligned(p.M, p.N, K, A, Bt);
    ta = tensor_map(A, p.M, K, kWsBM); tb = tensor_map(Bt, p.N, K, 256);
  }
  static const bool once = (opt_in(trace_kernel<kFp8, S, kBands, Epi>, S * kEpiStageBytes<256> + 2048 + 8 * kBands * kBandBf16Bytes), true);
  (void)once;
  static long long* rec = nullptr;
  if (!rec) CUDA_CHECK(cudaMalloc(&rec, kTrMax * 8 * sizeof(long long)));
  CUDA_CHECK(cudaMemset(rec, 0, kTrMax * 8 * sizeof(long long)));
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + 255) / 256);
  const int grid = std::min(tiles, device_sm_count());
  constexpr int kSm = S * kEpiStageBytes<256> + 2048 + 8 * kBands * kBandBf16Bytes;
  static_assert(kSm <= 227 * 1024, "smem");
  trace_kernel<kFp8, S, kBands, Epi><<<grid, 3 * kWarpgroup, kSm>>>(*ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N, K, p.a_dq, p.b_dq, p.D, epi, 16, rec);
  CUDA_CHECK_LAUNCH();
  static int calls = 0;
  if (!std::getenv("FP8_TRACE") || ++calls != 5) return;  // one traced run, after warm-up
  std::vector<long long> h(kTrMax * 8);
  CUDA_CHECK(cudaMemcpy(h.data(), rec, h.size() * 8, cudaMemcpyDeviceToHost));
  const int n = std::min(kTrMax, (tiles + grid - 1) / grid);
  double wait0 = 0, main_ = 0, epi_ = 0, gap = 0, pw = 0;
  for (int j = 0; j < n; ++j) {
    const long long* r = &h[j * 8];
    wait0 += r[1] - r[0]; main_ += r[2] - r[1]; epi_ += r[3] - r[2]; pw += r[4];
    if (j > 0) gap += r[0] - h[(j - 1) * 8 + 3];
  }
  const long long total = h[(n - 1) * 8 + 3] - h[0];
  std::fprintf(stderr, "TRACE %s S=%d bands=%d %dx%dx%d tiles/block %d: per tile (cycles) wait-first-stage %.0f, main loop %.0f, epilogue %.0f, between %.0f, producer empty-waits %.0f; block total %lld cycles\n",
               kFp8 ? "fp8" : "bf16+gelu", S, kBands, p.M, p.N, p.K, n, wait0 / n, main_ / n, epi_ / n, n > 1 ? gap / (n - 1) : 0.0, pw / n, total);
  for (int j = 0; j < std::min(n, 4); ++j) {
    const long long* r = &h[j * 8];
    std::fprintf(stderr, "  tile %d: wait %lld main %lld epi %lld producer-wait %lld first-load-at %lld\n", j, r[1]-r[0], r[2]-r[1], r[3]-r[2], r[4], r[5]-h[0]);
  }
}
void launch_fp8_trace(const GemmProblem& p) { launch_trace_with<true, 4, 2>(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N}); }
void launch_bias_gelu_trace(const GemmProblem& p) { launch_trace_with<false, 4, 2>(p, BiasGelu{{p.alpha, p.beta, p.C, p.M, p.N}, p.bias}); }
void launch_fp8_bands(const GemmProblem& p) { launch_trace_with<true, 3, 4>(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N}); }
void launch_bias_gelu_bands(const GemmProblem& p) { launch_trace_with<false, 3, 4>(p, BiasGelu{{p.alpha, p.beta, p.C, p.M, p.N}, p.bias}); }
