// Chapter 04: the SIMT ladder, from chapter 03's tiled_2d to the best SIMT kernel, one idea
// per step (04_coalesced/steps/2_simt_lds128.cuh ... 04_coalesced/steps/6_simt_auto.cuh): the configurations, the
// thread map, the swizzle and the shape heuristic, which the host tests call
// (tests/test_coalesced_index.cpp). The piece loads and stores: simt_load.cuh.
#pragma once

#include "common/check.h"

// --- The configuration of a SIMT kernel ------------------------------------------------------
// Block tile (BM, BN), K-slab BK; the block is cut into (WM, WN) warp tiles; each thread
// computes a (TM, TN) micro-tile made of float4 pieces: TM / 4 pieces along M spaced
// WM / (TM / 4) apart, TN / 4 along N likewise. The threads of a warp tile form a
// kLaneRows x kLaneCols grid.
//   WM = BM, WN = BN: no warp tiling; the whole block's threads form one grid (as in tiled_2d).
//   WM x WN holding 32 threads: warp tiling, block -> warp -> thread.
// MinBlocks: blocks per SM the compiler must leave registers for (__launch_bounds__): 2 blocks
// of 256 threads cap a thread at 128 registers; 1 lets it use up to 255.
// The switches name the ladder's ideas; each step's kernel implements one combination and
// static_asserts it (the shared memory, kSmemBytes, follows DoubleBuffer and KSplit):
//   VecLoads:     128-bit global loads where the row allows (else four 32-bit loads per piece)
//                 (04_coalesced/steps/3_simt_vec.cuh)
//   Swizzle:      the XOR swizzle on the transposed (K-major) tiles (else stored plain)
//                 (04_coalesced/steps/4_simt_swizzle.cuh)
//   DoubleBuffer: two shared stages; the next tile's loads overlap this tile's math
//                 (04_coalesced/steps/5_simt.cuh)
// KSplit: groups of warps that share the block tile's K (04_coalesced/steps/6_simt_auto.cuh). Each group has
// one warp per warp tile and takes BK / KSplit of every K slab; at the end the groups add their
// partial tiles through shared memory. For tiles whose warp count does not divide by the SM's 4
// schedulers (6 warps put 2 on two schedulers and 1 on the others), twice the warps are 3 a
// scheduler.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int MinBlocks_,
          bool VecLoads_ = true, bool Swizzle_ = true, bool DoubleBuffer_ = true, int KSplit_ = 1>
struct SimtConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, TM = TM_, TN = TN_;
  static constexpr bool kVecLoads = VecLoads_, kSwizzle = Swizzle_, kDoubleBuffer = DoubleBuffer_;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;  // warp tiles of the block
  static constexpr int kLaneRows = WM / TM, kLaneCols = WN / TN;  // threads along M, along N
  static constexpr int kTileThreads = kLaneRows * kLaneCols;      // threads of one warp tile
  static constexpr int kKSplit = KSplit_, kGroupK = BK / KSplit_;  // warp groups, k per slab
  static constexpr int kGroupThreads = kWarpsM * kWarpsN * kTileThreads;  // one group's threads
  static constexpr int kThreads = kGroupThreads * kKSplit;
  static constexpr int kPieceStrideM = WM / (TM / 4), kPieceStrideN = WN / (TN / 4);
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles divide the block tile");
  static_assert(kTileThreads % 32 == 0, "a warp tile holds whole warps");
  static_assert(kWarpsM * kWarpsN == 1 || kTileThreads == 32, "warp tiles of one warp each");
  static_assert(WM % TM == 0 && WN % TN == 0, "micro-tiles divide the warp tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "micro-tiles are made of float4 pieces");
  static_assert(BK == 8 || BK == 16 || BK == 32, "the swizzle below is made for these BK");
  static_assert(BM % 32 == 0 && BN % 32 == 0, "tile rows in shared memory span whole bank rows");
  static_assert(WM % 32 == 0 && WN % 32 == 0,
                "warp tiles span whole groups of 8 float4s, which the swizzle permutes within");
  static_assert((kLaneRows & (kLaneRows - 1)) == 0 && (kLaneCols & (kLaneCols - 1)) == 0,
                "the swizzle's lane/piece split needs power-of-two lane counts");
  static_assert(kKSplit == 1 || (kKSplit == 2 && kWarpsM * kWarpsN > 1),
                "one or two groups of warp tiles");
  static_assert(kGroupK % 4 == 0, "a group takes whole float4s of k");
  static constexpr int kStages = kDoubleBuffer ? 2 : 1;
  // The stages; with two groups, the second group's partial tile on its way to the first.
  static constexpr int kStageBytes = kStages * BK * (BM + BN) * sizeof(float);
  static constexpr int kReduceBytes = kKSplit > 1 ? BM * BN * sizeof(float) : 0;
  static constexpr int kSmemBytes = kStageBytes > kReduceBytes ? kStageBytes : kReduceBytes;
  static constexpr int kMinBlocks = MinBlocks_;
};

