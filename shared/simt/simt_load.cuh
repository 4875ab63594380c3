// Chapter 04: how the SIMT kernels (04_coalesced/steps/2_simt_lds128.cuh to 04_coalesced/steps/6_simt_auto.cuh) move a
// tile from global to shared memory, one float4 "piece" at a time. Shared by every step from
// simt_lds128 on, and by chapter 06's copy of the best kernel.
//   K-major operand (A, and Bᵀ): load_kmajor_piece, then store_kmajor_piece, which writes the
//     piece transposed (and swizzled) so that the inner loop reads one k of 4 rows as a float4.
//   Row-major B: load_nmajor_piece, then store_nmajor_piece, which writes it as it is.
// Every M, N, K >= 1: a piece is one 16-byte load where it lies inside the matrix and vec_ok
// (its row length keeps it 16-byte aligned), else four 4-byte loads with 0 outside the matrix.
#pragma once

#include <cstdint>

#include "shared/simt/simt.cuh"

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
}

// Loads float4 piece `f` of the (BX, BK) tile of a K-major operand X (rows x of length K,
// i.e. A or Bᵀ) starting at (x0, k0): row x = f / (BK / 4), columns k4 * 4 .. k4 * 4 + 3.
// One 16-byte load where the piece is inside and aligned, else element by element, with 0
// outside the matrix.
template <int BK>
__device__ __forceinline__ float4 load_kmajor_piece(const float* __restrict__ X, int rows, int K,
                                                    int x0, int k0, int f, bool vec_ok) {
  const int x = x0 + f / (BK / 4), k = k0 + (f % (BK / 4)) * 4;
  const float* p = X + static_cast<size_t>(x) * K + k;
  if (vec_ok && x < rows && k + 3 < K) return *reinterpret_cast<const float4*>(p);
  float4 v;
  v.x = (x < rows && k + 0 < K) ? p[0] : 0.0f;
  v.y = (x < rows && k + 1 < K) ? p[1] : 0.0f;
  v.z = (x < rows && k + 2 < K) ? p[2] : 0.0f;
  v.w = (x < rows && k + 3 < K) ? p[3] : 0.0f;
  return v;
}

// Writes that piece transposed into the (BK, BX) shared tile: four 4-byte stores, one per k,
// at swizzled columns (kSwizzle: kmajor_swizzle, simt.cuh) so that the warp's 32 stores of
// each hit 32 different banks; unswizzled they are 4-way conflicted at BK = 16.
template <int BK, int BX, bool kSwizzle>
__device__ __forceinline__ void store_kmajor_piece(float* tile, int f, float4 v) {
  const int x = f / (BK / 4), k = (f % (BK / 4)) * 4;
  auto col = [&](int kk) { return kSwizzle ? kmajor_swizzle<BK>(kk, x) : x; };
  tile[(k + 0) * BX + col(k + 0)] = v.x;
  tile[(k + 1) * BX + col(k + 1)] = v.y;
  tile[(k + 2) * BX + col(k + 2)] = v.z;
  tile[(k + 3) * BX + col(k + 3)] = v.w;
}

// Row-major B (K x N): piece f of the (BK, BN) tile: row k = f / (BN / 4), columns n4 * 4...
template <int BN>
__device__ __forceinline__ float4 load_nmajor_piece(const float* __restrict__ B, int K, int N,
                                                    int k0, int n0, int f, bool vec_ok) {
  const int k = k0 + f / (BN / 4), n = n0 + (f % (BN / 4)) * 4;
  const float* p = B + static_cast<size_t>(k) * N + n;
  if (vec_ok && k < K && n + 3 < N) return *reinterpret_cast<const float4*>(p);
  float4 v;
  v.x = (k < K && n + 0 < N) ? p[0] : 0.0f;
  v.y = (k < K && n + 1 < N) ? p[1] : 0.0f;
  v.z = (k < K && n + 2 < N) ? p[2] : 0.0f;
  v.w = (k < K && n + 3 < N) ? p[3] : 0.0f;
  return v;
}

// ... stored as it is: a warp writes 512 contiguous bytes of one row k (conflict-free).
template <int BN>
__device__ __forceinline__ void store_nmajor_piece(float* tile, int f, float4 v) {
  *reinterpret_cast<float4*>(&tile[f * 4]) = v;  // row f / (BN/4), column (f % (BN/4)) * 4
}
