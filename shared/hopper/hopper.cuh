// Chapter 08: Hopper's warpgroup MMA (wgmma) and Tensor Memory Accelerator (TMA), sm_90a.
// BF16 A (M x K) and Bᵀ (N x K), both row-major ("K-major"), FP32 accumulation, FP32 C = A * B,
// as in chapters 05-07. The layout functions the kernels use (the 128-byte swizzle, the
// shared-memory matrix descriptor, the accumulator map) are here, __host__ __device__, so that
// the host tests check the very functions the kernels call against the PTX ISA's rules.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

using bf16 = __nv_bfloat16;

// --- The 128-byte swizzle ---------------------------------------------------------------------
// A K-major tile with BK = 64 BF16 has rows of exactly 128 bytes. TMA (CU_TENSOR_MAP_SWIZZLE_128B)
// writes, and wgmma (swizzle mode "128B" in the descriptor) reads, such a tile with the 16-byte
// chunks of each row permuted: chunk c of row r sits at chunk position c ^ (r % 8). The pattern
// repeats every 8 rows (1024 bytes, the "swizzle atom"), and is applied to address bits, so a
// tile must start on a 1024-byte boundary. (PTX ISA, "Shared Memory Matrix Layout": the 128B
// swizzle is Swizzle<3, 4, 3>; chapter 05's swizzle_chunk is the same permutation at BK = 64.)
constexpr int kSwizzleBytes = 128, kSwizzleAtomBytes = 1024;
__host__ __device__ constexpr uint32_t swizzle128_offset(int row, int k) {  // bytes, BF16 (row, k)
  return uint32_t(row) * 128 + ((uint32_t(k) / 8) ^ (uint32_t(row) % 8)) * 16 +
         (uint32_t(k) % 8) * 2;
}

// --- The shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") ----------------
// 64 bits: start address >> 4 in bits 0-13, leading-dimension byte offset >> 4 in bits 16-29,
// stride-dimension byte offset >> 4 in bits 32-45, base offset in bits 49-51 (0: the atoms are
// 1024-byte aligned), swizzle mode in bits 62-63 (1 = 128-byte swizzle).
// For a K-major operand with the 128-byte swizzle: the stride byte offset is the distance
// between consecutive 8-row atoms (1024 bytes); the leading byte offset is not used (one
// wgmma's 16 k, 32 bytes, lie inside one 128-byte row) and is set to 1 (16 bytes) by convention.
// The k16 step s of a BK = 64 tile starts 32 s bytes into the row: the descriptor's start
// address moves by 32 s bytes, and the hardware applies the swizzle to the full address.
struct SmemDesc {
  __host__ __device__ static constexpr uint64_t make(uint32_t smem_addr, uint32_t lbo_bytes,
                                                     uint32_t sbo_bytes, uint32_t swizzle_mode) {
    return uint64_t((smem_addr & 0x3FFFF) >> 4) | uint64_t((lbo_bytes >> 4) & 0x3FFF) << 16 |
           uint64_t((sbo_bytes >> 4) & 0x3FFF) << 32 | uint64_t(swizzle_mode & 3) << 62;
  }
  __host__ __device__ static constexpr uint64_t k_major_sw128(uint32_t smem_addr) {
    return make(smem_addr, 16, kSwizzleAtomBytes, 1);
  }
  __host__ __device__ static constexpr uint32_t start(uint64_t d) {
    return uint32_t(d & 0x3FFF) << 4;
  }
  __host__ __device__ static constexpr uint32_t lbo(uint64_t d) {
    return uint32_t(d >> 16 & 0x3FFF) << 4;
  }
  __host__ __device__ static constexpr uint32_t sbo(uint64_t d) {
    return uint32_t(d >> 32 & 0x3FFF) << 4;
  }
  __host__ __device__ static constexpr uint32_t swizzle(uint64_t d) { return uint32_t(d >> 62); }
};

// --- The wgmma accumulator (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts" for
// wgmma .m64nNk16 with .f32 D) ----------------------------------------------------------------
// A warpgroup (4 warps, 128 threads) holds the (64, N) tile D, N / 2 floats a thread. Warp w of
// the group owns rows 16 w .. 16 w + 15; within them the layout is mma.sync's C fragment, once
// per 8 columns: register 4 j + i of lane l holds row 16 w + l / 4 + 8 (i / 2), column
// 8 j + 2 (l % 4) + i % 2.
struct WgmmaAcc {
  __host__ __device__ static constexpr int row(int thread, int reg) {
    return 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((reg % 4) / 2);
  }
  __host__ __device__ static constexpr int col(int thread, int reg) {
    return 8 * (reg / 4) + 2 * (thread % 4) + reg % 2;
  }
};

