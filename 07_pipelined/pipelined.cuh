// Chapter 07: cp.async software pipelining on chapter 05's mma.sync kernel. BF16 A (M x K) and
// Bᵀ (N x K), both row-major, FP32 accumulation, FP32 C = A * B. The index functions the kernels
// use (the block order, the copy assignment) are here, __host__ __device__, so the host tests
// check the very functions the kernels call.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "05_tensorcore/tensorcore.cuh"

// --- The configuration ---------------------------------------------------------------------------
// What each step of the ladder adds, as bits of PipeConfig's Features:
enum PipeFeature : unsigned {
  kFragDoubleBuffer = 1,  // ldmatrix of the next k16 step while the mma run on this one
  kSpreadCopies = 2,      // the next tile's copies issued a share per k16 step, among the mma
  kVecEpilogue = 4,       // C out through shared memory in 16-byte stores (else 8-byte)
  kSyncLoads = 8,         // no cp.async: element loads and shared stores (unaligned rows)
};

// Block tile (BM, BN), K slab BK, warp tile (WM, WN): the tiling of chapter 05's MmaConfig.
// Stages: shared-memory stages of (A, Bᵀ) tiles; while the warps compute on one, the cp.async
// copies of the next Stages - 1 are in flight. MinBlocks: blocks per SM to leave registers for.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int Stages_, unsigned Features_ = 0,
          int MinBlocks_ = 1>
struct PipeConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
  static constexpr int kStages = Stages_;
  static constexpr bool kFragDB = Features_ & kFragDoubleBuffer;
  static constexpr bool kSpread = Features_ & kSpreadCopies;
  static constexpr bool kVecEpi = Features_ & kVecEpilogue, kSync = Features_ & kSyncLoads;
  static constexpr int kMinBlocks = MinBlocks_;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kMI = WM / Mma16816::kM, kNI = WN / Mma16816::kN;  // mma tiles per warp
  using ATile = SmemTile<BM, BK, TileLayout::kSwizzled>;  // (BM, BK), swizzled as in chapter 05
  using BTile = SmemTile<BN, BK, TileLayout::kSwizzled>;  // (BN, BK)
  static constexpr int kStageElems = ATile::kElems + BTile::kElems;
  // The C tile of one warp, one 16-row band at a time, staged for the 16-byte epilogue: rows of
  // WN floats plus 8 of padding, so that the 8-byte fragment stores of a half-warp's 4 rows land
  // 8 banks apart (host-tested: conflict-free).
  static constexpr int kEpiRow = WN + 8;
  static constexpr int kEpiElems = kWarpsM * kWarpsN * 16 * kEpiRow;
  static constexpr int kSmemBytes =
      (kStages * kStageElems * 2 > (kVecEpi ? kEpiElems * 4 : 0)) ? kStages * kStageElems * 2
                                                                   : kEpiElems * 4;
  static_assert(kStages >= 1 && kStages <= 8, "1 (no overlap) to 8 stages");
  static_assert(!(kFragDB || kSpread) || kStages >= 2, "these run on a ring of stages");
  static_assert(!kSpread || kFragDB, "the spread copies sit in the fragment-buffered loop");
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles divide the block tile");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "ldmatrix.x4 loads 16 rows of A or of Bᵀ");
  static_assert(BK % 32 == 0, "whole swizzle periods; fragment i + 1 is 16 * BK elements on");
  static_assert((BM * BK / 8) % kThreads == 0 && (BN * BK / 8) % kThreads == 0,
                "the threads copy whole tiles in 16-byte pieces, equal shares");
  static_assert(kThreads % (BK / 8) == 0, "every thread keeps the same k within the tile");
  static_assert(WN % 4 == 0, "float4 epilogue rows");
};

// --- Which thread copies which 16 bytes ----------------------------------------------------------
// The (ROWS, BK) tile is ROWS * BK / 8 pieces of 16 bytes (8 BF16 along k). Thread tid copies
// pieces tid, tid + kThreads, ...: piece f is row f / (BK / 8), k (f % (BK / 8)) * 8, so a warp's
// 32 pieces are 512 consecutive bytes of the unswizzled tile (whole 128-byte lines of global
// memory), and piece p of a thread is kThreads / (BK / 8) rows below its piece p - 1.
struct CopyPiece {
  int row, k;
};
template <int BK>
__host__ __device__ constexpr CopyPiece copy_piece(int tid, int p, int threads) {
  return CopyPiece{(tid + p * threads) / (BK / 8), ((tid + p * threads) % (BK / 8)) * 8};
}

// --- The block order (rasterization) -------------------------------------------------------------
// Block b of a 1-D grid of tiles_m * tiles_n blocks computes output tile (m, n). Plain order:
// row by row (m = b / tiles_n), so consecutive blocks share a row of A and each needs its own
// column of Bᵀ. Grouped order, group G: the tile rows are taken G at a time, and within a group
// the blocks go down a column first, so that the blocks resident at once cover a G-row band of
// a few columns: both A and Bᵀ tiles are re-read from L2 instead of DRAM. A permutation of the
// tiles (host-tested) for any G >= 1; G = 1 is the plain order.
struct TileCoord {
  int m, n;
};
__host__ __device__ constexpr TileCoord grouped_tile(int b, int tiles_m, int tiles_n, int G) {
  const int per_group = G * tiles_n;      // blocks in one full group of G tile rows
  const int first_m = (b / per_group) * G;
  const int rows = tiles_m - first_m < G ? tiles_m - first_m : G;  // the last group may be short
  const int r = b % per_group;
  return TileCoord{first_m + r % rows, r / rows};
}

// --- Launchers -----------------------------------------------------------------------------------
// The ladder, each one step on the previous (README). Rows that are not 16-byte aligned are
// copied once into padded operands first, in every launcher (README, "Unaligned shapes").
void launch_cp_async2(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_stages(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_frag_db(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_spread(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_raster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_epilogue(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
// The chapter's answer: the autotuned configuration for the shape's class, with split-K beneath
// where the tiles alone cannot fill the GPU.
void launch_pipelined(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);

// Configurations behind --kernel sweep: the stage sweep, the autotuner's candidates (each with
// its split-K plan), and synchronous element loads instead of the padding copy.
struct PipeSweepEntry {
  const char* name;
  void (*launch)(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
};
extern const PipeSweepEntry kPipeSweep[];
extern const int kPipeSweepSize;
