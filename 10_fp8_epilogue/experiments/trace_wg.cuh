// Chapter 10, experiment: trace_wg, step 7's comparison made one change apart, and a timeline
// of its tiles. tr_straight_128_s6 and tr_straight_128_s4 are copies of step 6's (128, 128) BF16
// kernel (step 1's, straight bias and GELU) with 6 stages (as step 6) and with 4 (as step 7);
// tr_wg_128 is a copy of step 7's kernel at BN = 128; tr_wg2_128 of it with two epilogue
// warpgroups, and tr_wg2_stsm_128 the same with step 8's functor. With FP8_TRACE=1 the first
// thread of math (or consumer) warpgroup 1 and of the (first) epilogue warpgroup in block 0
// read clock64 at a tile's start, after its first full-barrier wait, after its last wgmma,
// after the hand-off wait and stores, and around the epilogue (tr_report prints the averages on
// the launcher's fifth call); without it the stamps are not taken. NOTES.md, "Step 7 one change
// apart", and (two epilogue warpgroups) "Two epilogue warpgroups, traced".
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel tr_straight_128_s4,tr_wg_128 --shapes 4096x24576x1536 --bench
//   FP8_TRACE=1 ./build/10_fp8_epilogue/fp8_epilogue --kernel tr_wg_128 --shapes 4096x32768x512 --bench
//
// Included once, by 10_fp8_epilogue/kernels.cu, after the steps.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
#include "10_fp8_epilogue/steps/8_stmatrix.cuh"  // steps 6-8: the kernels copied; stsm_bias_gelu

constexpr int kTrMax = 128;  // tiles traced
constexpr int kTrW = 12;     // stamps a tile
// Both copies' producer (steps 1 and 7's): one thread walks the block's tiles and their K tiles.
template <int BN, int S>
__device__ __forceinline__ void tr_produce(const CUtensorMap* tm_a, const CUtensorMap* tm_b,
                                           uint32_t base, uint32_t full0, uint32_t empty0,
                                           int out_tiles, int tiles_m, int tiles_n, int k_tiles,
                                           int group) {
  constexpr int kStage = kEpiStageBytes<BN>;
  int it = 0;
  for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
    const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      const int s = it % S;
      mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // the stage's last use is over
      mbar_arrive_expect_tx(full0 + 8 * s, kStage);
      tma_load_2d(base + s * kStage, tm_a, kt * BK, tc.m * kWsBM, full0 + 8 * s);
      tma_load_2d(base + s * kStage + kWsABytes, tm_b, kt * BK, tc.n * BN, full0 + 8 * s);
    }
  }
}

// Both copies' math for one tile (step 1's K loop, as steps 6 and 7 run it), acc zeroed by the
// caller: each stage's wgmma issued as it lands, the stage before released once that wgmma is
// issued, then every wgmma waited for and the last stage released. Stamps, where `stamp`: 0 tile
// start, 1 first full barrier passed, 2 last wgmma done.
template <int BN, int S>
__device__ __forceinline__ void tr_k_loop(float (&acc)[BN / 2], uint32_t base, uint32_t full0,
                                          uint32_t empty0, int row0, int t, int k_tiles, int& it,
                                          bool stamp, long long* r) {
  constexpr int kStage = kEpiStageBytes<BN>;
  auto release = [&](int i) {
    if (t % 32 == 0) mbar_arrive(empty0 + 8 * (i % S));
  };
  if (stamp) r[0] = clock64();
  for (int kt = 0; kt < k_tiles; ++kt, ++it) {
    const int s = it % S;
    mbar_wait(full0 + 8 * s, (it / S) & 1);
    if (stamp && kt == 0) r[1] = clock64();
    pin(acc);
    wgmma_fence();
    wgmma_stage<BN>(acc, base + s * kStage + row0 * kSwizzleBytes, base + s * kStage + kWsABytes);
    wgmma_commit();
    wgmma_wait<1>();
    pin(acc);
    if (kt > 0) release(it - 1);
  }
  wgmma_wait<0>();
  pin(acc);
  if (stamp) r[2] = clock64();
  release(it - 1);
}

