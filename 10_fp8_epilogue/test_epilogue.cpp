// Chapter 10's host-side functions: the layout of the fine-grained scales (fp8_gemm.h), GELU's
// tanh form, and the epilogue's band in shared memory (epilogue.cuh writes BF16 pairs at
// swizzle128_offset: no bank twice in one warp store).
#include <cmath>
#include <set>
#include <vector>

#include "10_fp8_epilogue/fp8_gemm.h"
#include "harness.h"
#include "shared/hopper/hopper.cuh"  // swizzle128_offset, WgmmaAcc

TEST(fp8_scales, blocks_cover_every_element_once) {
  CHECK_EQ(scale_blocks(1), 1);
  CHECK_EQ(scale_blocks(128), 1);
  CHECK_EQ(scale_blocks(129), 2);
  // A: one scale per (row, K block), M-major, a bijection onto 0 .. count - 1; Bᵀ: one per
  // (128 rows, K block), K-major with rows of b_scale_ld(K) (a multiple of 4): one to one, inside.
  for (int M : {1, 7, 128, 300}) {
    for (int K : {1, 128, 129, 1000}) {
      std::set<int64_t> seen;
      for (int m = 0; m < M; ++m)
        for (int kb = 0; kb < scale_blocks(K); ++kb) seen.insert(a_scale_index(m, kb, M));
      CHECK_EQ(int64_t(seen.size()), int64_t(M) * scale_blocks(K));
      CHECK_EQ(*seen.rbegin(), int64_t(M) * scale_blocks(K) - 1);
      seen.clear();
      for (int nb = 0; nb < scale_blocks(M); ++nb)
        for (int kb = 0; kb < scale_blocks(K); ++kb) seen.insert(b_scale_index(nb, kb, K));
      CHECK_EQ(int64_t(seen.size()), int64_t(scale_blocks(M)) * scale_blocks(K));
      CHECK(*seen.rbegin() < int64_t(scale_blocks(M)) * b_scale_ld(K));
      CHECK_EQ(b_scale_ld(K) % 4, 0);
    }
  }
  // The 8 rows of one fragment column of A are 8 consecutive floats: one 32-byte sector.
  CHECK_EQ(a_scale_index(9, 3, 1000) - a_scale_index(1, 3, 1000), 8);
  // Bᵀ's K blocks of one row block are adjacent (cuBLASLt's BLK128x128_32F order).
  CHECK_EQ(b_scale_index(2, 5, 4096) - b_scale_index(2, 4, 4096), 1);
}

TEST(fp8_epilogue, gelu_tanh_values) {
  CHECK_EQ(gelu_tanh_ref(0.0), 0.0);
  // Far out, GELU is x (right) and 0 (left).
  CHECK(std::fabs(gelu_tanh_ref(10.0) - 10.0) < 1e-12);
  CHECK(std::fabs(gelu_tanh_ref(-10.0)) < 1e-12);
  // The tanh form stays within 5e-4 of the exact x Phi(x) (Hendrycks and Gimpel): a BF16 output
  // of magnitude near 1 has a half-ulp of 2^-9 = 2e-3, so the two forms round mostly alike.
  double worst = 0;
  for (double x = -6; x <= 6; x += 1.0 / 64) {
    const double exact = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    worst = std::fmax(worst, std::fabs(gelu_tanh_ref(x) - exact));
  }
  CHECK(worst < 5e-4);
  CHECK(worst > 1e-4);  // but they are two functions
}

TEST(fp8_epilogue, band_writes_meet_no_bank_twice) {
  // store_tile_bf16: lane l writes the BF16 pair of band row l / 4 + 8 h, band column
  // 8 jj + 2 (l % 4), 4 bytes at swizzle128_offset(row, col). One warp store (fixed h, jj) must
  // touch 32 different banks.
  for (int h = 0; h < 2; ++h)
    for (int jj = 0; jj < 8; ++jj) {
      std::set<int> banks;
      for (int lane = 0; lane < 32; ++lane) {
        const int row = lane / 4 + 8 * h, col = 8 * jj + 2 * (lane % 4);
        CHECK_EQ(WgmmaAcc::row(lane, 2 * h), row);  // the accumulator map the kernel relies on
        CHECK_EQ(WgmmaAcc::col(lane, 4 * jj + 2 * h) % 8, col % 8);
        banks.insert(int(swizzle128_offset(row, col) / 4 % 32));
      }
      CHECK_EQ(int(banks.size()), 32);
    }
  // Without the swizzle (rows of 128 bytes), the 8 rows of a store hit 8 times the same 4 banks.
  std::set<int> plain;
  for (int lane = 0; lane < 32; ++lane) plain.insert((lane / 4 * 128 + 4 * (lane % 4)) / 4 % 32);
  CHECK_EQ(int(plain.size()), 4);
}
