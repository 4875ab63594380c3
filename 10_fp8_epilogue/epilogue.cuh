// Chapter 10's device pieces that every step shares: the BF16 output written through shared
// memory and a TMA store (store_tile_bf16), and the tensor maps of
// the output and of the FP8 operands. Device only, sm_90a: included by the step files, through
// 10_fp8_epilogue/kernels.cu.
//
// The store. A consumer warp owns 16 rows of its warpgroup's (64, BN) accumulator (WgmmaAcc).
// It writes them, 64 columns at a time, as BF16 into a band of 16 rows x 128 bytes in shared
// memory, in the 128-byte swizzle (swizzle128_offset: the 8 rows a fragment column spans land
// in 8 different 16-byte chunks, so the 4-byte writes of a warp meet no bank twice), and one
// lane hands the band to TMA (tma_store_2d), which writes the rows into D and leaves out what
// lies outside the matrix. Two bands a warp: the warp fills one while TMA still reads the other
// (bulk_wait_group_read<1>). CUTLASS's counterpart is the TMA-store epilogue of its sm90
// collectives (cutlass/epilogue/collective/sm90_epilogue_tma_warpspecialized.hpp).
#pragma once

#include <type_traits>

#include "10_fp8_epilogue/fp8_gemm.h"
#include "shared/hopper/hopper_device.cuh"
#include "shared/hopper/tma_host.cuh"  // tensor_map_2d, opt_in

constexpr int kBandBf16Cols = 64;                    // 128 bytes of BF16: one swizzled row
constexpr int kBandBf16Bytes = 16 * kBandBf16Cols * 2;  // 2 KiB: 16 rows
constexpr int kEpiBandsPerWarp = 2;                  // filled while the other is stored
constexpr int kEpiBytes = 8 * kEpiBandsPerWarp * kBandBf16Bytes;  // 8 consumer warps: 32 KiB

// --- Step 11: a column pair by one predicated load (used by the stores below) ----------------
// A functor's column(n) reads what columns n and n + 1 need (BiasGelu, step 2: the bias pair),
// with a branch for a last column n + 1 = N when N is odd. Where D goes by TMA (the plain paths
// of steps 6 and 8) N % 8 == 0, so a pair (n even) lies wholly inside the matrix or wholly
// outside. A functor that says so (step 11's PairBias: `static constexpr bool kPairColumn =
// true`, with pair_column(n)) gives those paths its pairs by one load under a predicate.
template <class Epi, class = void>
struct PairColumns : std::false_type {};
template <class Epi>
struct PairColumns<Epi, std::void_t<decltype(Epi::kPairColumn)>>
    : std::integral_constant<bool, Epi::kPairColumn> {};
template <class Epi>
__device__ __forceinline__ typename Epi::Column plain_column(const Epi& epi, int n) {
  if constexpr (PairColumns<Epi>::value) return epi.pair_column(n);  // N % 8 == 0 here
  else return epi.column(n);
}

// One warpgroup's (64, BN) accumulator, the rows from m0 and the columns from n0, through the
// epilogue functor `epi` into D. The functor reads what it needs per column first, for all the
// thread's columns at once (epi.column(n): a bias pair, say, or nothing), so that those loads
// are in flight together and not once per band; then epi(acc, m, n, column, i) gives D(m, n)
// (i: 0 for column n, 1 for n + 1). `tma`: D's rows are 16-byte aligned (N % 8 == 0) and tm_d
// is D's tensor map with boxes of (64, 16); otherwise each lane stores its own elements, masked.
// bands: this warp's kBands bands (1024-byte aligned; two, unless a kernel needs the room);
// `next_band` counts the warp's bands over all its tiles (the one to fill next).
// kPlain (step 6): the path is known before the loop: TMA stores, and the functor's plain form
// (epi.plain(acc, column, i): no C, no row or column index), so the unrolled loop below holds no
// branch. Otherwise (steps 1-5) `tma` and the functor's own tests (C read or not, inside the
// matrix or not) are decided per element, inside the unrolled loop.
template <int BN, class Epi, int kBands, bool kPlain>
__device__ __forceinline__ void store_bands(const float (&acc)[BN / 2], const Epi& epi, int m0,
                                            int n0, int M, int N, bool tma,
                                            const CUtensorMap* tm_d, __nv_bfloat16* D,
                                            uint32_t bands, int& next_band) {
  const int t = threadIdx.x % kWarpgroup, lane = t % 32, w = t / 32;
  const bool by_tma = kPlain || tma;  // kPlain: the caller checked tma
  typename Epi::Column cols[BN / 8];  // the thread's column pairs: n0 + 8 j + 2 (lane % 4)
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int n = n0 + 8 * j + 2 * (lane % 4);
    if constexpr (kPlain) cols[j] = plain_column(epi, n);  // (by TMA: step 11's pairs)
    else cols[j] = epi.column(n);
  }
