// Verification of a kernel's output against a reference (host only).
//
// Two tests, both must pass:
//   norm-wise     ||C - ref||_2 / ||ref||_2 <= max_rel_err
//   elementwise   |c - r| <= atol + rtol * |r|        for every element
// A NaN or Inf in the output never passes (the output is poisoned with NaN before each run,
// so an element a kernel forgets to write shows up as NaN).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

struct Tolerance {
  double atol = 0, rtol = 0, max_rel_err = 0;  // all zero: bit-exact comparison
};

// Tolerance for GEMM outputs whose K-term dot products were accumulated in a precision of
// unit roundoff `u` (2^-24 for FP32 accumulation) by two different summation orders.
// The rounding error of a K-term sum grows like u * sqrt(K) * rms(C) for random inputs, so the
// bounds scale with that; ref_rms is the root-mean-square of the reference.
Tolerance gemm_tolerance(double u, int K, double ref_rms);

// Unit roundoff of FP32 accumulation.
constexpr double kFp32Roundoff = 1.0 / (1 << 24);

// Tolerance for BF16 inputs accumulated in FP32 on tensor cores, against the exact product.
// Tensor cores add in FP32 but do not round to nearest: published analyses found truncation
// (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores", 2021). Every
// step then pushes the partial sum toward zero, so the errors add up linearly in K instead of
// cancelling like sqrt(K). Measured on an H100 (cuBLAS and a plain WMMA loop, K = 64 .. 2^20):
// ||C - exact|| / ||exact|| = 0.014 .. 0.020 u K, most of it a shrink toward zero, and the
// largest element error 0.06 .. 0.19 u K rms(C). The bounds allow 4x and 2.5x that, on top
// of gemm_tolerance's sqrt(K) terms (which dominate at small K).
Tolerance tensor_core_tolerance(int K, double ref_rms);

// The size of a typical single product term a(m,k) b(k,n) for inputs uniform in [-1, 1):
// E|a b| = 1/4. Where the elementwise bound exceeds it, one wrong term in one element can pass.
constexpr double kTypicalTerm = 0.25;

struct Mismatch {
  int row, col;
  double expected, got;
  double bound;  // the element's bound: |got - expected| may be at most this
};

struct VerifyResult {
  bool pass = false;
  double rel_err = 0;       // norm-wise relative error (inf if the output holds NaN/Inf)
  int64_t bad = 0;          // elements outside the elementwise bound (NaN/Inf included)
  int64_t nonfinite = 0;    // NaN or Inf in the output
  std::vector<Mismatch> first;  // the first few bad elements, in row-major order
  double rel_bound = 0;        // the norm-wise criterion: rel_err may be at most this
  bool norm_applied = true;    // false: too few elements for the norm-wise criterion (chapter 10)
  double worst_fraction = 0;   // the largest |got - expected| / bound over the finite elements
  std::string other;           // a criterion of the chapter's own that failed (chapter 10), or ""
};

// got and ref are rows x cols, row-major (leading dimension = cols).
VerifyResult verify(const float* got, const float* ref, int rows, int cols, const Tolerance& tol);

// Root-mean-square of n values.
double rms(const float* x, int64_t n);

// Names the criterion that failed, with both numbers: "kernel: FAIL: 12 element(s) beyond their
// bound (...)" and the first few, or "kernel: FAIL: norm-wise rel_err 0.53 > its bound 0.01".
void print_mismatches(FILE* f, const char* kernel, const VerifyResult& r);