// Shared-memory layout of a K-major operand tile (A, and Bᵀ), stored transposed: the
// (BX, BK) tile loaded along K is written as a (BK, BX) tile, so the inner loop reads
// TM (or TN) consecutive values of one k as float4s.
//
// Loading: a warp's 32 float4 loads cover 128 / BK consecutive rows x and all BK / 4 float4
// columns k4. Written naively to [k][x] those land in few banks (word k * BX + x: bank x % 32
// for every k). The swizzle XORs the float4 index of x with a function of k/4 that sends each
// k4 to a different group of 4 banks, so the transposing store is conflict-free; the float4
// reads of one k stay conflict-free because XOR by one value permutes float4s within aligned
// groups of 8.
template <int BK>
__host__ __device__ constexpr int swizzle_mask(int k) { return (k >> 2) * (32 / BK); }
template <int BK>
__host__ __device__ constexpr int kmajor_swizzle(int k, int x) {
  return (((x >> 2) ^ swizzle_mask<BK>(k)) << 2) | (x & 3);
}

// The same swizzle as the inner loop computes it. A lane reads piece p (0, 1, ...) of its
// micro-tile at x = x0 + p * kLanes * 4 + lane * 4, where x0 (the warp's offset) is a multiple
// of 32 and lane < kLanes, the lanes along this dimension. The XOR mask is below 8 float4s, so
// it splits into a part that acts on the lane bits and a part that acts on the piece bits:
//   kmajor_swizzle(k, x) == x0 + swizzle_piece_part(k, p) + swizzle_lane_part(k, lane)
// The lane part takes BK / 4 values per thread (kept in registers, computed once); the piece
// part is a compile-time constant in the unrolled loop, so each float4 read is one LDS.128
// with an immediate offset and no address arithmetic.
template <int BK, int kLanes>
__host__ __device__ constexpr int swizzle_lane_part(int k, int lane) {
  return (lane ^ (swizzle_mask<BK>(k) & (kLanes - 1))) * 4;
}
template <int BK, int kLanes>
__host__ __device__ constexpr int swizzle_piece_part(int k, int p) {
  return ((p * kLanes) ^ (swizzle_mask<BK>(k) & ~(kLanes - 1))) * 4;
}

// Word offsets of one thread's float4 reads of one operand tile in the inner loop: piece p of
// its micro-tile at k = k_first + kk of a (BK, BX) tile, swizzled or plain; its warp tile starts
// at x0, its lane along the tile is `lane`, and its warp group's k start at k_first. In the
// unrolled loop kk and p are compile-time constants, so what depends on the thread is computed
// once, into registers:
//   - one per group of 4 k (the lane part, plus x0 and the group's first row) where the piece
//     part is the same for every warp group;
//   - else one per group of 4 k and piece.
// The kernel with two warp groups (simt_groups_kernel, 04_coalesced/steps/6_simt_auto.cuh) uses it. With one
// group (k_first = 0) it reduces to the lane parts above, which the one-group kernels add inline.
// The swizzle's mask of k_first + kk is mask(k_first) | mask(kk) (k_first is a multiple of
// kGroupK, whose mask is a power of two above every mask(kk)), so the piece part depends on the
// group only where some group's mask(k_first) reaches the piece bits (>= kLanes).
template <int BK, int BX, int kGroupK, int kGroups, int kLanes, int kPieces, int kStride,
          bool kSwizzled>
struct SimtReadOffsets {
  static constexpr bool kWhole =
      kSwizzled && swizzle_mask<BK>((kGroups - 1) * kGroupK) >= kLanes;
  int base[kGroupK / 4][kWhole ? kPieces : 1];
  __host__ __device__ SimtReadOffsets(int k_first, int x0, int lane) {
    for (int q = 0; q < kGroupK / 4; ++q) {  // (short constant loops: the compiler unrolls them)
      const int k = k_first + 4 * q;
      for (int p = 0; p < (kWhole ? kPieces : 1); ++p)
        base[q][p] = k_first * BX + x0 +
                     (!kSwizzled ? lane * 4
                                 : swizzle_lane_part<BK, kLanes>(k, lane) +
                                       (kWhole ? swizzle_piece_part<BK, kLanes>(k, p) : 0));
    }
  }
  __host__ __device__ int at(int kk, int p) const {
    if constexpr (kWhole)
      return kk * BX + base[kk / 4][p];
    else
      return kk * BX + (base[kk / 4][0] +
                        (kSwizzled ? swizzle_piece_part<BK, kLanes>(kk, p) : p * kStride));
  }
};

