// Chapter 03: shared-memory tiling, then register blocking (1D, then 2D).
#pragma once

#include "common/check.h"

// --- Step 1, tiled_smem (steps/1_tiled_smem.cuh) ---------------------------------------
constexpr int kSmemTile = 32;  // (32, 32) tiles of A and B; one thread per element of C

// --- Step 2, tiled_1d (steps/2_tiled_1d.cuh) -------------------------------------------
// Block tile 64 x 64, K-slab 8; each thread computes a column of TM = 8 outputs.
constexpr int k1dBM = 64, k1dBN = 64, k1dBK = 8, k1dTM = 8;
constexpr int k1dThreads = k1dBM * k1dBN / k1dTM;  // 512

// --- Step 3, tiled_2d (steps/3_tiled_2d.cuh) -------------------------------------------
// Block tile BM x BN, K-slab BK; each thread computes a TM x TN micro-tile. The threads form a
// (BM / TM) x (BN / TN) grid; thread (tr, tc) owns rows tr + i * (BM / TM) and columns
// tc + j * (BN / TN): its micro-tile is strided, not contiguous, so that a warp's reads of
// the shared tiles are conflict-free (the lanes of a warp hold consecutive tc).
template <int BM, int BN, int TM, int TN>
struct Tile2d {
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  static constexpr int kRowThreads = BM / TM;  // threads along M
  static constexpr int kColThreads = BN / TN;  // threads along N
  // Row (within the block tile) of the i-th output row of thread tid.
  __host__ __device__ static int row(int tid, int i) { return tid / kColThreads + i * kRowThreads; }
  // Column (within the block tile) of the j-th output column of thread tid.
  __host__ __device__ static int col(int tid, int j) { return tid % kColThreads + j * kColThreads; }
  // Words of the shared tiles the inner loop reads at step k: As is (BM, BK), Bs is (BK, BN),
  // both row-major. A thread's i-th value of A and j-th value of B.
  template <int BK>
  __host__ __device__ static int a_word(int tid, int i, int k) { return row(tid, i) * BK + k; }
  __host__ __device__ static int b_word(int tid, int j, int k) { return k * BN + col(tid, j); }
};

void launch_tiled_smem(int M, int N, int K, const float* A, const float* B, float* C);
void launch_tiled_1d(int M, int N, int K, const float* A, const float* B, float* C);
void launch_tiled_2d(int M, int N, int K, const float* A, const float* B, float* C);
// The exercise (exercises/register_tile.cuh): tiled_2d's inner loop, written by the reader.
void launch_ex_register_tile(int M, int N, int K, const float* A, const float* B, float* C);
// The K-slab sweep (experiments/bk_sweep.cuh).
void launch_tiled_2d_bk8(int M, int N, int K, const float* A, const float* B, float* C);
void launch_tiled_2d_bk16(int M, int N, int K, const float* A, const float* B, float* C);
void launch_tiled_2d_bk32(int M, int N, int K, const float* A, const float* B, float* C);
