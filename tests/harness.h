// A very small test harness for the host tests: TEST(group, name) registers a test, CHECK and
// CHECK_EQ record failures. Run all: ./host_tests; one group: ./host_tests verify
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

struct TestCase {
  const char* group;
  const char* name;
  std::function<void()> body;
};

inline std::vector<TestCase>& test_registry() {
  static std::vector<TestCase> r;
  return r;
}
inline int& test_failures() {
  static int n = 0;
  return n;
}

struct TestRegistrar {
  TestRegistrar(const char* g, const char* n, std::function<void()> f) {
    test_registry().push_back({g, n, std::move(f)});
  }
};

#define TEST(group, name)                                                         \
  static void test_##group##_##name();                                            \
  static TestRegistrar registrar_##group##_##name(#group, #name, test_##group##_##name); \
  static void test_##group##_##name()

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::printf("  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);          \
      ++test_failures();                                                              \
    }                                                                                 \
  } while (0)

#define CHECK_EQ(a, b)                                                                \
  do {                                                                                \
    auto va_ = (a);                                                                   \
    auto vb_ = (b);                                                                   \
    if (!(va_ == vb_)) {                                                              \
      std::printf("  %s:%d: CHECK_EQ(%s, %s) failed: %s vs %s\n", __FILE__, __LINE__, #a, #b, \
                  std::to_string(va_).c_str(), std::to_string(vb_).c_str());          \
      ++test_failures();                                                              \
    }                                                                                 \
  } while (0)