// Where thread `tid` of a block of configuration Cfg reads and writes: its warp group (which
// share of each K slab), its warp tile's offset in the block tile and its place (lr, lc) in the
// warp tile's thread grid. Row of its i-th output row and column of its j-th output column,
// within the block tile.
template <typename Cfg>
struct SimtThread {
  int group, wm, wn, lr, lc;
  __host__ __device__ explicit SimtThread(int tid) {
    group = Cfg::kKSplit > 1 ? tid / Cfg::kGroupThreads : 0;  // (one group: known to be 0)
    if (Cfg::kKSplit > 1) tid %= Cfg::kGroupThreads;
    const int warp = tid / Cfg::kTileThreads, lane = tid % Cfg::kTileThreads;
    wm = (warp / Cfg::kWarpsN) * Cfg::WM;
    wn = (warp % Cfg::kWarpsN) * Cfg::WN;
    lr = lane % Cfg::kLaneRows;
    lc = lane / Cfg::kLaneRows;
  }
  __host__ __device__ int row(int i) const {
    return wm + (i / 4) * Cfg::kPieceStrideM + lr * 4 + i % 4;
  }
  __host__ __device__ int col(int j) const {
    return wn + (j / 4) * Cfg::kPieceStrideN + lc * 4 + j % 4;
  }
};

// --- The ladder's steps and the best kernel's configurations --------------------------------
// SimtConfig<BM, BN, BK, WM, WN, TM, TN, MinBlocks, VecLoads, Swizzle, DoubleBuffer>
// simt_lds128 ... simt_warps keep tiled_2d's block: 128 x 128 x 16, 256 threads, 8 x 8 per
// thread, 2 blocks/SM.
using SimtStepLds128 = SimtConfig<128, 128, 16, 128, 128, 8, 8, 2, false, false, false>;
using SimtStepVec = SimtConfig<128, 128, 16, 128, 128, 8, 8, 2, true, false, false>;
using SimtStepSwizzle = SimtConfig<128, 128, 16, 128, 128, 8, 8, 2, true, true, false>;
using SimtStepWarps = SimtConfig<128, 128, 16, 64, 32, 8, 8, 2, true, true, false>;
using SimtStepBigTile = SimtConfig<128, 256, 16, 64, 64, 8, 16, 1, true, true, false>;
// Double buffering on the big tile (simt, simt_bt): the largest tile of simt_auto.
using SimtBest = SimtConfig<128, 256, 16, 64, 64, 8, 16, 1>;
// The smaller block tiles the shape heuristic (simt_auto) can choose.
using Simt128x128 = SimtConfig<128, 128, 16, 64, 32, 8, 8, 1>;
using Simt64x128 = SimtConfig<64, 128, 8, 32, 64, 8, 8, 3>;
// For sizes with a factor 3 (1536 = 8 * 192, 3072 = 16 * 192): a 96 x 192 tile of 6 warp tiles
// of 96 x 32, 12 x 8 per thread (SimtBest's 8 x 4 lane grid, with 3 x 2 pieces instead of 2 x 4).
// Six warps leave two of the SM's four schedulers with one warp (README), so the heuristic's
// tile has two groups of 6 warps, each taking 4 of every 8 k: 12 warps, 3 per scheduler. 384
// threads get at most 168 registers each; at BK 16 the Bᵀ kernel would spill.
using Simt96x192 = SimtConfig<96, 192, 8, 96, 32, 12, 8, 1, true, true, true, 2>;
using Simt96x192w6 = SimtConfig<96, 192, 16, 96, 32, 12, 8, 1>;  // one group, 6 warps
using Simt64x64 = SimtConfig<64, 64, 16, 32, 32, 8, 4, 4>;
using Simt32x64 = SimtConfig<32, 64, 16, 32, 32, 8, 4, 4>;

// --- The shape heuristic ----------------------------------------------------------------------
// A grid of T blocks runs on S SMs, b blocks at a time on each (registers and shared memory
// set b): in waves of S * b blocks. The kernel lasts as long as its busiest SM, which computes
// n = min(b, ceil(T / S)) tiles side by side in each of ceil(T / (S * b)) waves. A wave of n
// tiles takes n * BM * BN / rate, where `rate` is the option's measured throughput per SM with
// every SM busy, scaled down when the SM holds fewer than 8 warps (2 per scheduler, the fewest
// that kept the FMA pipe busy in the ladder's profiles). So the estimated time is
//     ceil(T / (S * b)) * n * BM * BN / (rate * min(1, n * warps / 8)).
// The heuristic picks the option of least estimated time (the first, the larger tile, on a
// tie). Wave quantization is the ceil(): at 3072^3 the 128 x 256 tile makes T = 288 blocks,
// 2.18 waves of 132, so the busiest SMs compute 3 tiles where 2.18 would do (README).
struct SimtTileOption {
  int bm, bn;
  int warps;  // warps per block
  int rate;   // per-SM throughput with every SM busy, per mille of the 128 x 256 tile's
};
inline constexpr SimtTileOption kSimtTileOptions[] = {
    {128, 256, 8, 1000},
    {128, 128, 8, 950},
    {64, 128, 4, 950},
    {96, 192, 12, 980},  // two groups of 6 warps
    {64, 64, 4, 810},
    {32, 64, 2, 790},
};
inline constexpr int kSimtTileOptionCount = sizeof(kSimtTileOptions) / sizeof(kSimtTileOptions[0]);