// --- Step 6's partial tiles (split_wave_kernel's fixup) ----------------------------------------
// A split tile's partial (128, BN) accumulator goes to the workspace as the two consumer
// warpgroups hold it: float4 q = 256 i + c is registers 4 i .. 4 i + 3 of consumer thread c
// (0-255; warpgroup c / 128 has rows 64 (c / 128) ..), so that a warp instruction writes 512
// contiguous bytes. Its four floats are (row, col), (row, col + 1), (row + 8, col) and
// (row + 8, col + 1) of the tile (WgmmaAcc).
struct PartialVec {
  __host__ __device__ static constexpr int row(int q) {
    return 64 * ((q % 256) / 128) + WgmmaAcc::row(q % 128, 4 * (q / 256));
  }
  __host__ __device__ static constexpr int col(int q) {
    return WgmmaAcc::col(q % 128, 4 * (q / 256));
  }
};

// --- Step 7: a menu of tiles (menu_kernel) ------------------------------------------------------
// A (BM, BN) tile, BM = 128 or 64, shared by the two consumer warpgroups: BM = 128 splits it by
// rows (warpgroup g: rows 64 g .., all BN columns), BM = 64 by columns (all 64 rows, columns
// g BN / 2 ..). Either way a warpgroup holds a (64, WN) accumulator, one wgmma m64nWNk16 a k16.
// A split tile's partial goes to the workspace as the registers hold it (PartialVec at BM = 128):
// float4 q = 256 i + c is registers 4 i .. 4 i + 3 of consumer thread c.
template <int BM, int BN>
struct MenuTile {
  static_assert(BM == 128 || BM == 64, "two warpgroups of 64 rows, or one band of 64 rows");
  static constexpr int WN = BM == 128 ? BN : BN / 2;  // a warpgroup's columns
  __host__ __device__ static constexpr int row0(int g) { return BM == 128 ? 64 * g : 0; }
  __host__ __device__ static constexpr int col0(int g) { return BM == 128 ? 0 : g * WN; }
  // Partial-tile float4 q: its (row, col); the float4 holds (row, col .. col + 1) and
  // (row + 8, col .. col + 1).
  __host__ __device__ static constexpr int vec_row(int q) {
    return row0((q % 256) / 128) + WgmmaAcc::row(q % 128, 4 * (q / 256));
  }
  __host__ __device__ static constexpr int vec_col(int q) {
    return col0((q % 256) / 128) + WgmmaAcc::col(q % 128, 4 * (q / 256));
  }
};

// Step 9: the 64-row tiles in one consumer warpgroup, which holds the whole (64, BN) tile. A
// split tile's partial goes to the workspace as the registers hold it: float4 q = 128 i + t is
// registers 4 i .. 4 i + 3 of consumer thread t, (row, col .. col + 1) and (row + 8, ..).
struct OneWgVec {
  __host__ __device__ static constexpr int row(int q) {
    return WgmmaAcc::row(q % 128, 4 * (q / 128));
  }
  __host__ __device__ static constexpr int col(int q) {
    return WgmmaAcc::col(q % 128, 4 * (q / 128));
  }
};

// --- The staged epilogue's band (store_acc_staged) --------------------------------------------
// Each consumer warp stages 16 rows x kBandCols columns of its accumulator at a time, in rows of
// kBandRow floats (padded by 8).
constexpr int kBandCols = 32, kBandRow = kBandCols + 8;
constexpr int kBandBytes = 16 * kBandRow * 4;  // one warp's band

// --- Step 6: the last wave, split (split_wave_kernel) ------------------------------------------
// A persistent grid of G blocks (one per SM) over T output tiles of I K-tiles each (BK = 64).
// With R = T mod G, the T - R tiles of the full waves go whole, one per block per wave (block b
// takes R + b, R + b + G, ...); each of the R tiles of the last, partial wave is cut into
// S = min(G / R, I) slices of K, one slice per block, so that R S blocks share the last wave
// instead of R. The split tiles come first, so all their slices run at the same time, and the
// blocks of one tile meet in a workspace (split_wave_kernel's fixup). S < 2: nothing is split,
// and the plan is step 5's persistent grid. Slice s of a tile covers the K-tiles s, s + S,
// s + 2 S, ... (wave_unit), never empty since S <= I; slice 0 has the most, ceil(I / S).
struct WavePlan {
  int tiles = 0, k_tiles = 0;  // T, I
  int grid = 0;                // blocks: G, or fewer when there is less than a wave of work
  int split_tiles = 0;         // R: tiles 0 .. R - 1 are split (0: none)
  int splits = 1;              // S: slices, and blocks, per split tile
};
// max_splits caps S (1: never split; the shape rule also weighs the plan without a split).
__host__ __device__ constexpr WavePlan plan_wave(int tiles, int k_tiles, int sms,
                                                 int max_splits = 1 << 30) {
  WavePlan p;
  p.tiles = tiles;
  p.k_tiles = k_tiles;
  const int r = tiles % sms;
  int s = r > 0 ? (sms / r < k_tiles ? sms / r : k_tiles) : 1;
  s = s < max_splits ? s : max_splits;
  if (s >= 2) {
    p.split_tiles = r;
    p.splits = s;
    p.grid = tiles >= sms ? sms : r * s;
  } else {
    p.grid = tiles < sms ? tiles : sms;
  }
  return p;
}

