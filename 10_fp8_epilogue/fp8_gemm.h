// Chapters 10 and 11: the problem every kernel of the chapters takes, the epilogue's arithmetic, and the
// layout of the fine-grained scales. Host and device (the host tests and the reference call the
// same functions as the kernels: test_epilogue.cpp).
//
//   D (M x N, BF16, row-major) = act(alpha * A Bᵀ + beta * C + bias)
//
// A (M x K) and Bᵀ (N x K) are K-major, as in chapters 05-09. They come in three forms: BF16
// (steps 1-2); FP8 e4m3 with one scale per tensor (steps 3-4); FP8 e4m3 with one scale per 1 x
// 128 of A and per 128 x 128 of Bᵀ (chapter 11, the recipe of the DeepSeek-V3 report). A scale here
// is the factor that dequantises: x = e4m3_to_float(q) * dq (the quantiser multiplied by 1/dq:
// common/fp8.h, e4m3_scale). cuBLASLt's A and B "scale pointers" are the same factors.
#pragma once

#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

// One fine-grained scale covers kScaleBlock elements of K (and kScaleBlock rows of Bᵀ).
constexpr int kScaleBlock = 128;

__host__ __device__ constexpr int scale_blocks(int extent) {
  return (extent + kScaleBlock - 1) / kScaleBlock;
}
// A's scale for row m and K block kb: a_dq[a_scale_index(m, kb, M)]. M-major (the rows of one K
// block are adjacent), so the 8 rows a warp's lanes hold in a fragment column share one sector.
__host__ __device__ constexpr int64_t a_scale_index(int m, int kb, int M) {
  return int64_t(kb) * M + m;
}
// Bᵀ's scale for the 128 x 128 block of rows nb * 128 .. and K block kb: K-major, each row block's
// K blocks padded to a multiple of 4 (16 bytes). That is the layout cuBLASLt's BLK128x128_32F
// reads: the other order, or no padding, fails verification (NOTES.md, "cuBLASLt's scales").
__host__ __device__ constexpr int b_scale_ld(int K) { return (scale_blocks(K) + 3) / 4 * 4; }
__host__ __device__ constexpr int64_t b_scale_index(int nb, int kb, int K) {
  return int64_t(nb) * b_scale_ld(K) + kb;
}

// GELU, the tanh form (Hendrycks and Gimpel 2016, the approximation of their section 2):
//   gelu(x) = x / 2 * (1 + tanh(u)),  u = sqrt(2 / pi) * (x + 0.044715 x^3)
// computed as the same function written without a subtraction:
//   (1 + tanh(u)) / 2 = 1 / (1 + e^(-2u)),  so  gelu(x) = x / (1 + e^(-2u)).
// Written as 1 + tanh(u), the tail cancels: for x below about -3, tanh(u) is near -1 and the sum
// keeps only the bits of tanh's error (in FP32 with tanh.approx, 20 % off at x = -3; even in
// double, gelu(-10) came out 0 instead of -1.2e-37). Written with e^(-2u), nothing cancels: the
// error stays below 2^-16 of the result over the whole range, most of it the FP32 rounding of 2u
// times 2u (host test gelu_tanh_relative_error, GPU test gelu_range). Where e^(-2u) passes 2^126 (x below about
// -10, |gelu(x)| < |x| 2^-126, the smallest normal float) the device's reciprocal is flushed to 0:
// the one place the error is absolute, below 2^-122 (kGeluFlush).
//
// cuBLASLt's CUBLASLT_EPILOGUE_GELU_BIAS does not name its form in its documentation; the check
// tells the two apart in the tails (at x = -2.5 they are 7 BF16 steps apart; NOTES.md, "Which
// GELU cuBLASLt computes"). The erf form, gelu(x) = x Phi(x), is gelu_erf_ref.
constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluK = 0.044715;
// The device's GELU, relative to the exact function of its FP32 input, at most kGeluRelErr, or
// kGeluFlush * |x| where it flushes to zero. The largest part is the FP32 rounding of the
// exponent, which e^(-2u) multiplies by 2u (up to 87 before the flush): 87 * 2^-24 = 2^-17.6. The
// host test measures 2^-16.8 with libm's exp2; the GPU test (gelu_range) the device's own; 2^-14 leaves
// room and is still 64 times below a BF16 output's half-ulp (2^-8).
constexpr double kGeluRelErr = 1.0 / (1 << 14);
constexpr double kGeluFlush = 1.1754943508222875e-38;  // 2^-126
// The exponent with its constants folded: e^(-2u) = 2^z, z = x (a + b x^2), a = -2 sqrt(2/pi)
// log2(e), b = 0.044715 a. One FMUL, one FFMA and one FMUL before ex2 and the reciprocal, then
// x times it: 5 FP32 operations and 2 MUFU an element. Spelled 2u = 2c (x + k x^3) with __expf and
// __fdividef it took 7 FMUL, an FFMA, an FSETP and an FADD (their scaling and range tests; Nsight
// Compute's instruction counts, NOTES.md "GELU's constants folded"). The rounding of a and b adds
// 2^-24 |z| to z's error: the same order as 2u's own, inside kGeluRelErr.
constexpr double kGeluA = -2.0 * kGeluC * 1.4426950408889634;  // log2(e) = 1.4427
constexpr double kGeluB = kGeluA * kGeluK;
__host__ __device__ inline float gelu_tanh(float x) {
  const float z = x * fmaf(float(kGeluB), x * x, float(kGeluA));  // -2u log2(e)
#ifdef __CUDA_ARCH__
  // ex2 of z >= 128 is +inf and rcp(inf) = 0; past z = 126 the reciprocal is below 2^-126 and
  // .ftz flushes it to 0: the flush kGeluFlush bounds.
  float e, r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(z));
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.0f + e));
  return x * r;
