// Chapter 10, step 2: bias_gelu. Step 1's kernel with a bias per column and GELU (the tanh form,
// written without cancellation: fp8_gemm.h, gelu_tanh) applied in registers before the BF16
// rounding:
//   D = gelu(alpha * A Bᵀ + beta * C + bias)
// The kernel is step 1's; only the epilogue functor is new. Unfused, the same result takes step
// 1's GEMM and then a kernel that reads D back, adds the bias, applies GELU and writes D again
// (bias_gelu_inplace_kernel, below): 4 more bytes an element of DRAM traffic, and a second launch.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel bias_gelu,unfused --size 4096 --bench
//   (read alone: the file holds the functor, not a copy of step 1's kernel)
//
// Included once, by 10_fp8_epilogue/kernels.cu (and, FP8_TEMPLATES_ONLY, by the exercise).
#pragma once

#include "10_fp8_epilogue/steps/1_bf16_out.cuh"

// gelu(step 1's value + bias(n)). The bias is read per column pair, once a tile (one 4-byte
// load for columns n and n + 1; zeros outside the matrix), before the bands are written.
struct BiasGelu {
  AlphaBeta ab;
  const __nv_bfloat16* bias;
  using Column = __nv_bfloat162;
  __device__ __forceinline__ Column column(int n) const {  // n is even
    if (n + 1 < ab.N) return __ldg(reinterpret_cast<const __nv_bfloat162*>(bias + n));
    const __nv_bfloat16 zero = __float2bfloat16_rn(0.0f);
    return __halves2bfloat162(n < ab.N ? bias[n] : zero, zero);
  }
  __device__ __forceinline__ float operator()(float acc, int m, int n, Column b, int i) const {
    return gelu_tanh(ab(acc, m, n) + __bfloat162float(i ? b.y : b.x));
  }
};

// The launchers the program lists (chapter10.h). The exercise's translation unit defines
// FP8_TEMPLATES_ONLY: it compiles the templates above with its own policy, and no launcher twice.
#ifndef FP8_TEMPLATES_ONLY

void launch_bias_gelu(const GemmProblem& p) {
  launch_bf16_out_with(p, BiasGelu{{p.alpha, p.beta, p.C, p.M, p.N}, p.bias});
}

// The unfused pair's second kernel: D = gelu(D + bias), 8 BF16 (16 bytes) a thread where the
// rows allow, element by element otherwise.
__global__ void bias_gelu_inplace_kernel(__nv_bfloat16* D, const __nv_bfloat16* __restrict__ bias,
                                         int M, int N) {
  const int64_t total = int64_t(M) * N;
  if (N % 8 == 0 && (reinterpret_cast<uintptr_t>(D) & 15) == 0) {
    for (int64_t i = 8 * (int64_t(blockIdx.x) * blockDim.x + threadIdx.x); i < total;
         i += 8 * int64_t(gridDim.x) * blockDim.x) {
      uint4 v = *reinterpret_cast<const uint4*>(D + i);
      __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&v);
      const int n = int(i % N);
#pragma unroll
      for (int u = 0; u < 8; ++u)
        e[u] = __float2bfloat16_rn(
            gelu_tanh(__bfloat162float(e[u]) + __bfloat162float(bias[n + u])));
      *reinterpret_cast<uint4*>(D + i) = v;
    }
  } else {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += int64_t(gridDim.x) * blockDim.x)
      D[i] = __float2bfloat16_rn(gelu_tanh(__bfloat162float(D[i]) + __bfloat162float(bias[i % N])));
  }
}

// The unfused pair: step 1's GEMM (alpha, beta, C), then the bias and GELU in a second kernel.
void launch_unfused(const GemmProblem& p) {
  launch_bf16_out(p);
  const int blocks = 4 * device_sm_count();  // a grid-stride loop: enough to fill the GPU
  bias_gelu_inplace_kernel<<<blocks, 256>>>(p.D, p.bias, p.M, p.N);
  CUDA_CHECK_LAUNCH();
}
#endif  // FP8_TEMPLATES_ONLY