// Step 6's kernel (step 1's, straight functor) with S stages. Stamps (consumer warpgroup 1,
// thread 0): 0 tile start, 1 first full barrier passed, 2 last wgmma done, 3 store returned.
template <int BN, int S, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    tr_straight_kernel(const __grid_constant__ CUtensorMap tm_a,
                       const __grid_constant__ CUtensorMap tm_b,
                       const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                       __nv_bfloat16* D, Epi epi, int group, long long* rec) {
  constexpr int kStage = kEpiStageBytes<BN>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + BK - 1) / BK;
  const bool tr = rec != nullptr && blockIdx.x == 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, 8);
    }
    fence_barrier_init();
  }
  __syncthreads();
  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0)
      tr_produce<BN, S>(&tm_a, &tm_b, base, full0, empty0, out_tiles, tiles_m, tiles_n, k_tiles,
                        group);
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    const bool me = tr && wg == 1 && t == 0;
    int next_band = 0, it = 0, j = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x, ++j) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      long long* r = rec + (j % kTrMax) * kTrW;
      tr_k_loop<BN, S>(acc, base, full0, empty0, row0, t, k_tiles, it, me && j < kTrMax, r);
      store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + row0, tc.n * BN, M, N, tma, &tm_d, D, bands,
                          next_band);
      if (me && j < kTrMax) r[3] = clock64();
    }
    store_drain(tma);
  }
}

// Step 7's kernel. Stamps: math warpgroup 1, thread 0: 0 tile start, 1 first full barrier
// passed, 2 last wgmma done, 3 acc_empty passed, 4 hand-off stored; epilogue thread 0: 5 before
// acc_full, 6 acc_full passed, 7 slab 0 stored, 8 slab 1 stored.
template <int BN, class Epi>
__global__ void __launch_bounds__(4 * kWarpgroup, 1)
    tr_wg_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                 const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                 __nv_bfloat16* D, Epi epi, int group, long long* rec) {
  constexpr int S = kWgStages<BN>, kStage = kEpiStageBytes<BN>;
  constexpr int kSlabBytes = kHandBytes<BN> / 2;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t acc_full = empty0 + 8 * S, acc_empty = acc_full + 8;
  const uint32_t bands0 = full0 + 1024;
  const uint32_t hand = bands0 + kWgEpiBytes<1>;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + BK - 1) / BK;
  const bool tr = rec != nullptr && blockIdx.x == 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, 8);
    }
    mbar_init(acc_full, 2 * kWarpgroup);
    mbar_init(acc_empty, kWarpgroup);
    fence_barrier_init();
  }
  __syncthreads();
  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0)
      tr_produce<BN, S>(&tm_a, &tm_b, base, full0, empty0, out_tiles, tiles_m, tiles_n, k_tiles,
                        group);
  } else if (wg <= 2) {
    setmaxnreg_inc<152>();
    const int row0 = 64 * (wg - 1);
    const uint32_t slab = hand + (wg - 1) * kSlabBytes;
    const bool me = tr && wg == 1 && t == 0;
    int it = 0, j = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x, ++j) {
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      long long* r = rec + (j % kTrMax) * kTrW;
      tr_k_loop<BN, S>(acc, base, full0, empty0, row0, t, k_tiles, it, me && j < kTrMax, r);
      mbar_wait(acc_empty, (j & 1) ^ 1);
      if (me && j < kTrMax) r[3] = clock64();
#pragma unroll
      for (int q = 0; q < BN / 8; ++q)
        asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(
                         slab + (q * kWarpgroup + t) * 16),
                     "f"(acc[4 * q]), "f"(acc[4 * q + 1]), "f"(acc[4 * q + 2]),
                     "f"(acc[4 * q + 3])
                     : "memory");
      mbar_arrive(acc_full);
      if (me && j < kTrMax) r[4] = clock64();
    }
  } else {
    setmaxnreg_inc<168>();
    const uint32_t bands = bands0 + (t / 32) * kEpiBandsPerWarp * kBandBf16Bytes;
    const bool me = tr && t == 0;
    int next_band = 0, j = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x, ++j) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      long long* r = rec + (j % kTrMax) * kTrW;
      if (me && j < kTrMax) r[5] = clock64();
      mbar_wait(acc_full, j & 1);
      if (me && j < kTrMax) r[6] = clock64();
