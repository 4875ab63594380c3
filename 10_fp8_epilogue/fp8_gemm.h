// Chapter 10: the problem every kernel of the chapter takes, the epilogue's arithmetic, and the
// layout of the fine-grained scales. Host and device (the host tests and the reference call the
// same functions as the kernels: test_epilogue.cpp).
//
//   D (M x N, BF16, row-major) = act(alpha * A Bᵀ + beta * C + bias)
//
// A (M x K) and Bᵀ (N x K) are K-major, as in chapters 05-09. They come in three forms: BF16
// (steps 1-2); FP8 e4m3 with one scale per tensor (steps 3-4); FP8 e4m3 with one scale per 1 x
// 128 of A and per 128 x 128 of Bᵀ (step 5, the recipe of the DeepSeek-V3 report). A scale here
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

// GELU, the tanh form (Hendrycks and Gimpel 2016, eq. 2 approximation):
//   gelu(x) = x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
// (cuBLASLt's CUBLASLT_EPILOGUE_GELU_BIAS does not say which form it computes, and BF16 outputs
// cannot tell the two apart: README.md, "Why").
// The kernels take tanh from the MUFU unit (tanh.approx.f32, a relative error near 2^-11, far
// below a BF16 output's half-ulp, 2^-9); the reference takes it in double.
constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluK = 0.044715;
inline double gelu_tanh_ref(double x) {
  return 0.5 * x * (1.0 + std::tanh(kGeluC * (x + kGeluK * x * x * x)));
}

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
  // Step 5: e4m3 codes quantised per block; a_dq_blk[a_scale_index], b_dq_blk[b_scale_index].
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
