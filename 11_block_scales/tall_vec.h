// Chapter 11, step 7: the order in which a split tile's partial (256, 128) accumulator goes to
// the workspace (steps/7_split_wave.cuh), __host__ __device__ so that the host test
// (test_block_scales.cpp, tall_partial_layout) checks the function the kernel calls.
// float4 q = 256 i + c holds registers 4 (i % 16) .. 4 (i % 16) + 3 of slab i / 16 of consumer
// thread c (warpgroup c / 128: rows 128 (c / 128) ..; slab s: rows + 64 s), so that a warp
// instruction writes 512 contiguous bytes. Each pair is stored swapped: its floats are
// (row, col + 1), (row, col), (row + 8, col + 1), (row + 8, col). Why swapped: the kernel's
// comment on its store (register banks).
#pragma once

#include "shared/hopper/hopper.cuh"  // WgmmaAcc

struct TallVec {
  static constexpr int kRows = 256, kCols = 128;
  static constexpr int kVecs = kRows * kCols / 4;  // float4 in a partial tile: 8192
  __host__ __device__ static constexpr int row(int q) {
    return 128 * ((q % 256) / 128) + 64 * ((q / 256) / 16) +
           WgmmaAcc::row(q % 128, 4 * ((q / 256) % 16));
  }
  __host__ __device__ static constexpr int col(int q) {
    return WgmmaAcc::col(q % 128, 4 * ((q / 256) % 16));
  }
  // Float f (0-3) of float4 q: its (row, col) in the tile.
  __host__ __device__ static constexpr int elem_row(int q, int f) { return row(q) + 8 * (f / 2); }
  __host__ __device__ static constexpr int elem_col(int q, int f) { return col(q) + 1 - f % 2; }
};