#pragma unroll
  for (int c = 0; c < BN / kBandBf16Cols; ++c) {
    const uint32_t band = bands + next_band * kBandBf16Bytes;
    if (by_tma) {
      // The band's last store (kBands bands ago) has read it: at most the others' are pending.
      if (lane == 0) bulk_wait_group_read<kBands - 1>();
      __syncwarp();
    }
#pragma unroll
    for (int jj = 0; jj < kBandBf16Cols / 8; ++jj)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int j = c * kBandBf16Cols / 8 + jj, r = 4 * j + 2 * h;  // the register pair
        const int row = lane / 4 + 8 * h, col = 8 * jj + 2 * (lane % 4);  // in the band
        const int m = m0 + 16 * w + row, n = n0 + c * kBandBf16Cols + col;
        float v0, v1;
        if constexpr (kPlain) {
          v0 = epi.plain(acc[r], cols[j], 0);
          v1 = epi.plain(acc[r + 1], cols[j], 1);
        } else {
          v0 = epi(acc[r], m, n, cols[j], 0);
          v1 = epi(acc[r + 1], m, n + 1, cols[j], 1);
        }
        if (by_tma) {
          const __nv_bfloat162 pair = __floats2bfloat162_rn(v0, v1);
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(band + swizzle128_offset(row, col)),
                       "r"(*reinterpret_cast<const uint32_t*>(&pair)));
        } else if (m < M) {
          if (n < N) D[int64_t(m) * N + n] = __float2bfloat16_rn(v0);
          if (n + 1 < N) D[int64_t(m) * N + n + 1] = __float2bfloat16_rn(v1);
        }
      }
    if (by_tma) {
      fence_proxy_async();  // this lane's writes to the band are visible to TMA (async proxy)
      __syncwarp();         // every lane's are, before lane 0 starts the copy
      if (lane == 0) {
        tma_store_2d(tm_d, n0 + c * kBandBf16Cols, m0 + 16 * w, band);
        bulk_commit_group();
      }
      next_band = (next_band + 1) % kBands;
    }
  }
}

// --- Step 6: the loop chosen once a tile -----------------------------------------------------
// A functor that marks itself straight (step 6: `static constexpr bool kStraight = true`, with
// reads_c() and plain()) takes the branch-free loop wherever D is stored by TMA and C is not read.
template <class Epi, class = void>
struct IsStraight : std::false_type {};
template <class Epi>
struct IsStraight<Epi, std::void_t<decltype(Epi::kStraight)>>
    : std::integral_constant<bool, Epi::kStraight> {};

