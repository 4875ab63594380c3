// Verification must catch what it exists to catch; a check that cannot fail is a defect.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/matrix.h"
#include "common/reference.h"
#include "common/verify.h"
#include "harness.h"

namespace {
std::vector<float> random_matrix(int n, uint64_t seed) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = random_uniform(seed, i);
  return v;
}
}  // namespace

TEST(verify, identical_passes) {
  auto ref = random_matrix(64 * 48, 1);
  auto r = verify(ref.data(), ref.data(), 64, 48, gemm_tolerance(kFp32Roundoff, 100, 1.0));
  CHECK(r.pass);
  CHECK_EQ(r.bad, int64_t{0});
  CHECK(r.rel_err == 0.0);
}

TEST(verify, exact_tolerance_catches_one_ulp) {
  auto ref = random_matrix(32 * 32, 2);
  auto got = ref;
  got[5 * 32 + 7] = std::nextafter(got[5 * 32 + 7], 2.0f);
  auto r = verify(got.data(), ref.data(), 32, 32, Tolerance{});
  CHECK(!r.pass);
  CHECK_EQ(r.bad, int64_t{1});
  CHECK(r.first.size() == 1 && r.first[0].row == 5 && r.first[0].col == 7);
}

TEST(verify, planted_wrong_element_is_caught) {
  // A realistic GEMM-sized output: rms ~ sqrt(K)/3; one element off by a single product term.
  const int rows = 256, cols = 256, K = 4096;
  auto ref = random_matrix(rows * cols, 3);
  for (auto& x : ref) x *= std::sqrt(float(K)) / 3;
  auto got = ref;
  got[100 * cols + 200] += 0.25f;  // one missing a*b term is of this order
  auto tol = gemm_tolerance(kFp32Roundoff, K, rms(ref.data(), ref.size()));
  auto r = verify(got.data(), ref.data(), rows, cols, tol);
  CHECK(!r.pass);
  CHECK_EQ(r.bad, int64_t{1});
  CHECK(r.first.size() == 1 && r.first[0].row == 100 && r.first[0].col == 200);
}

TEST(verify, rounding_noise_passes) {
  // Perturb every element by a relative 2^-22 (a few ulps): an honest reordering of the sum.
  const int rows = 128, cols = 96, K = 1024;
  auto ref = random_matrix(rows * cols, 4);
  for (auto& x : ref) x *= 10.0f;
  auto got = ref;
  for (size_t i = 0; i < got.size(); ++i) got[i] *= 1.0f + ((i % 3) - 1.0f) * 0x1p-22f;
  auto r = verify(got.data(), ref.data(), rows, cols,
                  gemm_tolerance(kFp32Roundoff, K, rms(ref.data(), ref.size())));
  CHECK(r.pass);
}

TEST(verify, unwritten_poisoned_element_is_caught) {
  auto ref = random_matrix(16 * 16, 5);
  auto got = ref;
  uint32_t all_ones = 0xFFFFFFFFu;  // what poison() writes: a NaN
  std::memcpy(&got[3 * 16 + 4], &all_ones, sizeof all_ones);
  auto r = verify(got.data(), ref.data(), 16, 16, gemm_tolerance(kFp32Roundoff, 16, 1.0));
  CHECK(!r.pass);
  CHECK_EQ(r.nonfinite, int64_t{1});
  CHECK(std::isinf(r.rel_err));
}

TEST(verify, nan_and_inf_never_pass_even_with_huge_tolerance) {
  std::vector<float> ref = {1, 2, 3, 4};
  Tolerance loose{1e30, 1e30, 1e30};
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    auto got = ref;
    got[2] = bad;
    CHECK(!verify(got.data(), ref.data(), 2, 2, loose).pass);
  }
  // A NaN in the reference fails too: a broken reference must not bless anything.
  auto got = ref;
  auto bad_ref = ref;
  bad_ref[0] = std::numeric_limits<float>::quiet_NaN();
  CHECK(!verify(got.data(), bad_ref.data(), 2, 2, loose).pass);
}

TEST(verify, elementwise_bound_is_inclusive_at_the_boundary) {
  // |got - ref| <= atol + rtol * |ref|: with atol = 0.5, rtol = 0.25, ref = 2 the bound is 1.
  Tolerance t{0.5, 0.25, 1e9};
  float ref = 2.0f;
  float at = 3.0f;                            // exactly on the bound: passes
  float beyond = std::nextafter(3.0f, 4.0f);  // one ulp beyond: fails
  CHECK(verify(&at, &ref, 1, 1, t).pass);
  CHECK(!verify(&beyond, &ref, 1, 1, t).pass);
}

TEST(verify, normwise_bound_is_enforced) {
  // Every element within its elementwise bound, but the norm-wise error too large.
  std::vector<float> ref(100, 1.0f), got(100, 1.01f);
  Tolerance t{0.1, 0.0, 0.005};
  auto r = verify(got.data(), ref.data(), 10, 10, t);
  CHECK_EQ(r.bad, int64_t{0});
  CHECK(!r.pass);
  CHECK(std::fabs(r.rel_err - 0.01) < 1e-6);
}

TEST(verify, tolerance_grows_with_k) {
  auto small = gemm_tolerance(kFp32Roundoff, 16, 1.0);
  auto large = gemm_tolerance(kFp32Roundoff, 16384, 1.0);
  CHECK(large.atol > small.atol * 31 && large.atol < small.atol * 33);  // sqrt(1024) = 32
  CHECK(large.max_rel_err > small.max_rel_err);
}

TEST(reference, cpu_gemm_matches_hand_computed_product) {
  // [1 2 3]   [ 7  8]   [ 58  64]
  // [4 5 6] x [ 9 10] = [139 154]
  //           [11 12]
  const float A[] = {1, 2, 3, 4, 5, 6};
  const float B[] = {7, 8, 9, 10, 11, 12};
  float C[4] = {};
  cpu_gemm(2, 2, 3, A, B, C);
  CHECK(C[0] == 58 && C[1] == 64 && C[2] == 139 && C[3] == 154);
}

TEST(reference, cpu_gemm_handles_degenerate_shapes) {
  const float A[] = {2, 3};      // 2 x 1
  const float B[] = {5, 7, 11};  // 1 x 3
  float C[6] = {};
  cpu_gemm(2, 3, 1, A, B, C);    // outer product
  CHECK(C[0] == 10 && C[1] == 14 && C[2] == 22 && C[3] == 15 && C[4] == 21 && C[5] == 33);
}

TEST(matrix, random_inputs_are_in_range_and_not_constant) {
  double sum = 0, sum2 = 0;
  const int n = 100000;
  float lo = 1, hi = -1;
  for (int i = 0; i < n; ++i) {
    float x = random_uniform(42, i);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
    sum2 += double(x) * x;
  }
  CHECK(lo >= -1.0f && hi < 1.0f);
  CHECK(hi - lo > 1.99f);                        // spans the range
  CHECK(std::fabs(sum / n) < 0.01);              // mean ~ 0
  CHECK(std::fabs(sum2 / n - 1.0 / 3) < 0.01);   // variance of U(-1, 1) = 1/3
  CHECK(random_uniform(42, 7) != random_uniform(43, 7));  // the seed matters
  CHECK(random_uniform(42, 7) == random_uniform(42, 7));  // and is reproducible
}