// The j-th piece of work of block b: a tile and its K-tiles k_begin, k_begin + k_step, ... below
// k_end, and the slice (-1: the whole tile, stored to C directly). tile = -1: the block is done.
// Slice s of a split tile takes every S-th K-tile from s (k_step = S), not a contiguous run:
// the S blocks of a tile then read neighbouring K-tiles of the same rows at about the same time
// (measured: NOTES.md, "Strided slices").
struct WorkUnit {
  int tile, k_begin, k_end, slice;
  int k_step = 1;
};
__host__ __device__ constexpr int unit_k_tiles(const WorkUnit& u) {
  return (u.k_end - u.k_begin + u.k_step - 1) / u.k_step;
}
__host__ __device__ constexpr WorkUnit wave_unit(const WavePlan& p, int block, int j) {
  if (p.split_tiles > 0 && block < p.split_tiles * p.splits) {
    if (j == 0) {
      const int s = block % p.splits;
      return {block / p.splits, s, p.k_tiles, s, p.splits};
    }
    --j;  // the split slice came first; then the whole tiles
  }
  const int64_t tile = int64_t(p.split_tiles) + block + int64_t(j) * p.grid;
  if (tile >= p.tiles) return {-1, 0, 0, -1};
  return {int(tile), 0, p.k_tiles, -1};
}

// The K-tiles the busiest block computes: the plan's time, in K-tiles of its tile.
__host__ __device__ constexpr int64_t wave_makespan(const WavePlan& p) {
  const int64_t whole = (int64_t(p.tiles) - p.split_tiles + p.grid - 1) / p.grid;
  return whole * p.k_tiles + (p.split_tiles > 0 ? (p.k_tiles + p.splits - 1) / p.splits : 0);
}

// --- Stream-K (08_hopper/experiments/stream_k.cuh) ------------------------------------------------------
// All T I K-tiles of the output tiles, in order (tile by tile), dealt to G blocks as evenly as
// integers allow: block b takes [b T I / G, (b + 1) T I / G). A range cuts at most two tiles:
// it may begin inside one (a later part of that tile: it goes to the workspace, slot b) and end
// inside another (the tile's first K-tiles: this block owns the tile; it adds the later
// blocks' parts in K order, then stores the tile). Units in between are whole tiles.
struct StreamKPlan {
  int tiles = 0, k_tiles = 0, grid = 0;
  int64_t total = 0;  // T I
};
__host__ __device__ constexpr StreamKPlan plan_stream_k(int tiles, int k_tiles, int sms) {
  StreamKPlan p;
  p.tiles = tiles;
  p.k_tiles = k_tiles;
  p.total = int64_t(tiles) * k_tiles;
  p.grid = p.total < sms ? int(p.total) : sms;
  return p;
}
__host__ __device__ constexpr int64_t sk_begin(const StreamKPlan& p, int block) {
  return int64_t(block) * p.total / p.grid;
}
// The block whose range holds K-tile x of the whole order: the last b with sk_begin(b) <= x.
__host__ __device__ constexpr int sk_block_of(const StreamKPlan& p, int64_t x) {
  return int(((x + 1) * p.grid - 1) / p.total);
}
// The j-th unit of block b; slice = b for a later part of a tile (its workspace slot), -1 for a
// part that starts at k = 0 (a whole tile, or the owner's first part).
__host__ __device__ constexpr WorkUnit sk_unit(const StreamKPlan& p, int block, int j) {
  const int64_t begin = sk_begin(p, block), end = sk_begin(p, block + 1);
  const int64_t tile = begin / p.k_tiles + j, t0 = tile * p.k_tiles;
  const int64_t lo = begin > t0 ? begin : t0;
  const int64_t hi = end < t0 + p.k_tiles ? end : t0 + p.k_tiles;
  if (lo >= hi) return {-1, 0, 0, -1};
  return {int(tile), int(lo - t0), int(hi - t0), lo == t0 ? -1 : block};
}