#pragma unroll 1
      for (int x = 0; x < 2; ++x) {
        float acc[BN / 2];
#pragma unroll
        for (int q = 0; q < BN / 8; ++q)
          asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                       : "=f"(acc[4 * q]), "=f"(acc[4 * q + 1]), "=f"(acc[4 * q + 2]),
                         "=f"(acc[4 * q + 3])
                       : "r"(hand + x * kSlabBytes + (q * kWarpgroup + t) * 16)
                       : "memory");
        if (x == 1) mbar_arrive(acc_empty);
        store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + 64 * x, tc.n * BN, M, N, tma, &tm_d, D,
                            bands, next_band);
        if (me && j < kTrMax) r[7 + x] = clock64();
      }
    }
    store_drain(tma);
  }
}

// The same with two epilogue warpgroups (step 7's E = 2: warpgroup 3 + x stores slab x), any
// functor (step 8's too). Stamps as above; 5-7 by thread 0 of epilogue warpgroup 3 (slab 0).
template <int BN, class Epi>
__global__ void __launch_bounds__(5 * kWarpgroup, 1)
    tr_wg2_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                 const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                 __nv_bfloat16* D, Epi epi, int group, long long* rec) {
  constexpr int S = kWgStages<BN>, kStage = kEpiStageBytes<BN>;
  constexpr int kSlabBytes = kHandBytes<BN> / 2;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t acc_full = empty0 + 8 * S, acc_empty = acc_full + 8;
  const uint32_t bands0 = full0 + 1024;
  const uint32_t hand = bands0 + kWgEpiBytes<2>;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + BK - 1) / BK;
  const bool tr = rec != nullptr && blockIdx.x == 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, 8);
    }
    mbar_init(acc_full, 2 * kWarpgroup);
    mbar_init(acc_empty, 2 * kWarpgroup);
    fence_barrier_init();
  }
  __syncthreads();
  if (wg == 0) {
    setmaxnreg_dec<WgRegs<2>::kProducer>();
    if (t == 0)
      tr_produce<BN, S>(&tm_a, &tm_b, base, full0, empty0, out_tiles, tiles_m, tiles_n, k_tiles,
                        group);
  } else if (wg <= 2) {
    // the math warpgroups stay at the launch's 96 registers (WgRegs<2>)
    const int row0 = 64 * (wg - 1);
    const uint32_t slab = hand + (wg - 1) * kSlabBytes;
    const bool me = tr && wg == 1 && t == 0;
    int it = 0, j = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x, ++j) {
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      long long* r = rec + (j % kTrMax) * kTrW;
      tr_k_loop<BN, S>(acc, base, full0, empty0, row0, t, k_tiles, it, me && j < kTrMax, r);
      mbar_wait(acc_empty, (j & 1) ^ 1);
      if (me && j < kTrMax) r[3] = clock64();
#pragma unroll
      for (int q = 0; q < BN / 8; ++q)
        asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(
                         slab + (q * kWarpgroup + t) * 16),
                     "f"(acc[4 * q]), "f"(acc[4 * q + 1]), "f"(acc[4 * q + 2]),
                     "f"(acc[4 * q + 3])
                     : "memory");
      mbar_arrive(acc_full);
      if (me && j < kTrMax) r[4] = clock64();
    }
  } else {
    setmaxnreg_inc<WgRegs<2>::kEpilogue>();
    const int e = wg - 3;
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 12) * kEpiBandsPerWarp * kBandBf16Bytes;
    const bool me = tr && e == 0 && t == 0;
    int next_band = 0, j = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x, ++j) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      long long* r = rec + (j % kTrMax) * kTrW;
      if (me && j < kTrMax) r[5] = clock64();
      mbar_wait(acc_full, j & 1);
      if (me && j < kTrMax) r[6] = clock64();
