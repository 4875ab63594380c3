// Chapter 05: the tensor cores. BF16 A (M x K) and Bᵀ (N x K), both row-major ("K-major"),
// FP32 accumulation, FP32 C = A * B. The index functions the kernels use (fragment maps,
// ldmatrix addresses, shared-tile layouts) are here, __host__ __device__, so that the host
// tests check the very functions the kernels call; so are the configurations. The kernels are
// the step files in 05_tensorcore/steps/ (one per step, in reading order; kernels.cu includes them), the
// device code they share is tile_loader.cuh (global -> registers -> shared) and mma_ptx.cuh
// (the inline PTX).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "common/check.h"

using bf16 = __nv_bfloat16;

// --- The m16n8k16 fragments -------------------------------------------------------------------
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 multiplies a (16, 16) tile of A by a
// (16, 8) tile of B and adds a (16, 8) tile of C, spread over the 32 lanes of a warp (PTX ISA,
// "Matrix Fragments for mma.m16n8k16"). A lane's group is lane / 4 (0..7), its place in the
// group lane % 4 (0..3).
//   A: 4 registers of 2 BF16 each, register i, half h (the low half is the lower column)
//   B: 2 registers of 2 BF16 each
//   C: 4 FP32 values
struct Mma16816 {
  static constexpr int kM = 16, kN = 8, kK = 16;
  __host__ __device__ static constexpr int a_row(int lane, int i) { return lane / 4 + 8 * (i % 2); }
  __host__ __device__ static constexpr int a_col(int lane, int i, int h) {
    return 2 * (lane % 4) + h + 8 * (i / 2);
  }
  __host__ __device__ static constexpr int b_k(int lane, int i, int h) {
    return 2 * (lane % 4) + h + 8 * i;
  }
  __host__ __device__ static constexpr int b_n(int lane) { return lane / 4; }
  __host__ __device__ static constexpr int c_row(int lane, int i) { return lane / 4 + 8 * (i / 2); }
  __host__ __device__ static constexpr int c_col(int lane, int i) { return 2 * (lane % 4) + i % 2; }
};

// --- ldmatrix.x4 ------------------------------------------------------------------------------
// ldmatrix.sync.aligned.m8n8.x4.shared.b16 loads four (8, 8) matrices of 16-bit values. Lane l
// gives the shared address of row l % 8 of matrix l / 8 (16 contiguous bytes); afterwards lane
// t holds, in register j, row t / 4, columns 2 (t % 4) and 2 (t % 4) + 1 of matrix j: exactly
// the shape of one fragment register above. So the four matrices only have to be chosen so
// that register j is fragment register j.
struct Ldmatrix {
  // What lane t receives in register j: (row, first column) within matrix j.
  __host__ __device__ static constexpr int recv_row(int t) { return t / 4; }
  __host__ __device__ static constexpr int recv_col(int t) { return 2 * (t % 4); }

  // A (16 rows, 16 k): matrix j = fragment register j = rows 8 (j % 2) .., k 8 (j / 2) ..
  // Lane l points at row l % 16, k 8 (l / 16) of the (16, 16) tile.
  __host__ __device__ static constexpr int a_row(int lane) { return lane % 16; }
  __host__ __device__ static constexpr int a_col(int lane) { return 8 * (lane / 16); }

  // Bᵀ (16 n, 16 k), two n8 tiles of B at once: matrix j = register j % 2 of n-tile j / 2,
  // i.e. n 8 (j / 2) .., k 8 (j % 2) .. Lane l points at n = l % 8 + 8 (l / 16), k 8 ((l / 8) % 2).
  __host__ __device__ static constexpr int b_row(int lane) { return lane % 8 + 8 * (lane / 16); }
  __host__ __device__ static constexpr int b_col(int lane) { return 8 * ((lane / 8) % 2); }
};

// --- Shared-memory tiles ----------------------------------------------------------------------
// A (ROWS, BK) tile of a K-major operand, BF16, element (r, k) = X[x0 + r][k0 + k]. It is
// written by 16-byte stores (8 BF16 along k) and read by 32-bit LDS or by ldmatrix rows of
// 16 bytes, so what matters is where each 16-byte chunk goes.
enum class TileLayout {
  kPadded,    // rows of BK + 8 elements: each row shifts the next 16 bytes over (4 banks)
  kSwizzled,  // rows of BK elements, 16-byte chunks permuted by an XOR within 128-byte lines
};

// The swizzle on 16-byte chunk indices: chunk c of the unswizzled tile goes to position
// c ^ ((c / 8) % 8) of its 128-byte line (8 chunks, the 32 banks). The 8 consecutive chunks of
// a line stay in that line (the 128-bit stores of 8 lanes: one wavefront), and chunk column c
// of 8 consecutive lines lands in 8 different positions (ldmatrix's 8 rows: one wavefront).
__host__ __device__ constexpr int swizzle_chunk(int c) { return c ^ ((c >> 3) & 7); }

