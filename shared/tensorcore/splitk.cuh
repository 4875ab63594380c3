// Chapter 06: split-K, written once for any base kernel.
//
// A base kernel qualifies if it can compute one K range of its output tiles. It runs on the
// grid (N tiles, M tiles, S): block (x, y, z) computes tile (y, x) over the K range
// splitk_slice(K, BK, S, z) and writes the partial tile to out + z * slice_stride, or adds it
// into out with atomicAdd. The rest lives here (and in splitk.cu), host-tested
// (test_splitk_plan.cu):
//   plan_splitk       which tile and how many slices S, from M, N, K, the tiles and the SMs
//   splitk_gemm       runs a plan: the workspace variant (partials, then splitk_reduce_kernel in
//                     a fixed order: deterministic) or the atomic variant (C zeroed, slices add)
//   launch_splitk_reduce   the reduction alone (timed separately by splitk_parts)
// This chapter's base kernels are the step files: 06_splitk/steps/1_simt_splitk.cuh (chapter 04's SIMT
// kernel, FP32) and 06_splitk/steps/2_mma_splitk.cuh (chapter 05's mma.sync kernel, BF16); their
// launchers are declared at the end. Chapter 07 puts its own kernel underneath by filling a
// SplitKBase<__nv_bfloat16>.
#pragma once

#include <cuda_bf16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/check.h"
#include "common/device.h"

// --- The K range of one slice ------------------------------------------------------------------
// [begin, end) of K. The ceil(K / BK) K-tiles are dealt out as evenly as integers allow: slice s
// gets tiles [s * T / S, (s + 1) * T / S). Every boundary but the last is a multiple of BK, so
// a slice's tiles are the base kernel's own tiles (same alignment for 16-byte loads), and only
// the last slice can end in a partial tile. With S > T some slices are empty (begin == end):
// they write zeros (workspace) or add nothing.
struct KRange {
  int begin, end;
};
__host__ __device__ inline KRange splitk_slice(int K, int BK, int S, int s) {
  const int64_t T = (int64_t(K) + BK - 1) / BK;  // K-tiles
  const int64_t b = int64_t(s) * T / S * BK, e = int64_t(s + 1) * T / S * BK;
  return {int(b < K ? b : K), int(e < K ? e : K)};
}

// --- Choosing the tile and S ---------------------------------------------------------------------
struct TileShape {
  int BM, BN, BK;
  int blocks_per_sm;  // resident blocks of the base kernel per SM (occupancy API)
};

// A slice should hold at least this much K: each slice writes (and the reduction reads) one
// BM x BN partial tile, so fewer than 2 * kMinSliceK FLOPs per 8 bytes of workspace traffic
// would make the split cost more than it saves.
constexpr int kMinSliceK = 256;

struct SplitPlan {
  int tile = 0;    // index into the TileShapes given to plan_splitk
  int splits = 1;  // S
  int64_t output_tiles = 0, k_tiles = 0;
  int capacity = 0;  // blocks resident at once: SMs x blocks_per_sm
  size_t workspace_bytes = 0;  // S * M * N * 4 for the workspace variant when S > 1, else 0
};

// The heuristic (README, "The rule for S"):
//   1. The tile: the one that wastes the least of its area on padding (ceil(M/BM) BM ceil(N/BN) BN
//      smallest); ties go to the earlier (larger, faster) tile.
//   2. S = floor(capacity / output tiles): the most slices whose blocks all fit in one wave.
//      When the tiles already fill more than half a wave, this is 1: no split (4096^3 has 512
//      tiles of 128 x 256 for 132 SMs). Otherwise S x tiles lies between half a wave and one.
//   3. At most K / kMinSliceK slices (at least 1), so that each slice has enough K.
// splits_override > 0 (--splits) replaces S; the tile is still chosen by 1.
__host__ inline SplitPlan plan_splitk(int M, int N, int K, const TileShape* tiles, int n_tiles,
                                      int sms, int splits_override) {
  SplitPlan p;
  int64_t best_area = INT64_MAX;
  for (int i = 0; i < n_tiles; ++i) {
    const TileShape& t = tiles[i];
    const int64_t area = (int64_t(M) + t.BM - 1) / t.BM * t.BM * ((int64_t(N) + t.BN - 1) / t.BN * t.BN);
    if (area < best_area) best_area = area, p.tile = i;
  }
  const TileShape& t = tiles[p.tile];
  p.output_tiles = ((int64_t(M) + t.BM - 1) / t.BM) * ((int64_t(N) + t.BN - 1) / t.BN);
  p.k_tiles = (int64_t(K) + t.BK - 1) / t.BK;
  p.capacity = sms * t.blocks_per_sm;
  int64_t s = p.capacity / p.output_tiles;
  s = std::min<int64_t>(s, K / kMinSliceK);
  p.splits = int(std::max<int64_t>(s, 1));
  if (splits_override > 0) p.splits = splits_override;
  p.workspace_bytes = p.splits > 1 ? size_t(p.splits) * M * N * sizeof(float) : 0;
  return p;
}