// --- Step 8: the bands written by stmatrix ----------------------------------------------------
// A functor that asks for it (step 8's Stsm<...>: `static constexpr bool kStsm = true`, a
// straight functor) has its bands written by stmatrix where step 6 takes the plain loop.
// stmatrix_x4 writes four 8 x 8 BF16 matrices, lane l holding in register q the pair (row l / 4,
// columns 2 (l % 4), +1) of matrix q: the layout of an 8-column group of the accumulator
// (WgmmaAcc, both row halves). A band's 16 x 64 is 16 such matrices (8-column group jj, row half
// h), four stmatrix of four; lane l gives the address of row l % 8 of matrix l / 8. Those
// addresses depend on the lane and on which of the four, not on the band: computed once (off),
// they leave the loop no address arithmetic, and one shared-memory instruction stores 8 elements
// a thread where st.shared stored 2.
template <class Epi, class = void>
struct UsesStsm : std::false_type {};
template <class Epi>
struct UsesStsm<Epi, std::void_t<decltype(Epi::kStsm)>>
    : std::integral_constant<bool, Epi::kStsm> {};

template <int BN, class Epi, int kBands>
__device__ __forceinline__ void store_bands_stsm(const float (&acc)[BN / 2], const Epi& epi,
                                                 int m0, int n0, const CUtensorMap* tm_d,
                                                 uint32_t bands, int& next_band) {
  const int t = threadIdx.x % kWarpgroup, lane = t % 32, w = t / 32;
  typename Epi::Column cols[BN / 8];
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) cols[j] = plain_column(epi, n0 + 8 * j + 2 * (lane % 4));
  // stmatrix g of a band: its matrix q = lane / 8 is 8-column group 2 g + q / 2, rows from
  // 8 (q % 2); this lane gives row lane % 8 of it (at column 8 jj: 16-byte chunk jj, swizzled).
  const int q = lane / 8, r = lane % 8;
  uint32_t off[4];
#pragma unroll
  for (int g = 0; g < 4; ++g) off[g] = swizzle128_offset(r + 8 * (q % 2), 8 * (2 * g + q / 2));
#pragma unroll
  for (int c = 0; c < BN / kBandBf16Cols; ++c) {
    const uint32_t band = bands + next_band * kBandBf16Bytes;
    if (lane == 0) bulk_wait_group_read<kBands - 1>();  // the band is free (as store_bands)
    __syncwarp();
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      uint32_t pairs[4];
#pragma unroll
      for (int m = 0; m < 4; ++m) {  // matrix m: 8-column group 2 g + m / 2, row half m % 2
        const int j = c * kBandBf16Cols / 8 + 2 * g + m / 2, ri = 4 * j + 2 * (m % 2);
        const __nv_bfloat162 pair = __floats2bfloat162_rn(epi.plain(acc[ri], cols[j], 0),
                                                          epi.plain(acc[ri + 1], cols[j], 1));
        pairs[m] = *reinterpret_cast<const uint32_t*>(&pair);
      }
      stmatrix_x4(band + off[g], pairs);
    }
    fence_proxy_async();  // this lane's writes to the band are visible to TMA (async proxy)
    __syncwarp();         // every lane's are, before lane 0 starts the copy
    if (lane == 0) {
      tma_store_2d(tm_d, n0 + c * kBandBf16Cols, m0 + 16 * w, band);
      bulk_commit_group();
    }
    next_band = (next_band + 1) % kBands;
  }
}