#pragma unroll 1
      for (int x = e; x < 2; x += 2) {
        float acc[BN / 2];
#pragma unroll
        for (int q = 0; q < BN / 8; ++q)
          asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                       : "=f"(acc[4 * q]), "=f"(acc[4 * q + 1]), "=f"(acc[4 * q + 2]),
                         "=f"(acc[4 * q + 3])
                       : "r"(hand + x * kSlabBytes + (q * kWarpgroup + t) * 16)
                       : "memory");
        mbar_arrive(acc_empty);
        store_tile_bf16<BN>(acc, epi, tc.m * kWsBM + 64 * x, tc.n * BN, M, N, tma, &tm_d, D,
                            bands, next_band);
        if (me && j < kTrMax) r[7 + x] = clock64();
      }
    }
    store_drain(tma);
  }
}

#ifndef FP8_TEMPLATES_ONLY
// The stamps, averaged over block 0's tiles (the first and last left out), on the fifth call.
inline void tr_report(const char* what, const GemmProblem& p, const long long* rec, int tiles,
                      int wg) {  // wg: the epilogue warpgroups (0: step 6's kernel)
  static std::map<std::string, int> calls;
  if (!std::getenv("FP8_TRACE") || ++calls[what] != 5) return;
  const int n = std::min(kTrMax, (tiles + device_sm_count() - 1) / device_sm_count());
  std::vector<long long> h(kTrMax * kTrW);
  CUDA_CHECK(cudaMemcpy(h.data(), rec, h.size() * 8, cudaMemcpyDeviceToHost));
  double d[8] = {};
  int c = 0;
  for (int j = 1; j + 1 < n; ++j, ++c) {
    const long long* r = &h[j * kTrW];
    const long long* q = &h[(j + 1) * kTrW];
    d[0] += r[1] - r[0];  // waiting for the first stage
    d[1] += r[2] - r[1];  // the K loop
    d[2] += r[3] - r[2];  // step 6: the store; step 7: the wait for acc_empty
    d[3] += q[0] - r[0];  // a tile, start to start (math warpgroup)
    if (wg) {
      d[4] += r[4] - r[3];  // the hand-off stores
      d[5] += r[6] - r[5];  // the epilogue waiting for acc_full
      d[6] += r[wg == 2 ? 7 : 8] - r[6];  // the epilogue: both slabs (E = 1), slab 0 (E = 2)
    }
  }
  if (c == 0) return;
  for (double& x : d) x /= c;
  std::fprintf(stderr,
               "TRACE %s %dx%dx%d, block 0, %d tiles averaged (cycles a tile): first stage %.0f, "
               "K loop %.0f, %s %.0f, tile start to start %.0f",
               what, p.M, p.N, p.K, c, d[0], d[1], wg ? "acc_empty wait" : "store", d[2], d[3]);
  if (wg)
    std::fprintf(stderr, ", hand-off stores %.0f, epilogue: acc_full wait %.0f, %s %.0f", d[4],
                 d[5], wg == 2 ? "its slab" : "two slabs", d[6]);
  std::fprintf(stderr, "\n");
}

inline long long* tr_buffer() {
  static long long* rec = nullptr;
  if (!rec) CUDA_CHECK(cudaMalloc(&rec, kTrMax * kTrW * sizeof(long long)));
  return std::getenv("FP8_TRACE") ? rec : nullptr;
}

