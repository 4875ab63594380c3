// Chapter 04: B stored transposed (Bᵀ, N x K, "K-major") and the bank-conflict trap that comes
// with it, and its fixes (steps/1_tiled_bt.cuh): the tile layouts, which the host tests judge
// with the bank calculator (tests/test_coalesced_index.cpp). The SIMT ladder: simt.cuh.
#pragma once

#include "common/check.h"

// --- The trap and its fixes: chapter 03's tiled_smem kernel, reading Bᵀ ----------------------
constexpr int kBtTile = 32;  // (32, 32) tiles, one thread per element of C, as in tiled_smem

// The trap and its fixes run at equal occupancy: blocks of 1024 threads, 2 of them per SM
// (__launch_bounds__(kBtThreads, kBtMinBlocks)), so ptxas holds every layout to 32 registers a
// thread and each runs 64 warps per SM, the most an SM holds. sm_86 and sm_89 hold 1536 threads
// per SM, so one block of 1024 at most there, for every layout alike (and asking ptxas for two
// is an error under -Werror). The exercise (exercises/fix_the_trap.cuh) runs the same way.
constexpr int kBtThreads = kBtTile * kBtTile;
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
constexpr int kBtMinBlocks = 1;
#else
constexpr int kBtMinBlocks = 2;
#endif

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

void launch_tiled_bt_trap(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_tiled_bt_padded(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_tiled_bt_swizzled(int M, int N, int K, const float* A, const float* Bt, float* C);
// The same three with registers left to ptxas: unequal occupancy (experiments/free_occupancy.cuh).
void launch_tiled_bt_trap_free(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_tiled_bt_padded_free(int M, int N, int K, const float* A, const float* Bt, float* C);
void launch_tiled_bt_swizzled_free(int M, int N, int K, const float* A, const float* Bt,
                                   float* C);
// The exercise (exercises/fix_the_trap.cuh, or its solution): the trap's kernel, its tile fixed.
void launch_ex_fix_the_trap(int M, int N, int K, const float* A, const float* Bt, float* C);
