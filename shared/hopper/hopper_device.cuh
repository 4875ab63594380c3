// Chapter 08's device pieces that several steps share: the K slab, the two tile configurations
// (one warpgroup on (128, 128), steps 1-2; a producer and two consumers on (128, 256), steps 3-4
// and 08_hopper/experiments/cluster.cuh), the 1024-byte aligned shared-memory base, one stage of wgmma, and
// the plain epilogue. Device only, sm_90a (hopper_ptx.cuh): included by the step files.
#pragma once

#include "shared/tensorcore/mma_ptx.cuh"  // smem_addr
#include "shared/hopper/hopper.cuh"
#include "shared/hopper/hopper_ptx.cuh"

constexpr int BK = 64;                 // one 128-byte swizzled row of BF16
constexpr int kKSteps = BK / 16;       // wgmma k16 steps per tile
constexpr int kWarpgroup = 128;        // threads

// The dynamic shared memory, rounded up to the 1024-byte alignment of the swizzle atoms.
__device__ __forceinline__ uint32_t smem_base_1024(unsigned char* raw) {
  return (smem_addr(raw) + 1023) & ~1023u;
}

// --- Steps 1 and 2 (and 08_hopper/experiments/tma_ring.cuh) ----------------------------------------------
// (128, 128) tile, one warpgroup: two m64n128 accumulators (rows 0-63 and 64-127), 128 floats a
// thread. Tile bytes: A 128 x 128 B = 16 KiB, Bᵀ the same.
constexpr int kSyncBM = 128, kSyncBN = 128;
constexpr int kTileBytes128 = 128 * kSwizzleBytes;

// --- Steps 3 and 4 (and 08_hopper/experiments/cluster.cuh) -----------------------------------------------
// (128, 256) tile, 4 stages of 48 KiB; warpgroup 0 produces (one thread issues the TMA copies),
// warpgroups 1 and 2 consume: rows 0-63 and 64-127 of the tile, one m64n256 accumulator each
// (128 floats a thread).
constexpr int kWsBM = 128, kWsBN = 256, kWsStages = 4;
constexpr int kWsABytes = kWsBM * kSwizzleBytes, kWsBBytes = kWsBN * kSwizzleBytes;
constexpr int kWsStageBytes = kWsABytes + kWsBBytes;
// Chapter 09's steps 1 and 2: the tile's width BN a template argument (128 or 256), the A
// tile still 128 rows: a stage is both tiles.
template <int BN>
constexpr int kTileStageBytes = kWsABytes + BN * kSwizzleBytes;

// The four k16 steps of one stage for one warpgroup: the 64 rows of the A tile that start at
// a_tile and the N rows of the Bᵀ tile at b_tile (both 1024-byte aligned, swizzled).
template <int N>
__device__ __forceinline__ void wgmma_stage(float (&acc)[N / 2], uint32_t a_tile, uint32_t b_tile) {
  static_assert(N == 32 || N == 64 || N == 128 || N == 144 || N == 192 || N == 256,
                "the widths hopper_ptx.cuh has a wgmma for");
#pragma unroll
  for (int s = 0; s < kKSteps; ++s) {
    const uint64_t da = SmemDesc::k_major_sw128(a_tile + 32 * s);
    const uint64_t db = SmemDesc::k_major_sw128(b_tile + 32 * s);
    if constexpr (N == 32) wgmma_m64n32k16(acc, da, db, 1);
    else if constexpr (N == 64) wgmma_m64n64k16(acc, da, db, 1);
    else if constexpr (N == 128) wgmma_m64n128k16(acc, da, db, 1);
    else if constexpr (N == 144) wgmma_m64n144k16(acc, da, db, 1);
    else if constexpr (N == 192) wgmma_m64n192k16(acc, da, db, 1);
    else wgmma_m64n256k16(acc, da, db, 1);
  }
}

// One warpgroup's (64, N) accumulator into C at (m0, n0): adjacent columns as 8-byte stores
// where the row allows, masked at the edges.
template <int N>
__device__ __forceinline__ void store_acc(const float (&acc)[N / 2], float* C, int M, int Ncols,
                                          int m0, int n0, int t) {
  const bool vec = Ncols % 2 == 0;
#pragma unroll
  for (int r = 0; r < N / 2; r += 2) {
    const int m = m0 + WgmmaAcc::row(t, r), n = n0 + WgmmaAcc::col(t, r);
    if (m >= M) continue;
    float* c = C + int64_t(m) * Ncols + n;
    if (vec && n + 1 < Ncols) {
      *reinterpret_cast<float2*>(c) = make_float2(acc[r], acc[r + 1]);
    } else {
      if (n < Ncols) c[0] = acc[r];
      if (n + 1 < Ncols) c[1] = acc[r + 1];
    }
  }
}
