// Chapter 10's host-side functions: GELU (its form, its error over the whole range, its slope)
// and the epilogue's band in shared memory (epilogue.cuh writes BF16 pairs at swizzle128_offset:
// no bank twice in one warp store). Chapter 11's: 11_block_scales/test_block_scales.cpp.
#include <cmath>
#include <set>
#include <vector>

#include "10_fp8_epilogue/fp8_gemm.h"
#include "harness.h"
#include "shared/hopper/hopper.cuh"  // swizzle128_offset, WgmmaAcc

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

// gelu_tanh_slope_ref is gelu's derivative (against a central difference), and below
// kGeluTailEdge |gelu'| grows with x, which the check's tail bound relies on (the interval's
// right end has the largest slope); it is 0, not NaN, where e^(-2u) overflows.
TEST(fp8_epilogue, gelu_tail_slope_grows) {
  for (double x = -12; x <= 6; x += 1.0 / 64) {
    const double h = 1e-5 * (1 + std::fabs(x));
    const double num = (gelu_tanh_ref(x + h) - gelu_tanh_ref(x - h)) / (2 * h);
    CHECK(std::fabs(gelu_tanh_slope_ref(x) - num) <= 1e-5 * std::fabs(num) + 1e-300);
  }
  double last = 0;
  for (double x = -40; x <= kGeluTailEdge; x += 1.0 / 256) {
    const double s = std::fabs(gelu_tanh_slope_ref(x));
    CHECK(s >= last);
    last = s;
  }
  CHECK(last < 0.1);                                // at x = -2: far below kGeluMaxSlope
  CHECK(gelu_tanh_slope_ref(-1000.0) == 0.0);       // e^(-2u) overflows: 0, not NaN
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