template <int ROWS, int BK, TileLayout L>
struct SmemTile {
  static_assert(BK % 16 == 0, "whole k16 steps of the mma");
  static constexpr int kChunksPerRow = BK / 8;
  static constexpr int kRowElems = L == TileLayout::kPadded ? BK + 8 : BK;
  static constexpr int kElems = ROWS * kRowElems;
  static_assert(L == TileLayout::kPadded || (ROWS * kChunksPerRow) % 64 == 0,
                "a swizzled tile is whole periods of the swizzle (8 lines of 128 bytes)");
  // Element offset of (r, k).
  __host__ __device__ static constexpr int offset(int r, int k) {
    return L == TileLayout::kPadded
               ? r * kRowElems + k
               : swizzle_chunk(r * kChunksPerRow + k / 8) * 8 + k % 8;
  }
};

// --- Steps 1 and 2, wmma and wmma_shared (05_tensorcore/steps/1_wmma.cuh, 05_tensorcore/steps/2_wmma_shared.cuh) ---------
// (128, 128) block tile, BK 32, 8 warps of (64, 32), each a grid of (4, 2) WMMA fragments of
// (16, 16); tiles padded by 16 bytes a row. The same tiling as MmaStep below.
namespace wmma_cfg {
constexpr int BM = 128, BN = 128, BK = 32;  // block tile
constexpr int WM = 64, WN = 32;             // warp tile: (4, 2) fragments of (16, 16)
constexpr int kThreads = (BM / WM) * (BN / WN) * 32;
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0,
              "whole warp tiles per block tile, whole (16, 16) fragments per warp tile");
static_assert((BM * BK / 8) % kThreads == 0 && (BN * BK / 8) % kThreads == 0,
              "the threads load whole tiles in 16-byte pieces, equal shares");
using ATile = SmemTile<BM, BK, TileLayout::kPadded>;
using BTile = SmemTile<BN, BK, TileLayout::kPadded>;
}  // namespace wmma_cfg

// --- Steps 3 and 4, the mma.sync kernels' tiling (05_tensorcore/steps/3_mma_lds.cuh, 05_tensorcore/steps/4_mma_ldmatrix.cuh)
// Block tile (BM, BN), K slab BK; warps of (WM, WN); each warp a grid of (WM / 16) x (WN / 8)
// m16n8k16 instructions. MinBlocks: the blocks per SM the compiler must leave registers for.
// Every kernel keeps chapter 04's double buffering: two shared stages, the next tile's global
// loads in flight during the compute, stored into the other stage after it (a single-buffer
// copy is an experiment: 05_tensorcore/experiments/mma_sweep.cuh).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int MinBlocks_>
struct MmaConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kMI = WM / Mma16816::kM, kNI = WN / Mma16816::kN;  // mma tiles per warp
  static constexpr int kMinBlocks = MinBlocks_;
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles divide the block tile");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "ldmatrix.x4 loads 16 rows of A or of Bᵀ");
  static_assert((BM * BK / 8) % kThreads == 0 && (BN * BK / 8) % kThreads == 0,
                "the threads load whole tiles in 16-byte pieces, equal shares");
  static_assert(BK % 32 == 0,
                "a fragment 16 rows further is 16 * BK elements further in every layout "
                "(for the swizzle: whole periods), so the kernel adds it as a constant");
};

// The ladder's tiling, for the mma.sync steps: (128, 128) block tiles, BK 32, 8 warps of
// (64, 32), 2 blocks per SM. MmaBest, the winner of the sweep (NOTES.md; mma_tuned):
// (128, 256) block tiles, BK 64, 8 warps of (64, 64), 1 block per SM.
using MmaStep = MmaConfig<128, 128, 32, 64, 32, 2>;
using MmaBest = MmaConfig<128, 256, 64, 64, 64, 1>;

// The blocks per SM a kernel of configuration Cfg asks for in __launch_bounds__. ptxas for
// sm_80 allocates a few more registers than for sm_90 in two cases, the plain-LDS fragments of
// mma_lds (kLdsFragments) and the sweep's 128 x 64 tile at 4 blocks per SM, and would spill at
// the blocks per SM the H100 runs them with; for sm_80 they ask for one block fewer.
template <typename Cfg, bool kLdsFragments = false>
constexpr int mma_min_blocks() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 800
  if (kLdsFragments || Cfg::kMinBlocks >= 4) return Cfg::kMinBlocks - 1;
#endif
  return Cfg::kMinBlocks;
}

// The steps (05_tensorcore/steps/), in reading order.
void launch_wmma(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);          // 1
void launch_wmma_shared(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);   // 2
void launch_mma_lds(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);       // 3
void launch_mma_ldmatrix(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);  // 4
void launch_mma_swizzle(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);   // 4
void launch_mma_tuned(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 4

// The exercise (05_tensorcore/exercises/ldmatrix_fragments.cuh, or its solution): mma_ldmatrix's kernel with
// the per-lane ldmatrix addresses written by the reader. Only the tensorcore program links it.
void launch_ex_ldmatrix_fragments(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);

// The tile configurations of the sweep (05_tensorcore/experiments/mma_sweep.cuh, NOTES.md): name and
// launcher.
struct Bf16SweepEntry {
  const char* name;
  void (*launch)(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
};
extern const Bf16SweepEntry kMmaSweep[];
extern const int kMmaSweepSize;
