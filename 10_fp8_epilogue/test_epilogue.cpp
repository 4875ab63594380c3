// Chapter 10's host-side functions: the layout of the fine-grained scales (fp8_gemm.h), GELU
// (its form, its error over the whole range, its slope), the epilogue's band in shared memory
// (epilogue.cuh writes BF16 pairs at swizzle128_offset: no bank twice in one warp store), and
// step 11's partial tile in the workspace (TallVec, tall_vec.h).
#include <cmath>
#include <set>
#include <vector>

#include "10_fp8_epilogue/fp8_gemm.h"
#include "10_fp8_epilogue/tall_vec.h"
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

// The tanh form, in the form the kernels compute (x / (1 + e^(-2u))), against the textbook
// spelling where that does not cancel, and in the tails against a long double of the same form.
TEST(fp8_epilogue, gelu_tanh_values) {
  CHECK_EQ(gelu_tanh_ref(0.0), 0.0);
  for (double x = -2; x <= 10; x += 1.0 / 16) {  // 1 + tanh(u) does not cancel here
    const double u = kGeluC * (x + kGeluK * x * x * x);
    CHECK(std::fabs(gelu_tanh_ref(x) - 0.5 * x * (1 + std::tanh(u))) <= 1e-15 * (1 + std::fabs(x)));
  }
  for (double x = -12; x <= -2; x += 1.0 / 16) {  // the left tail: relative, to the last bits
    const long double u = kGeluC * (x + kGeluK * x * x * x);
    const long double want = x / (1.0L + std::exp(-2.0L * u));
    CHECK(std::fabs(gelu_tanh_ref(x) - double(want)) <= 1e-14 * std::fabs(double(want)));
    CHECK(gelu_tanh_ref(x) < 0);  // never rounded to 0 in double: gelu(-12) is about -1e-59
  }
  CHECK(std::fabs(gelu_tanh_ref(10.0) - 10.0) < 1e-12);  // far right, GELU is x
}

// kGeluMaxSlope bounds |gelu'(x)| everywhere (the check multiplies a pre-activation's error by it).
TEST(fp8_epilogue, gelu_slope_is_bounded) {
  double worst = 0;
  const double h = 1e-6;
  for (double x = -12; x <= 12; x += 1.0 / 1024)
    worst = std::fmax(worst, std::fabs(gelu_tanh_ref(x + h) - gelu_tanh_ref(x - h)) / (2 * h));
  CHECK(worst <= kGeluMaxSlope);
  CHECK(worst > 1.12);
}

// The FP32 function the kernels call (host spelling: libm's exp where the device takes the
// special-function unit; the GPU test gelu_range checks the device's) within kGeluRelErr of the
// reference over the whole range, tails included, and so within one BF16 ulp after rounding. The
// textbook spelling 0.5 x (1 + tanh(u)), even with a correctly rounded FP32 tanh, is not: at
// x = -5 it is 30 % off, at x = -6 it returns 0.
TEST(fp8_epilogue, gelu_tanh_relative_error) {
  double worst = 0;
  for (double x = -14; x <= 14; x += 1.0 / 512) {
    const float xf = float(x);
    const double want = gelu_tanh_ref(xf), got = gelu_tanh(xf);
    const double bound = kGeluRelErr * std::fabs(want) + kGeluFlush * std::fabs(xf);
    CHECK(std::fabs(got - want) <= bound);
    if (std::fabs(want) > 1e-30) worst = std::fmax(worst, std::fabs(got - want) / std::fabs(want));
    const double rounded = __bfloat162float(__float2bfloat16_rn(float(got)));
    CHECK(std::fabs(rounded - want) <= (1.0 / 256 + 2 * kGeluRelErr) * std::fabs(want) +
                                           2 * kGeluFlush * std::fabs(xf));
  }
  CHECK(worst < 1.0 / (1 << 15));  // measured here: 2^-16.8, at x near -8.9
  const auto cancelling = [](float x) {
    return 0.5f * x * (1.0f + std::tanh(float(kGeluC) * (x + float(kGeluK) * x * x * x)));
  };
  CHECK(std::fabs(cancelling(-5.0f) - gelu_tanh_ref(-5.0f)) > 0.25 * std::fabs(gelu_tanh_ref(-5.0f)));
  CHECK(cancelling(-6.0f) == 0.0f);  // gelu(-6) is -8.4e-11
}

// The two forms are two functions: at x = -2.5 they lie 7 BF16 steps apart, so a check that
// reaches the tails tells which one a library computes.
TEST(fp8_epilogue, gelu_forms_differ_in_the_tail) {
  const double t = gelu_tanh_ref(-2.5), e = gelu_erf_ref(-2.5);
  const double step = std::ldexp(1.0, std::ilogb(std::fabs(t)) - 7);  // BF16's ulp there
  CHECK(std::fabs(t - e) > 5 * step);
  CHECK(std::fabs(gelu_erf_ref(1.0) - 0.8413447460685429) < 1e-15);  // 1 * Phi(1)
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

TEST(fp8_epilogue, tall_partial_layout) {
  // TallVec (step 11): the floats of the workspace's float4 cover the (256, 128) tile once, each
  // where the accumulator map puts the register it came from (float f of float4 256 i + c is
  // register 4 (i % 16) + (f ^ 1) of slab i / 16 of consumer thread c: the pairs swapped), and
  // float4 256 i + c is float4 c, 8 (i % 16) columns right and 64 (i / 16) rows down.
  std::vector<int> seen(TallVec::kRows * TallVec::kCols, 0);
  for (int q = 0; q < TallVec::kVecs; ++q) {
    const int c = q % 256, i = q / 256;
    for (int f = 0; f < 4; ++f) {
      const int reg = 4 * (i % 16) + (f ^ 1);
      const int r = 128 * (c / 128) + 64 * (i / 16) + WgmmaAcc::row(c % 128, reg);
      const int k = WgmmaAcc::col(c % 128, reg);
      CHECK_EQ(TallVec::elem_row(q, f), r);
      CHECK_EQ(TallVec::elem_col(q, f), k);
      CHECK(r < TallVec::kRows && k < TallVec::kCols);
      if (r < TallVec::kRows && k < TallVec::kCols) ++seen[r * TallVec::kCols + k];
    }
    CHECK_EQ(TallVec::row(q), TallVec::row(c) + 64 * (i / 16));
    CHECK_EQ(TallVec::col(q), TallVec::col(c) + 8 * (i % 16));
  }
  for (int n : seen) CHECK_EQ(n, 1);
}
