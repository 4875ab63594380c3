// Chapter 07: copying one (ROWS, BK) tile of a K-major BF16 operand into a shared stage with
// cp.async, as every step of the chapter does. Device only; one copy, included by the step
// files. Which thread copies which piece is copy_piece (pipelined.cuh, host-tested).
#pragma once

#include <cstdint>

#include "07_pipelined/cp_async.cuh"
#include "shared/tensorcore/pipelined.cuh"

// Thread tid copies the pieces copy_piece<BK>(tid, p, kThreads), p = 0 .. kPieces - 1: rows
// row0 + p * kRowsPerPass at one k. Their shared offsets are one swizzled offset plus whole
// swizzle periods (kRowsPerPass rows = kThreads chunks, a multiple of 64: host-tested), so the
// per-piece state is one bit (row inside the matrix) and the copies need no branch.
// The rows must be 16-byte aligned (K % 8 == 0, aligned bases): the launchers pad them first.
template <int ROWS, int BK, int kThreads>
struct TileCopier {
  using Tile = SmemTile<ROWS, BK, TileLayout::kSwizzled>;
  static constexpr int kPieces = ROWS * BK / 8 / kThreads;
  static constexpr int kRowsPerPass = kThreads / (BK / 8);
  static_assert(kThreads % 64 == 0, "piece p + 1 is whole swizzle periods after piece p");
  const bf16* X;
  const bf16* src;      // this thread's piece 0 at the K range's first k
  int64_t pass;         // kRowsPerPass rows, in elements
  int k, dst0;          // the matrix column of this thread's pieces; piece 0's tile offset
  unsigned row_ok = 0;  // bit p: the row of piece p is inside the matrix

  // X: rows x ld; this block's tile starts at row x0; the K range at column k_begin.
  __device__ __forceinline__ TileCopier(const bf16* X_, int rows, int ld, int x0, int k_begin)
      : X(X_) {
    const CopyPiece c = copy_piece<BK>(threadIdx.x, 0, kThreads);
    const int x = x0 + c.row;
    k = k_begin + c.k;
    dst0 = Tile::offset(c.row, c.k);
    pass = int64_t(kRowsPerPass) * ld;
#pragma unroll
    for (int p = 0; p < kPieces; ++p) row_ok |= (x + p * kRowsPerPass < rows ? 1u : 0u) << p;
    src = X + int64_t(x) * ld + k;
  }
  // Pieces [p0, p1) of the K tile at k0 (from the K range's start) into `tile`. k_ok: the tile
  // exists and this thread's k is below the range's end (rows 16-byte aligned: K and the range
  // end are multiples of 8, so a piece is all in or all out). cp.async zero-fills a piece that
  // is not ok (src-size 0), reading nothing; it still gets a valid address, the matrix's.
  // p0, p1 are compile-time constants wherever the kernels call this (unrolled loops), so the
  // pieces outside them fold away.
  __device__ __forceinline__ void copy(uint32_t tile, int k0, bool k_ok, int p0 = 0,
                                       int p1 = kPieces) const {
    const uint32_t dst = tile + 2 * dst0;  // shared byte address of piece 0
    const bf16* q = src + k0 + p0 * pass;  // walked down the rows: one 64-bit add a piece
#pragma unroll
    for (int p = 0; p < kPieces; ++p) {
      if (p < p0 || p >= p1) continue;
      const bool ok = k_ok && (row_ok >> p & 1u);
      cp_async_16(dst + p * kRowsPerPass * BK * 2, ok ? q : X, ok ? 16 : 0);
      q += pass;
    }
  }
};
