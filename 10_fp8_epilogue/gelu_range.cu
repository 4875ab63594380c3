// GELU on the GPU over its whole range: the device's gelu_tanh (fp8_gemm.h: x / (1 + e^(-2u)),
// ex2.approx and rcp.approx) against the double reference of the same form, at every BF16 value
// in [-16, 16] and at 2^20 evenly spaced floats in [-12, 12]. Fails (exit 1) where an error
// passes kGeluRelErr |gelu(x)| + kGeluFlush |x| before the BF16 rounding, or one BF16 ulp after
// it. It also evaluates the textbook spelling 0.5 x (1 + tanh.approx(u)) and prints its worst
// relative error in the left tail, to show what the check would have said of it.
//
//   ./build/10_fp8_epilogue/gelu_range        (exit 77 without a GPU)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <cstdio>
#include <vector>

#include "10_fp8_epilogue/fp8_gemm.h"

__device__ float gelu_cancelling(float x) {
  const float u = float(kGeluC) * (x + float(kGeluK) * x * x * x);
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
  return 0.5f * x * (1.0f + t);
}

__global__ void gelu_kernel(const float* x, float* y, float* y_cancelling, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    y[i] = gelu_tanh(x[i]);
    y_cancelling[i] = gelu_cancelling(x[i]);
  }
}

#define CHECK_CUDA(call)                                                              \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "gelu_range: %s: %s\n", #call, cudaGetErrorString(e_));   \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "gelu_range: no usable CUDA device; skipping\n");
    return 77;
  }
  std::vector<float> x;
  for (unsigned b = 0; b < 65536; ++b) {  // every BF16 value in [-16, 16]
    const unsigned bits = b << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    if (std::isfinite(v) && std::fabs(v) <= 16) x.push_back(v);
  }
  for (int i = 0; i <= (1 << 20); ++i) x.push_back(-12.0f + 24.0f * float(i) / float(1 << 20));
  const int n = int(x.size());
  float *dx, *dy, *dc;
  CHECK_CUDA(cudaMalloc(&dx, n * 4));
  CHECK_CUDA(cudaMalloc(&dy, n * 4));
  CHECK_CUDA(cudaMalloc(&dc, n * 4));
  CHECK_CUDA(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
  gelu_kernel<<<256, 256>>>(dx, dy, dc, n);
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> y(n), yc(n);
  CHECK_CUDA(cudaMemcpy(y.data(), dy, n * 4, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(yc.data(), dc, n * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  double worst = 0, worst_x = 0, worst_c = 0, worst_c_x = 0;
  for (int i = 0; i < n; ++i) {
    const double want = gelu_tanh_ref(x[i]), got = y[i];
    // + 2^-149, FP32's least step: where x is subnormal, x / 2 is rounded to it.
    const double bound = kGeluRelErr * std::fabs(want) + kGeluFlush * std::fabs(x[i]) + 0x1p-149;
    const double rounded = __bfloat162float(__float2bfloat16_rn(y[i]));
    const bool ok = std::fabs(got - want) <= bound &&
                    std::fabs(rounded - want) <= (1.0 / 256 + 2 * kGeluRelErr) * std::fabs(want) +
                                                      2 * kGeluFlush * std::fabs(x[i]) + 0x1p-133;
    if (!ok && bad++ < 5)
      std::fprintf(stderr, "gelu_range: x = %.9g: gelu %.9g, got %.9g (bound %.3g)\n", x[i], want,
                   got, bound);
    if (std::fabs(want) > 1e-30) {
      const double e = std::fabs(got - want) / std::fabs(want);
      if (e > worst) worst = e, worst_x = x[i];
      const double ec = std::fabs(yc[i] - want) / std::fabs(want);
      if (x[i] <= -3 && ec > worst_c) worst_c = ec, worst_c_x = x[i];
    }
  }
  std::printf("gelu_range: %d values in [-16, 16]; worst relative error %.3g (2^%.1f) at x = %g; "
              "bound %.3g (2^%.0f)\n", n, worst, std::log2(worst), worst_x, kGeluRelErr,
              std::log2(kGeluRelErr));
  std::printf("gelu_range: the cancelling spelling 0.5 x (1 + tanh.approx(u)), for x <= -3: worst "
              "relative error %.3g at x = %g\n", worst_c, worst_c_x);
  if (bad) {
    std::printf("gelu_range: FAIL: %d value(s) beyond the bound (per element: kGeluRelErr |gelu| + "
                "kGeluFlush |x|, and one BF16 ulp after rounding)\n", bad);
    return 1;
  }
  std::printf("gelu_range: PASS\n");
  return 0;
}
