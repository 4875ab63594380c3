// Chapter 05: loading a (ROWS, BK) tile of a K-major BF16 operand, global -> registers ->
// shared, as every step of the chapter does (chapter 04's double buffering: load() issues the
// next tile's global loads into registers before the math, store() writes them to the other
// shared stage after it). One copy, included by the step files; a later chapter that keeps
// synchronous loads can include it too. Where each 16-byte piece lands is SmemTile's business
// (tensorcore.cuh, host-tested).
#pragma once

#include <cstdint>

#include "shared/tensorcore/tensorcore.cuh"

// Piece f (16 bytes, 8 BF16 along k) of the tile at (x0, k0): row f / (BK / 8), k (f % (BK/8)) * 8.
// One 128-bit load where the piece is inside the matrix and aligned; else element by element,
// with 0 outside rows or beyond k_end (which also zeroes the K tail of the last tile).
template <int BK>
__device__ __forceinline__ uint4 load_piece(const bf16* __restrict__ X, int rows, int ld, int x0,
                                            int k0, int k_end, int f, bool vec_ok) {
  const int x = x0 + f / (BK / 8), k = k0 + (f % (BK / 8)) * 8;
  const bf16* p = X + static_cast<int64_t>(x) * ld + k;
  if (vec_ok && x < rows && k + 8 <= k_end) return *reinterpret_cast<const uint4*>(p);
  // Element loads, 4 in flight at a time (8 make the largest configuration spill).
  const unsigned short* q = reinterpret_cast<const unsigned short*>(p);
  uint64_t lo = 0, hi = 0;  // elements 0..3, 4..7
#pragma unroll 4
  for (int e = 0; e < 8; ++e) {
    const uint64_t val = (x < rows && k + e < k_end) ? q[e] : 0;
    if (e < 4) lo |= val << (16 * e);
    else hi |= val << (16 * (e - 4));
  }
  return make_uint4(static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
                    static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32));
}

// The tile's pieces are shared out round-robin: thread tid loads pieces tid, tid + kThreads, ..
// Piece p of a thread is kThreads / (BK / 8) rows below its piece p - 1, at the same k.
template <int ROWS, int BK, TileLayout L, int kThreads>
struct TileLoader {
  static constexpr int kPieces = ROWS * BK / 8 / kThreads;  // per thread
  static constexpr int kRowsPerPass = kThreads / (BK / 8);
  static_assert(kThreads % (BK / 8) == 0, "every thread keeps the same k within the tile");
  uint4 v[kPieces];
  // Interior tiles (every row inside, every k below k_end, rows 16-byte aligned) take one
  // unconditional 128-bit load a piece; edge tiles go piece by piece through load_piece.
  __device__ __forceinline__ void load(const bf16* X, int rows, int ld, int x0, int k0, int k_end,
                                       bool vec_ok) {
    if (vec_ok && x0 + ROWS <= rows && k0 + BK <= k_end) {
      const int f = threadIdx.x;
      const bf16* p = X + static_cast<int64_t>(x0 + f / (BK / 8)) * ld + k0 + (f % (BK / 8)) * 8;
#pragma unroll
      for (int q = 0; q < kPieces; ++q)
        v[q] = *reinterpret_cast<const uint4*>(p + static_cast<int64_t>(q * kRowsPerPass) * ld);
    } else {
#pragma unroll
      for (int q = 0; q < kPieces; ++q)
        v[q] = load_piece<BK>(X, rows, ld, x0, k0, k_end, threadIdx.x + q * kThreads, vec_ok);
    }
  }
  // One 128-bit store a piece. A warp's 32 pieces are 512 consecutive bytes of the unpadded
  // tile; SmemTile decides where they land (test_tensorcore_index.cpp counts the wavefronts).
  __device__ __forceinline__ void store(bf16* tile) const {
#pragma unroll
    for (int p = 0; p < kPieces; ++p) {
      const int f = threadIdx.x + p * kThreads;
      const int r = f / (BK / 8), k = (f % (BK / 8)) * 8;
      *reinterpret_cast<uint4*>(&tile[SmemTile<ROWS, BK, L>::offset(r, k)]) = v[p];
    }
  }
};