// --- The answer's shape rule (step 7; hopper, step 9, launches its pick) -----------------------
// hopper picks, from the menu of tiles (kMenu) and the two schedules (whole tiles; the last
// wave split, plan_wave), the pair with the least predicted time in microseconds:
//   the busiest block's K-tiles (wave_makespan) x the tile's K-tile time, the K-tile time scaled
//   by the share of the SMs at work (a K-tile is cheaper when fewer blocks share the L2:
//   1 - kLoadShare + kLoadShare x grid / SMs), plus kTileUs for each whole tile the busiest
//   block stores;
//   never less than the bytes of A, B and C at kDramBytesPerUs (the DRAM bound: long K, small M);
//   plus kSplitUsPerMiB for each MiB of partial tiles where the last wave is split (the fixup).
// The K-tile times are each tile's time at 8192^3 over its K-tiles; the other four constants
// are fitted to a sweep of the menu, whole and split, over 23 shapes (tools/fit_menu.py, NOTES.md).
struct MenuEntry {
  int BM, BN;
  double k_tile_us;  // one K-tile of this tile at 8192^3, every SM at work
};
constexpr MenuEntry kMenu[] = {
    {128, 256, 0.7095}, {128, 192, 0.6102}, {128, 144, 0.5123}, {64, 128, 0.3295}, {64, 64, 0.2248},
};
constexpr int kMenuSize = sizeof(kMenu) / sizeof(kMenu[0]);
constexpr double kLoadShare = 0.5, kTileUs = 1.0, kSplitUsPerMiB = 1.5;
constexpr double kDramBytesPerUs = 3.0e6;  // 3 TB/s
enum class Schedule { kWhole, kSplitWave };
struct HopperChoice {
  int tile;  // index into kMenu
  Schedule schedule;
};
constexpr double hopper_cost(int M, int N, int K, int sms, const MenuEntry& t, Schedule s) {
  const int tiles = ((M + t.BM - 1) / t.BM) * ((N + t.BN - 1) / t.BN), k_tiles = (K + 63) / 64;
  const WavePlan p = plan_wave(tiles, k_tiles, sms, s == Schedule::kWhole ? 1 : 1 << 30);
  if (s == Schedule::kSplitWave && p.split_tiles == 0) return 1e300;  // kWhole by another name
  const int64_t whole = (int64_t(tiles) - p.split_tiles + p.grid - 1) / p.grid;
  const double load = 1.0 - kLoadShare + kLoadShare * p.grid / sms;
  const double compute = double(wave_makespan(p)) * t.k_tile_us * load + double(whole) * kTileUs;
  const double dram = ((double(M) + N) * K * 2 + double(M) * N * 4) / kDramBytesPerUs;
  const double split_mib = double(p.split_tiles) * p.splits * t.BM * t.BN * 4 / (1 << 20);
  return (compute > dram ? compute : dram) + kSplitUsPerMiB * split_mib;
}
constexpr HopperChoice choose_hopper(int M, int N, int K, int sms) {
  HopperChoice best{-1, Schedule::kWhole};
  double best_cost = 0;
  for (int i = 0; i < kMenuSize; ++i)
    for (Schedule s : {Schedule::kWhole, Schedule::kSplitWave}) {
      const double cost = hopper_cost(M, N, K, sms, kMenu[i], s);
      if (best.tile < 0 || cost < best_cost) best = {i, s}, best_cost = cost;
    }
  return best;
}

// --- Launchers -----------------------------------------------------------------------------------
// Defined in the step files (08_hopper/steps/, in reading order) and the experiments (08_hopper/experiments/), all
// compiled once by kernels.cu. Every launcher copies rows that are not 16-byte aligned into
// padded operands first (chapter 07's pad_rows): TMA's row stride must be a multiple of 16 bytes.
void launch_wgmma_sync(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 1
void launch_tma(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);            // 2
void launch_tma_pipe(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);       // 2
void launch_warp_spec(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);      // 3
void launch_hopper_raster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);  // 3
void launch_persistent(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 3
void launch_group16(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);        // 3
void launch_staged(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);         // 4
void launch_tile128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);        // 5
void launch_split_wave(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 6
void launch_split_wave128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);  // 6
void launch_m128x192(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);       // 7
void launch_m128x144(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);       // 7
void launch_m64x128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);        // 7
void launch_m64x64(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);         // 7
void launch_acc2_64x128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);    // 8
void launch_acc2_64x64(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 8
void launch_wg1_64x128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 9
void launch_wg1_64x64(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);      // 9
void launch_hopper(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);         // 9
// The experiments (--kernel sweep): the ring without a tile's wgmma in flight; clusters of two
// blocks with the Bᵀ tile multicast; Stream-K.
void launch_tma_ring(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_cluster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_stream_k(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_stream_k128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
// The exercise (08_hopper/exercises/consumer_barriers.cuh, or its solution): group16 with the consumers'
// barrier operations written by the reader.
void launch_ex_consumer_barriers(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