#else
  return x / (1.0f + std::exp2(z));
#endif
}
// The same form in double: the check's reference.
inline double gelu_tanh_ref(double x) {
  return x / (1.0 + std::exp(-2.0 * kGeluC * (x + kGeluK * x * x * x)));
}
// The erf form: x Phi(x), Phi the standard normal CDF (erfc: no cancellation in the left tail).
inline double gelu_erf_ref(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
// The largest |gelu'(x)| of the tanh form, over all x (at x near 2.1; the erf form's is 1.129
// too): an error e in x moves gelu(x) by at most 1.13 e.
constexpr double kGeluMaxSlope = 1.13;
// gelu'(x) of the tanh form: s + x s (1 - s) 2u'(x), s = 1 / (1 + e^(-2u)). Below kGeluTailEdge
// |gelu'| grows with x (host test gelu_tail_slope_grows), so on an interval there it is largest
// at the right end: the check bounds a tail element's error with that slope, not with
// kGeluMaxSlope, which near x = -5 (|gelu'| about 1.6e-6) would let any output within 1.13 times
// the pre-activation's error of 0 pass, a GELU that cancels to 0 included.
inline double gelu_tanh_slope_ref(double x) {
  const double e = std::exp(-2.0 * kGeluC * (x + kGeluK * x * x * x));
  if (!std::isfinite(e)) return 0.0;  // e^(-2u) overflows: s and the slope are below 1e-300
  const double s = 1.0 / (1.0 + e), du2 = 2.0 * kGeluC * (1.0 + 3.0 * kGeluK * x * x);
  return s + x * s * (e * s) * du2;  // 1 - s = e s
}
constexpr double kGeluTailEdge = -2.0;

// What the program hands a launcher: every operand form, the epilogue's inputs, and D.
struct GemmProblem {
  int M = 0, N = 0, K = 0;
  // Steps 1-2: BF16.
  const __nv_bfloat16* A = nullptr;
  const __nv_bfloat16* Bt = nullptr;
  // Steps 3-4: e4m3 codes; a_dq, b_dq point to one float each (on the GPU).
  const uint8_t* qA = nullptr;
  const uint8_t* qBt = nullptr;
  const float* a_dq = nullptr;
  const float* b_dq = nullptr;
  // Chapter 11: e4m3 codes quantised per block; a_dq_blk[a_scale_index], b_dq_blk[b_scale_index].
  const uint8_t* qA_blk = nullptr;
  const uint8_t* qBt_blk = nullptr;
  const float* a_dq_blk = nullptr;
  const float* b_dq_blk = nullptr;
  // The epilogue. beta == 0: C is not read (cuBLAS's rule too). bias: N values, read by the
  // launchers whose epilogue has one (the kernel, not a flag, says whether GELU is applied).
  float alpha = 1.0f, beta = 0.0f;
  const __nv_bfloat16* C = nullptr;
  const __nv_bfloat16* bias = nullptr;
  __nv_bfloat16* D = nullptr;
};

using GemmLauncher10 = void (*)(const GemmProblem& p);