template <int BN, int S>
void launch_tr_straight(const GemmProblem& p) {
  constexpr int kSmem = S * kEpiStageBytes<BN> + 1024 + 1024 + kEpiBytes;
  static_assert(kSmem <= 227 * 1024, "shared memory");
  using Epi = Straight<BiasGelu>;
  int K = p.K;
  const __nv_bfloat16 *A = p.A, *Bt = p.Bt;
  pad_operands_if_unaligned(p.M, p.N, K, A, Bt);
  static const bool once = (opt_in(tr_straight_kernel<BN, S, Epi>, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, p.M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, p.N, K, BN);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());
  long long* rec = tr_buffer();
  tr_straight_kernel<BN, S, Epi><<<grid, 3 * kWarpgroup, kSmem>>>(
      *ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N, K, p.D, straight_bias_gelu(p), 16, rec);
  CUDA_CHECK_LAUNCH();
  if (rec) tr_report(S == 4 ? "straight_128_s4" : "straight_128_s6", p, rec, tiles, 0);
}

template <int BN>
void launch_tr_wg(const GemmProblem& p) {
  using Epi = Straight<BiasGelu>;
  int K = p.K;
  const __nv_bfloat16 *A = p.A, *Bt = p.Bt;
  pad_operands_if_unaligned(p.M, p.N, K, A, Bt);
  static const bool once = (opt_in(tr_wg_kernel<BN, Epi>, kWgSmem<BN, 1>), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, p.M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, p.N, K, BN);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());
  long long* rec = tr_buffer();
  constexpr int kSmem = kWgSmem<BN, 1>;
  tr_wg_kernel<BN, Epi><<<grid, 4 * kWarpgroup, kSmem>>>(
      *ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N, K, p.D, straight_bias_gelu(p), 16, rec);
  CUDA_CHECK_LAUNCH();
  if (rec) tr_report("wg_128", p, rec, tiles, 1);
}

void launch_tr_straight_128_s4(const GemmProblem& p) { launch_tr_straight<128, 4>(p); }
void launch_tr_straight_128_s6(const GemmProblem& p) { launch_tr_straight<128, 6>(p); }
void launch_tr_wg_128(const GemmProblem& p) { launch_tr_wg<128>(p); }

// Two epilogue warpgroups, with step 7's store (Straight<BiasGelu>) and with step 8's (Stsm).
template <class Epi>
void launch_tr_wg2(const GemmProblem& p, const char* what, const Epi& epi) {
  constexpr int BN = 128;
  int K = p.K;
  const __nv_bfloat16 *A = p.A, *Bt = p.Bt;
  pad_operands_if_unaligned(p.M, p.N, K, A, Bt);
  static const bool once = (opt_in(tr_wg2_kernel<BN, Epi>, kWgSmem<BN, 2>), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, p.M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, p.N, K, BN);
  const CUtensorMap* td = output_map(p);
  const int tiles = ((p.M + kWsBM - 1) / kWsBM) * ((p.N + BN - 1) / BN);
  const int grid = std::min(tiles, device_sm_count());
  long long* rec = tr_buffer();
  constexpr int kSmem = kWgSmem<BN, 2>;
  tr_wg2_kernel<BN, Epi><<<grid, 5 * kWarpgroup, kSmem>>>(
      *ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N, K, p.D, epi, 16, rec);
  CUDA_CHECK_LAUNCH();
  if (rec) tr_report(what, p, rec, tiles, 2);
}
void launch_tr_wg2_128(const GemmProblem& p) {
  launch_tr_wg2(p, "wg2_128", straight_bias_gelu(p));
}
void launch_tr_wg2_stsm_128(const GemmProblem& p) {
  launch_tr_wg2(p, "wg2_stsm_128", stsm_bias_gelu(p));
}
#endif  // FP8_TEMPLATES_ONLY
