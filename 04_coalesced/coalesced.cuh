// Chapter 04: B stored transposed (Bᵀ, N x K, "K-major"), the bank-conflict trap that comes
// with it, the fix, and the best SIMT kernel of the tutorial.
#pragma once

#include "common/check.h"

// --- The trap and its fixes: chapter 03's tiled_smem kernel, reading Bᵀ ----------------------
constexpr int kBtTile = 32;  // (32, 32) tiles, one thread per element of C, as in tiled_smem

// How the (32, 32) tile of Bᵀ is laid out in shared memory. The tile is stored as loaded:
// element (n, k) of the tile is Bᵀ[n0 + n][k0 + k]. The inner loop reads it down a column
// (fixed k, the 32 lanes of a warp taking n = 0..31).
enum class BtLayout {
  kPlain,     // [32][32]: a column is 32 words 32 apart, all in one bank: 32-way conflict
  kPadded,    // [32][33]: one extra word per row shifts each row by one bank: conflict-free
  kSwizzled,  // [32][32], column k of row n stored at k ^ n: conflict-free, no extra memory
};

template <BtLayout L>
struct BtTile {
  static constexpr int kRowWords = L == BtLayout::kPadded ? kBtTile + 1 : kBtTile;
  static constexpr int kWords = kBtTile * kRowWords;
  // Word offset of tile element (n, k).
  __host__ __device__ static constexpr int offset(int n, int k) {
    return n * kRowWords + (L == BtLayout::kSwizzled ? (k ^ n) : k);
  }
};

// --- The best SIMT kernel ---------------------------------------------------------------------
// Block tile (BM, BN), K-slab BK; warps of (WM, WN); each thread a (TM, TN) micro-tile made of
// float4 pieces: TM / 4 pieces along M spaced WM / (TM / 4) apart, TN / 4 along N likewise.
// MinBlocks: blocks per SM the compiler must leave registers for (__launch_bounds__): 2 blocks
// of 256 threads cap a thread at 128 registers; 1 lets it use up to 255.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int MinBlocks_>
struct SimtConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, TM = TM_, TN = TN_;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kLaneRows = WM / TM, kLaneCols = WN / TN;  // lanes along M, along N
  static constexpr int kPieceStrideM = WM / (TM / 4), kPieceStrideN = WN / (TN / 4);
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles divide the block tile");
  static_assert(kLaneRows * kLaneCols == 32, "a warp's lanes tile the warp tile exactly");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "micro-tiles are made of float4 pieces");
  static_assert(BK == 8 || BK == 16 || BK == 32, "the swizzle below is made for these BK");
  static_assert(BM % 32 == 0 && BN % 32 == 0, "tile rows in shared memory span whole bank rows");
  static_assert(WM % 32 == 0 && WN % 32 == 0,
                "warp tiles span whole groups of 8 float4s, which the swizzle permutes within");
  static_assert((BM * BK / 4) % kThreads == 0 && (BN * BK / 4) % kThreads == 0,
                "the threads load whole tiles in float4 pieces, equal shares");
  static constexpr int kSmemBytes = 2 * BK * (BM + BN) * sizeof(float);  // double-buffered
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
__host__ __device__ constexpr int swizzle_mask(int k);
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
template <int BK>
__host__ __device__ constexpr int swizzle_mask(int k) { return (k >> 2) * (32 / BK); }
template <int BK, int kLanes>
__host__ __device__ constexpr int swizzle_lane_part(int k, int lane) {
  return (lane ^ (swizzle_mask<BK>(k) & (kLanes - 1))) * 4;
}
template <int BK, int kLanes>
__host__ __device__ constexpr int swizzle_piece_part(int k, int p) {
  return ((p * kLanes) ^ (swizzle_mask<BK>(k) & ~(kLanes - 1))) * 4;
}

void launch_tiled_bt_trap(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_tiled_bt_padded(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_tiled_bt_swizzled(int M, int N, int K, const float* A, const float* Bt, float* C);
// The same three with registers left to ptxas: unequal occupancy (README, side note).
void launch_tiled_bt_trap_free(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_tiled_bt_padded_free(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_tiled_bt_swizzled_free(int M, int N, int K, const float* A, const float* Bt,
                                   float* C);
void launch_simt(int M, int N, int K, const float* A, const float* B, float* C);
void launch_simt_bt(int M, int N, int K, const float* A, const float* Bt, float* C);

// The tile configurations of the sweep (README), on the Bᵀ layout: name and launcher.
struct SweepEntry {
  const char* name;
  void (*launch)(int M, int N, int K, const float* A, const float* Bt, float* C);
};
extern const SweepEntry kSimtSweep[];
extern const int kSimtSweepSize;