// --- Step 10: a width that is not a whole number of bands ---------------------------------------
// The columns past the last whole band (BN % 64 of them: 48 at BN = 176), stored by each lane
// straight from its registers, masked, with the functor's general form (C where it is read). A
// band's TMA box is 64 columns wide, and a 64-wide box here would write into the next tile.
// Where D is stored by TMA (`tma`: D 16-byte aligned, N % 8 == 0) a lane's pair is one 4-byte
// store; otherwise element by element, as store_bands does.
template <int BN, class Epi>
__device__ __forceinline__ void store_rest(const float (&acc)[BN / 2], const Epi& epi, int m0,
                                           int n0, int M, int N, bool tma, __nv_bfloat16* D) {
  constexpr int kBanded = BN / kBandBf16Cols * kBandBf16Cols;  // the columns the bands stored
  if constexpr (kBanded < BN) {
    const int t = threadIdx.x % kWarpgroup, lane = t % 32, w = t / 32;
#pragma unroll
    for (int j = kBanded / 8; j < BN / 8; ++j) {  // 8-column group j: registers 4 j .. 4 j + 3
      const int n = n0 + 8 * j + 2 * (lane % 4);
      const typename Epi::Column col = epi.column(n);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = m0 + 16 * w + lane / 4 + 8 * h, r = 4 * j + 2 * h;
        if (m >= M) continue;
        const float v0 = epi(acc[r], m, n, col, 0), v1 = epi(acc[r + 1], m, n + 1, col, 1);
        __nv_bfloat16* d = D + int64_t(m) * N + n;
        if (tma && n < N) {  // then n + 1 < N too, and the pair is 4-byte aligned (n even)
          *reinterpret_cast<__nv_bfloat162*>(d) = __floats2bfloat162_rn(v0, v1);
        } else {
          if (n < N) d[0] = __float2bfloat16_rn(v0);
          if (n + 1 < N) d[1] = __float2bfloat16_rn(v1);
        }
      }
    }
  }
}

template <int BN, class Epi, int kBands>
__device__ __forceinline__ void store_tile_bands(const float (&acc)[BN / 2], const Epi& epi,
                                                 int m0, int n0, int M, int N, bool tma,
                                                 const CUtensorMap* tm_d, __nv_bfloat16* D,
                                                 uint32_t bands, int& next_band) {
  if constexpr (UsesStsm<Epi>::value) {  // step 8
    if (tma && !epi.reads_c()) {  // uniform, as step 6's
      store_bands_stsm<BN, Epi, kBands>(acc, epi, m0, n0, tm_d, bands, next_band);
      return;
    }
  }
  if constexpr (IsStraight<Epi>::value) {
    if (tma && !epi.reads_c()) {  // uniform: one branch a tile, outside the loop
      store_bands<BN, Epi, kBands, true>(acc, epi, m0, n0, M, N, tma, tm_d, D, bands, next_band);
      return;
    }
  }
  store_bands<BN, Epi, kBands, false>(acc, epi, m0, n0, M, N, tma, tm_d, D, bands, next_band);
}

template <int BN, class Epi, int kBands = kEpiBandsPerWarp>
__device__ __forceinline__ void store_tile_bf16(const float (&acc)[BN / 2], const Epi& epi,
                                                int m0, int n0, int M, int N, bool tma,
                                                const CUtensorMap* tm_d, __nv_bfloat16* D,
                                                uint32_t bands, int& next_band) {
  store_tile_bands<BN, Epi, kBands>(acc, epi, m0, n0, M, N, tma, tm_d, D, bands, next_band);
  store_rest<BN>(acc, epi, m0, n0, M, N, tma, D);  // nothing unless BN % 64 != 0 (step 10)
}

// Before the block ends: its stores have read shared memory and written D.
__device__ __forceinline__ void store_drain(bool tma) {
  if (tma && threadIdx.x % 32 == 0) bulk_wait_group_all();
}

// --- Tensor maps (shared/hopper/tma_host.cuh: tensor_map_2d) -----------------------------------
// D's map for the TMA store: boxes of 16 rows x 64 columns (one band); nullptr where D's rows
// are not 16-byte aligned (then store_tile_bf16 stores element by element).
inline const CUtensorMap* output_map(const GemmProblem& p) {
  if (p.N % 8 != 0 || reinterpret_cast<uintptr_t>(p.D) % 16 != 0) return nullptr;
  return tensor_map_2d(p.D, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p.M, p.N, kBandBf16Cols, 16);
}
// An e4m3 operand (rows x K codes, K % 16 == 0): boxes of 128 k (128 bytes) x box_rows.
inline const CUtensorMap* e4m3_map(const uint8_t* X, int rows, int K, int box_rows) {
  return tensor_map_2d(X, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, rows, K, 128, box_rows);
}
