// The FP8 e4m3 conversions of common/fp8.h, which chapter 10's harness quantizes with.
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/fp8.h"
#include "common/matrix.h"  // random_uniform
#include "harness.h"

namespace {
bool is_nan_code(int q) { return (q & 0x7F) == 0x7F; }
}  // namespace

TEST(fp8, every_code_round_trips) {
  // Each of the 254 finite codes decodes to a value that encodes back to the same code.
  for (int q = 0; q < 256; ++q) {
    if (is_nan_code(q)) continue;
    const float x = e4m3_to_float(uint8_t(q));
    CHECK(std::isfinite(x));
    CHECK_EQ(int(float_to_e4m3(x)), q);
  }
  // The finite positive codes increase with the code; 0x7E is 448, 0x01 is 2^-9.
  for (int q = 1; q < 0x7F; ++q) CHECK(e4m3_to_float(uint8_t(q)) > e4m3_to_float(uint8_t(q - 1)));
  CHECK_EQ(e4m3_to_float(0x7E), 448.0f);
  CHECK_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  CHECK_EQ(e4m3_to_float(0xFE), -448.0f);
}

TEST(fp8, saturates_at_448) {
  for (float x : {448.0f, 449.0f, 464.0f, 1000.0f, 1e30f, std::numeric_limits<float>::infinity()}) {
    CHECK_EQ(int(float_to_e4m3(x)), 0x7E);
    CHECK_EQ(int(float_to_e4m3(-x)), 0xFE);
  }
}

TEST(fp8, nan_stays_nan) {
  CHECK(is_nan_code(float_to_e4m3(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isnan(e4m3_to_float(0x7F)));
  CHECK(std::isnan(e4m3_to_float(0xFF)));
}

TEST(fp8, rounds_to_nearest_even) {
  // 1 is 0x38 (mantissa 000), 1.125 is 0x39 (001), 1.25 is 0x3A (010).
  CHECK_EQ(int(float_to_e4m3(1.0625f)), 0x38);   // halfway: to the even mantissa, 1
  CHECK_EQ(int(float_to_e4m3(1.1875f)), 0x3A);   // halfway: to the even mantissa, 1.25
  CHECK_EQ(int(float_to_e4m3(1.0626f)), 0x39);   // past halfway: up
  // Across the normal range (2^-6 to below 2^8 here) the error is at most half a unit in the
  // last place: 2^-4 of the value.
  int worse = 0;
  for (int i = 0; i < 100000; ++i) {
    const float x = std::ldexp(1.0f + 0.5f * (random_uniform(7, i) + 1.0f), (i % 14) - 6);
    const float y = e4m3_to_float(float_to_e4m3(x));
    worse += std::fabs(y - x) > std::ldexp(std::fabs(x), -4);
  }
  CHECK_EQ(worse, 0);
}

TEST(fp8, amax_scale_maps_the_largest_onto_448) {
  for (float amax : {1e-3f, 0.5f, 3.0f, 1000.0f}) {
    const float s = e4m3_scale(amax);
    CHECK_EQ(int(float_to_e4m3(amax * s)), 0x7E);
    CHECK(std::fabs(e4m3_to_float(float_to_e4m3(amax * s)) / s - amax) <= 1e-6f * amax);
  }
  CHECK_EQ(e4m3_scale(0.0f), 1.0f);
  CHECK_EQ(e4m3_scale(std::numeric_limits<float>::infinity()), 1.0f);
}