// --- The base-kernel interface ---------------------------------------------------------------
// How a base kernel writes its finished (partial) tile: a plain store, or an atomic add.
template <bool kAtomic>
__device__ __forceinline__ void splitk_store(float* p, float v) {
  if constexpr (kAtomic)
    atomicAdd(p, v);
  else
    *p = v;
}

// T: type of A and Bᵀ (float or __nv_bfloat16). C = A * B with A (M x K) and Bᵀ (N x K) row-major.
template <typename T>
struct SplitKBase {
  TileShape tile;  // blocks_per_sm filled by the launcher's occupancy query (0 here)
  // Enqueues the base kernel on grid (ceil(N/BN), ceil(M/BM), splits), as described at the top.
  void (*launch)(int M, int N, int K, const T* A, const T* Bt, float* out, int splits,
                 size_t slice_stride, bool atomic);
  int (*blocks_per_sm)();  // cudaOccupancyMaxActiveBlocksPerMultiprocessor of the kernel
};

enum class SplitMode { kWorkspace, kAtomic };

// C (M x N) = sum over the S slices of the workspace, in the order s = 0, 1, ..., S - 1.
void launch_splitk_reduce(int M, int N, int S, const float* ws, float* C);
// The workspace, grown when needed and kept: a call with the size of an earlier one allocates
// nothing, so the timed runs (after a verified one) contain no cudaMalloc.
float* splitk_workspace(size_t bytes);

// The plan for these bases (their occupancy queried once per base).
template <typename T>
SplitPlan plan_for(const SplitKBase<T>* bases, int n, int M, int N, int K, int splits_override) {
  TileShape shapes[8];
  for (int i = 0; i < n && i < 8; ++i) {
    shapes[i] = bases[i].tile;
    shapes[i].blocks_per_sm = bases[i].blocks_per_sm();
  }
  return plan_splitk(M, N, K, shapes, std::min(n, 8), device_sm_count(), splits_override);
}

// The whole split-K GEMM on the default stream: C = A * B.
template <typename T>
void splitk_gemm(const SplitKBase<T>* bases, int n, SplitMode mode, int splits_override, int M,
                 int N, int K, const T* A, const T* Bt, float* C) {
  const SplitPlan p = plan_for(bases, n, M, N, K, splits_override);
  const SplitKBase<T>& b = bases[p.tile];
  if (p.splits == 1) {  // no split: the base kernel as it is
    b.launch(M, N, K, A, Bt, C, 1, 0, false);
  } else if (mode == SplitMode::kAtomic) {
    CUDA_CHECK(cudaMemsetAsync(C, 0, size_t(M) * N * sizeof(float)));  // the slices add into 0
    b.launch(M, N, K, A, Bt, C, p.splits, 0, true);
  } else {
    float* ws = splitk_workspace(p.workspace_bytes);  // (S, M, N)
    b.launch(M, N, K, A, Bt, ws, p.splits, size_t(M) * N, false);
    launch_splitk_reduce(M, N, p.splits, ws, C);
  }
}

// --- This chapter's base kernels and launchers (defined in the step files) ---------------------
// 06_splitk/steps/1_simt_splitk.cuh, FP32 (A and Bᵀ): the tiles the plan chooses from (0: chapter 04's
// 128 x 256 x 16, SimtBest; 1: 128 x 128 x 16), and the registry's launchers.
extern const SplitKBase<float> kSimtBases[];
extern const int kSimtBaseCount;
extern int g_simt_splits;  // S for the launchers: 0 = the heuristic (plan_splitk), else --splits
void launch_simt_bt_unsplit(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_splitk_simt_atomic(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_splitk_simt(int M, int N, int K, const float* A, const float* Bt, float* C);
// The exercise (06_splitk/exercises/deterministic_reduction.cuh): splitk_simt with the reader's reduction.
void launch_ex_deterministic_reduction(int M, int N, int K, const float* A, const float* Bt,
                                       float* C);

// 06_splitk/steps/2_mma_splitk.cuh, BF16 A and Bᵀ, FP32 C: the tiles (0: chapter 05's MmaBest,
// 128 x 256 x 64; 1: MmaStep, 128 x 128 x 32), and the launchers.
extern const SplitKBase<__nv_bfloat16> kMmaBases[];
extern const int kMmaBaseCount;
extern int g_mma_splits;  // as g_simt_splits
void launch_mma_unsplit(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* Bt,
                        float* C);
void launch_splitk_mma_atomic(int M, int N, int K, const __nv_bfloat16* A,
                              const __nv_bfloat16* Bt, float* C);
void launch_splitk_mma(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* Bt,
                       float* C);
