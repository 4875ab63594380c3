#include "verify.h"

#include <cmath>
#include <limits>

Tolerance gemm_tolerance(double u, int K, double ref_rms) {
  // Typical error of one order vs another is ~0.7 u sqrt(K) rms(C); the elementwise bound
  // allows 8x that (the largest of millions of elements sits several sigmas out), the
  // norm-wise bound 4x. A wrong or missing term of the sum is O(rms(C) / sqrt(K)), far above.
  double s = std::sqrt(static_cast<double>(K));
  Tolerance t;
  t.atol = 8.0 * u * s * ref_rms + std::numeric_limits<float>::denorm_min();
  t.rtol = 8.0 * u;
  t.max_rel_err = 4.0 * u * s;
  return t;
}

Tolerance tensor_core_tolerance(int K, double ref_rms) {
  const double u = kFp32Roundoff, k = static_cast<double>(K);
  Tolerance t = gemm_tolerance(u, K, ref_rms);
  t.atol += 0.5 * u * k * ref_rms;
  t.max_rel_err += 0.08 * u * k;
  return t;
}

double rms(const float* x, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return n ? std::sqrt(sum / n) : 0.0;
}

VerifyResult verify(const float* got, const float* ref, int rows, int cols, const Tolerance& tol) {
  VerifyResult r;
  double diff2 = 0, ref2 = 0;
  const int64_t n = static_cast<int64_t>(rows) * cols;
  for (int64_t i = 0; i < n; ++i) {
    double g = got[i], e = ref[i];
    bool finite = std::isfinite(g) && std::isfinite(e);
    if (!std::isfinite(g)) ++r.nonfinite;
    double d = std::fabs(g - e);
    // Written so that NaN fails: a comparison with NaN is false.
    const double bound = tol.atol + tol.rtol * std::fabs(e);
    bool ok = finite && d <= bound;
    if (!ok) {
      ++r.bad;
      if (r.first.size() < 5)
        r.first.push_back({static_cast<int>(i / cols), static_cast<int>(i % cols), e, g, bound});
    }
    if (finite) {
      diff2 += d * d;
      ref2 += e * e;
      if (bound > 0) r.worst_fraction = std::fmax(r.worst_fraction, d / bound);
    }
  }
  if (r.nonfinite > 0) {
    r.rel_err = std::numeric_limits<double>::infinity();
  } else if (ref2 > 0) {
    r.rel_err = std::sqrt(diff2 / ref2);
  } else {
    r.rel_err = diff2 > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  r.rel_bound = tol.max_rel_err;
  r.pass = r.bad == 0 && r.rel_err <= tol.max_rel_err;
  return r;
}

void print_mismatches(FILE* f, const char* kernel, const VerifyResult& r) {
  const bool norm_failed = r.norm_applied && !(r.rel_err <= r.rel_bound);
  if (r.bad > 0) {
    std::fprintf(f, "%s: FAIL: %lld element(s) beyond their bound (%lld NaN/Inf; the worst finite "
                 "one at %.3g of its bound); norm-wise rel_err %.3g, its bound %.3g%s\n",
                 kernel, static_cast<long long>(r.bad), static_cast<long long>(r.nonfinite),
                 r.worst_fraction, r.rel_err, r.rel_bound,
                 !r.norm_applied ? " (not applied: too few elements)"
                 : norm_failed  ? " (failed too)"
                                : " (held)");
  } else if (!norm_failed && !r.other.empty()) {
    std::fprintf(f, "%s: FAIL: %s (every element within its bound; norm-wise rel_err %.3g, its "
                 "bound %.3g)\n", kernel, r.other.c_str(), r.rel_err, r.rel_bound);
  } else {
    std::fprintf(f, "%s: FAIL: norm-wise rel_err %.3g > its bound %.3g (every element within "
                 "its own bound; the worst at %.3g of it)\n",
                 kernel, r.rel_err, r.rel_bound, r.worst_fraction);
  }
  for (const auto& m : r.first)
    std::fprintf(f, "  (row %d, col %d): expected %.8g, got %.8g, off by %.3g, bound %.3g\n",
                 m.row, m.col, m.expected, m.got, std::fabs(m.got - m.expected), m.bound);
}