__host__ __device__ constexpr long long simt_blocks(int M, int N, const SimtTileOption& o) {
  return static_cast<long long>(ceil_div(M, o.bm)) * ceil_div(N, o.bn);
}
// Estimated time of option o on `sms` SMs holding `blocks_per_sm` of its blocks each, in units
// of (tile area / per-mille rate).
__host__ __device__ constexpr double simt_estimated_time(int M, int N, int sms, int blocks_per_sm,
                                                         const SimtTileOption& o) {
  const long long T = simt_blocks(M, N, o), slots = static_cast<long long>(sms) * blocks_per_sm;
  const long long waves = (T + slots - 1) / slots;
  const long long per_sm = (T + sms - 1) / sms;
  const long long n = per_sm < blocks_per_sm ? per_sm : blocks_per_sm;  // tiles side by side
  const double warps = static_cast<double>(n) * o.warps;
  const double occupancy = warps < 8 ? warps / 8 : 1.0;
  return static_cast<double>(waves * n) * o.bm * o.bn * 1000.0 / (o.rate * occupancy);
}
// Index into kSimtTileOptions of the block tile for an M x N output on `sms` SMs, where
// blocks_per_sm[i] blocks of option i fit on an SM (the launcher asks the CUDA occupancy API).
// An option of which no block fits (0: too many registers or too much shared memory for this
// GPU) is never chosen; the last, smallest, option fits on every GPU the tutorial supports.
__host__ inline int choose_simt_tile(int M, int N, int sms, const int* blocks_per_sm) {
  int best = kSimtTileOptionCount - 1;
  for (int i = kSimtTileOptionCount - 2; i >= 0; --i)
    if (blocks_per_sm[i] > 0 &&
        simt_estimated_time(M, N, sms, blocks_per_sm[i], kSimtTileOptions[i]) <=
            simt_estimated_time(M, N, sms, blocks_per_sm[best], kSimtTileOptions[best]))
      best = i;
  return best;
}

// --- Launchers (defined in the step files, included by kernels.cu) --------------------------
using SimtLauncher = void (*)(int M, int N, int K, const float* A, const float* B, float* C);

// The ladder (B row-major): 04_coalesced/steps/2_simt_lds128.cuh, 3_simt_vec.cuh, 4_simt_swizzle.cuh.
void launch_simt_lds128(int M, int N, int K, const float* A, const float* B, float* C);
void launch_simt_vec(int M, int N, int K, const float* A, const float* B, float* C);
void launch_simt_swizzle(int M, int N, int K, const float* A, const float* B, float* C);
void launch_simt_warps(int M, int N, int K, const float* A, const float* B, float* C);
void launch_simt_bigtile(int M, int N, int K, const float* A, const float* B, float* C);
// Double buffering on SimtBest, at every shape (04_coalesced/steps/5_simt.cuh).
void launch_simt(int M, int N, int K, const float* A, const float* B, float* C);
void launch_simt_bt(int M, int N, int K, const float* A, const float* Bt, float* C);
// The chapter's answer: the block tile chosen by choose_simt_tile (04_coalesced/steps/6_simt_auto.cuh).
void launch_simt_auto(int M, int N, int K, const float* A, const float* B, float* C);
void launch_simt_bt_auto(int M, int N, int K, const float* A, const float* Bt, float* C);

// Each block tile of kSimtTileOptions by name, for both layouts (--kernel overrides the
// heuristic; 04_coalesced/experiments/tiles.cuh), and the tile-shape sweep (Bᵀ) behind SimtBest
// (04_coalesced/experiments/tile_sweep.cuh): name and launcher.
struct SimtNamedLauncher {
  const char* name;
  bool bt;  // true: B given as Bᵀ
  SimtLauncher launch;
};
extern const SimtNamedLauncher kSimtTiles[];
extern const int kSimtTilesSize;
extern const SimtNamedLauncher kSimtSweep[];
extern const int kSimtSweepSize;
