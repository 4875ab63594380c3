// Chapter 10's host-side functions: GELU (its form, its error over the whole range, its slope)
// and the epilogue's band in shared memory (epilogue.cuh writes BF16 pairs at swizzle128_offset:
// no bank twice in one warp store), and step 10's schedule (rounds.h). Chapter 11's:
// 11_block_scales/test_block_scales.cpp.
#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "10_fp8_epilogue/fp8_gemm.h"
#include "10_fp8_epilogue/rounds.h"
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

// Step 10's schedule (rounds.h), walked as the kernel walks it: every K tile of every tile exactly
// once; a block's slice in round r is one of round r's tiles (one slice a block a round, S blocks
// a tile); no more blocks than SMs; the busiest block's K tiles are rounds_makespan's.
TEST(fp8_epilogue, rounds_plan_covers_every_k_tile_once) {
  const int cases[][3] = {{352, 112, 132}, {544, 112, 132}, {38, 256, 132}, {1, 1, 132},
                          {1, 1000, 132},  {133, 7, 132},   {264, 50, 132}, {131, 3, 132},
                          {5, 2, 8},       {17, 9, 8},      {352, 112, 114}, {2, 3, 2}};
  for (const auto& c : cases) {
    const int T = c[0], I = c[1], G = c[2];
    const RoundsPlan p = plan_rounds(T, I, G, 2.4);
    CHECK(p.grid >= 1 && p.grid <= G);
    CHECK(p.split_tiles == 0 || (p.splits >= 2 && p.splits <= I && p.per_round * p.splits <= G));
    std::vector<int> seen(size_t(T) * I, 0);
    int64_t busiest = 0;
    for (int b = 0; b < p.grid; ++b) {
      int64_t mine = 0;
      for (int r = 0; r < rounds_count(p); ++r) {
        const WorkUnit u = rounds_slice(p, b, r);
        if (u.tile < 0) continue;
        CHECK(u.tile >= r * p.per_round && u.tile < (r + 1) * p.per_round && u.tile < p.split_tiles);
        CHECK(u.k_begin < u.k_end);  // never an empty slice
        for (int k = u.k_begin; k < u.k_end; k += u.k_step) ++seen[size_t(u.tile) * I + k];
        mine += unit_k_tiles(u);
      }
      for (int tile = p.split_tiles + b; tile < T; tile += p.grid) {
        for (int k = 0; k < I; ++k) ++seen[size_t(tile) * I + k];
        mine += I;
      }
      busiest = std::max(busiest, mine);
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int v) { return v == 1; }));
    CHECK_EQ(busiest, rounds_makespan(p));
  }
  // The shape the step is for: 4096 x 2112 x 7168 at 128 x 192 on 132 SMs.
  const RoundsPlan p = plan_rounds(32 * 11, 7168 / 64, 132, 2.4);
  CHECK_EQ(p.split_tiles, 88);
  CHECK_EQ(p.splits, 3);
  CHECK_EQ(p.per_round, 44);
  CHECK_EQ(rounds_count(p), 2);
  CHECK_EQ(rounds_makespan(p), int64_t(2 * 112 + 2 * 38));  // against 3 x 112 unsplit
  // Whole waves only: nothing split. 8192^3 (2752 tiles, 112 in the last wave): thinner slices
  // over more rounds would save 16 K tiles of 128 and cost more in partials, so none.
  CHECK_EQ(plan_rounds(264, 112, 132, 2.4).split_tiles, 0);
  CHECK_EQ(plan_rounds(64 * 43, 128, 132, 2.4).split_tiles, 0);
  // Without the partials' cost, 128 x 7168 x 16384 (38 tiles) would take 64 slices a tile over
  // 19 rounds; with it, thirds in one round.
  CHECK_EQ(plan_rounds(38, 256, 132, 0.0).splits, 64);
  CHECK_EQ(plan_rounds(38, 256, 132, 2.4).splits, 3);
}
