// Chapter 07: cp.async software pipelining on chapter 05's mma.sync kernel. BF16 A (M x K) and
// Bᵀ (N x K), both row-major, FP32 accumulation, FP32 C = A * B. The kernels are the step files
// in 07_pipelined/steps/ (one per step, in reading order; kernels.cu includes them, then 07_pipelined/experiments/). Here:
// the configuration and the index functions the kernels use (the copy assignment, the block
// order), __host__ __device__, so the host tests check the very functions the kernels call; and
// the launchers. Device code the steps share: cp_async.cuh (the PTX), tile_copier.cuh.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "shared/tensorcore/tensorcore.cuh"

// --- The configuration ---------------------------------------------------------------------------
// Block tile (BM, BN), K slab BK, warp tile (WM, WN): the tiling of chapter 05's MmaConfig.
// Stages: shared-memory stages of (A, Bᵀ) tiles; while the warps compute on one, the cp.async
// copies of the next Stages - 1 are in flight. MinBlocks: blocks per SM to leave registers for.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int Stages_, int MinBlocks_ = 1>
struct PipeConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
  static constexpr int kStages = Stages_;
  static constexpr int kMinBlocks = MinBlocks_;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kMI = WM / Mma16816::kM, kNI = WN / Mma16816::kN;  // mma tiles per warp
  using ATile = SmemTile<BM, BK, TileLayout::kSwizzled>;  // (BM, BK), swizzled as in chapter 05
  using BTile = SmemTile<BN, BK, TileLayout::kSwizzled>;  // (BN, BK)
  static constexpr int kStageElems = ATile::kElems + BTile::kElems;
  static constexpr int kSmemBytes = kStages * kStageElems * 2;  // dynamic shared memory
  // Step 5's epilogue: the C tile of one warp, one 16-row band at a time, staged in the (then
  // free) stages: rows of WN floats plus 8 of padding, so that the 8-byte fragment stores of a
  // half-warp's 4 rows land 8 banks apart (host-tested: conflict-free).
  static constexpr int kEpiRow = WN + 8;
  static constexpr int kEpiElems = kWarpsM * kWarpsN * 16 * kEpiRow;
  static_assert(kStages >= 1 && kStages <= 8, "1 (no overlap) to 8 stages");
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles divide the block tile");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "ldmatrix.x4 loads 16 rows of A or of Bᵀ");
  static_assert(BK % 32 == 0, "whole swizzle periods; fragment i + 1 is 16 * BK elements on");
  static_assert((BM * BK / 8) % kThreads == 0 && (BN * BK / 8) % kThreads == 0,
                "the threads copy whole tiles in 16-byte pieces, equal shares");
  static_assert(kThreads % (BK / 8) == 0, "every thread keeps the same k within the tile");
  static_assert(WN % 4 == 0, "float4 epilogue rows");
};

// The ladder's tiling, chapter 05's MmaBest (128 x 256 block tiles, BK 64, 8 warps of 64 x 64,
// one block per SM), with two stages (cp_async2: 96 KiB) and three (stages and every later
// step: 144 KiB).
using Pipe2 = PipeConfig<128, 256, 64, 64, 64, 2>;
using Pipe3 = PipeConfig<128, 256, 64, 64, 64, 3>;

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

// --- The block order (rasterization, step 4 on) ------------------------------------------------
// Block b of a 1-D grid of tiles_m * tiles_n blocks computes output tile (m, n). Plain order:
// row by row (m = b / tiles_n), so consecutive blocks share a row of A and each needs its own
// column of Bᵀ. Grouped order, group G: the tile rows are taken G at a time, and within a group
// the blocks go down a column first, so that the blocks resident at once cover a G-row band of
// a few columns: both A and Bᵀ tiles are re-read from L2 instead of DRAM. A permutation of the
// tiles (host-tested) for any G >= 1; G = 1 is the plain order. Chapter 08 uses it too.
struct TileCoord {
  int m, n;
};
__host__ __device__ constexpr TileCoord grouped_tile(int b, int tiles_m, int tiles_n, int G) {
  const int per_group = G * tiles_n;  // blocks in one full group of G tile rows
  const int first_m = (b / per_group) * G;
  const int rows = tiles_m - first_m < G ? tiles_m - first_m : G;  // the last group may be short
  const int r = b % per_group;
  return TileCoord{first_m + r % rows, r / rows};
}
// The G of raster, epilogue and pipelined (README, "The block order"; epilogue_g8 takes 8).
constexpr int kPipeGroup = 16;

// --- Launchers -----------------------------------------------------------------------------------
// The steps (07_pipelined/steps/), in reading order, each one idea on the previous (README).
// Rows that are not 16-byte aligned are copied once into padded operands first, in every
// launcher (pad.cuh). A configuration that needs more shared memory per block than the GPU
// has throws KernelNotSupported: the program reports the kernel as skipped.
void launch_cp_async2(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);  // 1
void launch_stages(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 1
void launch_frag_db(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);    // 2
void launch_spread(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 3
void launch_raster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 4
void launch_epilogue(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);   // 5
// The chapter's answer (6): the autotuned configuration for the shape's class, with chapter 06's
// split-K beneath where the tiles alone cannot fill the GPU.
void launch_pipelined(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);

// The exercise (07_pipelined/exercises/cp_async_pipeline.cuh, or its solution): cp_async2 with the ring's
// bookkeeping (prefetch, wait, barrier, commits, stages) written by the reader, built at S = 2
// (as cp_async2) and S = 3 (as stages). Only the pipelined program links it (chapter 08 links
// pipelined_lib alone).
void launch_ex_cp_async_pipeline(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_ex_cp_async_pipeline_s3(int M, int N, int K, const bf16* A, const bf16* Bt,
                                    float* C);

// The experiments behind --kernel sweep (07_pipelined/experiments/, NOTES.md): the stage sweep, the
// autotuner's candidates one by one, synchronous element loads instead of the padding copy,
// split-K's atomic variant, and the block order with G = 8.
struct PipeSweepEntry {
  const char* name;
  void (*launch)(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
};
extern const PipeSweepEntry kPipeSweep[];
extern const int kPipeSweepSize;
