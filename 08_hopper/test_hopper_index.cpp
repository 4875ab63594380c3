// Chapter 08's host tests, on the functions the kernels call, against the PTX ISA's rules: the
// 128-byte swizzle is a permutation of each 1024-byte atom that moves 16-byte chunks only within
// their row (c -> c ^ (r % 8)) and equals chapter 05's swizzled tile at BK = 64; the matrix
// descriptor puts each field where the ISA says; the wgmma accumulator map covers the (64, N)
// tile once and is mma.sync's C fragment per warp.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "shared/tensorcore/tensorcore.cuh"
#include "shared/hopper/hopper.cuh"
#include "common/access_model.h"
#include "harness.h"

TEST(hopper_index, swizzle128_is_the_isa_pattern) {
  std::vector<int> seen(kSwizzleAtomBytes / 16, 0);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) {
      const uint32_t off = swizzle128_offset(r, 8 * c);
      CHECK_EQ(off % 16, 0u);
      CHECK_EQ(off / 128, uint32_t(r));            // the chunk stays in its 128-byte row
      CHECK_EQ((off % 128) / 16, uint32_t(c ^ r));  // at position c ^ (r % 8)
      ++seen[off / 16];
    }
  for (int n : seen) CHECK_EQ(n, 1);
  // The next atom repeats the pattern 1024 bytes on; elements inside a chunk stay in order.
  CHECK_EQ(swizzle128_offset(9, 16), 1024 + swizzle128_offset(1, 16));
  CHECK_EQ(swizzle128_offset(3, 21), swizzle128_offset(3, 16) + 10);
}

TEST(hopper_index, swizzle128_is_chapter05s_tile_at_bk64) {
  using Tile = SmemTile<256, 64, TileLayout::kSwizzled>;
  for (int r = 0; r < 256; ++r)
    for (int k = 0; k < 64; ++k)
      CHECK_EQ(swizzle128_offset(r, k), uint32_t(2 * Tile::offset(r, k)));
}

TEST(hopper_index, descriptor_fields) {
  const uint64_t d = SmemDesc::k_major_sw128(0x12400);
  CHECK_EQ(d & 0x3FFF, uint64_t(0x12400 >> 4));      // start address >> 4, bits 0-13
  CHECK_EQ((d >> 16) & 0x3FFF, uint64_t(1));          // leading byte offset 16 >> 4
  CHECK_EQ((d >> 32) & 0x3FFF, uint64_t(1024 >> 4));  // stride byte offset: one 8-row atom
  CHECK_EQ((d >> 49) & 0x7, uint64_t(0));             // base offset: atoms 1024-byte aligned
  CHECK_EQ(d >> 62, uint64_t(1));                     // 128-byte swizzle
  CHECK_EQ(SmemDesc::start(d), 0x12400u);
  CHECK_EQ(SmemDesc::lbo(d), 16u);
  CHECK_EQ(SmemDesc::sbo(d), 1024u);
  CHECK_EQ(SmemDesc::swizzle(d), 1u);
  // The k16 steps of a tile: +32 bytes each, i.e. +2 in the start field, nothing else changes.
  for (int s = 0; s < 4; ++s)
    CHECK_EQ(SmemDesc::k_major_sw128(0x12400 + 32 * s) - d, uint64_t(2 * s));
  // Shared addresses are below 2^18 (228 KiB): the field holds all of them.
  CHECK_EQ(SmemDesc::start(SmemDesc::k_major_sw128(0x38FF0)), 0x38FF0u);
}

namespace {
template <int N>
bool acc_covers_tile_once() {
  std::vector<int> seen(64 * N, 0);
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < N / 2; ++r) {
      const int row = WgmmaAcc::row(t, r), col = WgmmaAcc::col(t, r);
      if (row < 0 || row >= 64 || col < 0 || col >= N) return false;
      if (seen[row * N + col]++) return false;
      // Per warp, per 8 columns: mma.sync's C fragment (chapter 05's Mma16816).
      const int lane = t % 32, j = r / 4, i = r % 4;
      if (row != 16 * (t / 32) + Mma16816::c_row(lane, i)) return false;
      if (col != 8 * j + Mma16816::c_col(lane, i)) return false;
    }
  return true;
}
}  // namespace

TEST(hopper_index, accumulator_map) {
  CHECK(acc_covers_tile_once<128>());
  CHECK(acc_covers_tile_once<256>());
  // Adjacent registers 2i, 2i + 1 are adjacent columns of one row (the 8-byte stores).
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < 128; r += 2) {
      CHECK_EQ(WgmmaAcc::row(t, r), WgmmaAcc::row(t, r + 1));
      CHECK_EQ(WgmmaAcc::col(t, r) + 1, WgmmaAcc::col(t, r + 1));
    }
}

TEST(hopper_index, staged_band_model) {
  // store_acc_staged: lane l writes the register pair of n8 tile jj, half h as 8 bytes at
  // (row l / 4 + 8 h, column 8 jj + 2 (l % 4)) of the band; then lane l reads float4 q = l + 32 i
  // at (row q / 8, column 4 (q % 8)). The model predicts the ideal wavefront count for both.
  for (int jj = 0; jj < kBandCols / 8; ++jj)
    for (int h = 0; h < 2; ++h) {
      uint32_t addr[32];
      for (int l = 0; l < 32; ++l) {
        const int r = 4 * jj + 2 * h;  // the register pair, as the kernel indexes it
        CHECK_EQ(WgmmaAcc::row(l, r), l / 4 + 8 * h);
        addr[l] = 4 * ((l / 4 + 8 * h) * kBandRow + 8 * jj + 2 * (l % 4));
      }
      CHECK_EQ(shared_wavefronts(addr, 32, 8), ideal_wavefronts(32, 8));
    }
  for (int i = 0; i < 16 * kBandCols / 4 / 32; ++i) {
    uint32_t addr[32];
    for (int l = 0; l < 32; ++l) {
      const int q = l + 32 * i;
      addr[l] = 4 * ((q / (kBandCols / 4)) * kBandRow + 4 * (q % (kBandCols / 4)));
    }
    CHECK_EQ(shared_wavefronts(addr, 32, 16), ideal_wavefronts(32, 16));
  }
}
