// FP8 e4m3, for chapter 10: the conversions the harness quantizes with, and the amax scale.
// e4m3 (NVIDIA's __NV_E4M3, the OCP FP8 format of that name): 1 sign, 4 exponent (bias 7) and 3
// mantissa bits; no infinities; the largest finite magnitude is 448 (0x7E), the smallest
// subnormal 2^-9; S.1111.111 (0x7F, 0xFF) is NaN. Host and device; host-tested
// (tests/test_fp8.cpp: every code's round trip, rounding to nearest even, saturation, NaN).
#pragma once

#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>

constexpr float kE4m3Max = 448.0f;

// Round to nearest, ties to even, saturating (__NV_SATFINITE): beyond ±448, and ±infinity,
// become ±448; NaN stays NaN. Tensor-core inputs must not overflow to NaN.
__host__ __device__ inline uint8_t float_to_e4m3(float x) {
  return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
}

// Exact: every e4m3 value is a half (and a float).
__host__ __device__ inline float e4m3_to_float(uint8_t q) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(q, __NV_E4M3)));
}

// The scale that maps a block's largest magnitude (amax) onto 448, the top of e4m3's range:
// q = float_to_e4m3(x * scale) and x is about e4m3_to_float(q) / scale. A block of zeros (or
// one whose amax is not finite) gets 1.
__host__ __device__ inline float e4m3_scale(float amax) {
  return (amax > 0.0f && amax <= 3.4e38f) ? kE4m3Max / amax : 1.0f;
}
