// The host side of the guard zones around every verified output (common/matrix.h): which
// element of a guard was touched, the one nearest the output, and the line that reports it.
// The GPU side (a kernel that writes one element past the end fails) is the test
// 'gpu wrong_past_end must fail' (tests/wrong_kernels.cu).
//
//   ./build/tests/host_guard_tests guards
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/matrix.h"
#include "harness.h"

namespace {
constexpr size_t kN = 4096;  // the output's floats, as for a 64 x 64 C

struct Guards {
  std::vector<unsigned char> before = std::vector<unsigned char>(kGuardBytes, kGuardByte);
  std::vector<unsigned char> after = std::vector<unsigned char>(kGuardBytes, kGuardByte);
  std::optional<GuardTouch> check() const {
    return find_guard_touch(before.data(), after.data(), kGuardBytes, kN);
  }
};

void put_float(std::vector<unsigned char>& g, size_t element, float v) {
  std::memcpy(g.data() + element * sizeof(float), &v, sizeof v);
}

bool contains(const std::string& s, const char* part) {
  const bool ok = s.find(part) != std::string::npos;
  if (!ok) std::printf("  '%s' does not contain '%s'\n", s.c_str(), part);
  return ok;
}
}  // namespace

// The pattern is neither the poison (NaN) nor anything a kernel computes by accident, and the
// guards keep the output's alignment.
TEST(guards, pattern_and_size) {
  static_assert(kGuardByte != 0xFF, "the guard must differ from the NaN poison");
  static_assert(kGuardBytes % 256 == 0 && kGuardBytes >= 1024, "a real guard, 256-byte steps");
  float f;
  const uint32_t word = 0x01010101u * kGuardByte;
  std::memcpy(&f, &word, sizeof f);
  CHECK(std::isfinite(f));
  CHECK(f != 0.0f);
}

TEST(guards, untouched_guards_pass) {
  Guards g;
  CHECK(!g.check());
}

// One float past the end: C[n], its value reported.
TEST(guards, one_past_the_end) {
  Guards g;
  put_float(g.after, 0, 1.0f);
  const auto t = g.check();
  CHECK(t && !t->before && t->element == int64_t(kN) && t->bits == 0x3f800000u);
  if (t) {
    const std::string line = describe_guard_touch(*t, "C", kN);
    CHECK(contains(line, "guard after C touched: C[4096]"));
    CHECK(contains(line, "float 1 past its end"));
    CHECK(contains(line, "0x3f800000 (1)"));
  }
}

// A NaN written past the end (the poison's own bytes) is a touch too, and zero is.
TEST(guards, poison_and_zero_are_touches) {
  Guards g;
  g.after[kGuardBytes - 1] = 0xFF;
  auto t = g.check();
  CHECK(t && !t->before && t->element == int64_t(kN + kGuardBytes / 4 - 1));
  Guards z;
  put_float(z.after, 7, 0.0f);
  t = z.check();
  CHECK(t && t->element == int64_t(kN + 7) && t->bits == 0u);
}

// One byte of a float changed: the float holding it is reported, whole.
TEST(guards, a_partial_write_names_its_float) {
  Guards g;
  g.after[5] = 0x00;  // byte 1 of C[n + 1]
  const auto t = g.check();
  CHECK(t && t->element == int64_t(kN + 1) && t->bits == 0xA5A500A5u);
}

// Before the start: C[-1] is the last float of the before-guard; the nearest to C is reported.
TEST(guards, before_the_start) {
  Guards g;
  put_float(g.before, kGuardBytes / 4 - 1, -2.0f);  // C[-1]
  put_float(g.before, 0, 5.0f);                     // C[-1024], farther out
  const auto t = g.check();
  CHECK(t && t->before && t->element == -1 && t->bits == 0xc0000000u);
  if (t) {
    const std::string line = describe_guard_touch(*t, "out", kN);
    CHECK(contains(line, "guard before out touched: out[-1]"));
    CHECK(contains(line, "float 1 before its start"));
    CHECK(contains(line, "(-2)"));
  }
  Guards far;
  put_float(far.before, 0, 5.0f);
  const auto u = far.check();
  CHECK(u && u->before && u->element == -int64_t(kGuardBytes / 4));
}

// The nearest touched float after the end, not the last one.
TEST(guards, nearest_after_the_end) {
  Guards g;
  put_float(g.after, 900, 3.0f);
  put_float(g.after, 2, 4.0f);
  const auto t = g.check();
  CHECK(t && t->element == int64_t(kN + 2));
}
