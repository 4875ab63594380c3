// Chapter 06: the parts of split-K that do not depend on the base kernel: the reduction of the
// workspace, the workspace itself, the SM count. See splitk.cuh.
#include "shared/tensorcore/splitk.cuh"

#include "common/matrix.h"

namespace {
constexpr int kReduceThreads = 128;  // one element of C per thread: M N / 128 small blocks
}

// C[i] = ws[0][i] + ws[1][i] + ... + ws[S-1][i], added in that order whatever the launch, so the
// result is the same bits on every run. One element per thread: for the skinny shapes split-K is
// for, M N is small (65,536 at 256 x 256), and one float4 per thread would leave most SMs idle.
// A warp reads 32 consecutive floats of one slice per load (128 bytes, coalesced); the loop is
// unrolled so that several slices' loads are in flight before the adds consume them in order.
__global__ void __launch_bounds__(kReduceThreads)
    splitk_reduce_kernel(int64_t MN, int S, const float* __restrict__ ws, float* __restrict__ C) {
  const int64_t i = int64_t(blockIdx.x) * kReduceThreads + threadIdx.x;
  if (i >= MN) return;
  const float* p = ws + i;
  float sum = 0.0f;
  int s = 0;
  for (; s + 8 <= S; s += 8) {
    float v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = p[int64_t(s + j) * MN];  // 8 loads in flight
#pragma unroll
    for (int j = 0; j < 8; ++j) sum += v[j];  // added strictly in slice order
  }
  for (; s < S; ++s) sum += p[int64_t(s) * MN];
  C[i] = sum;
}

void launch_splitk_reduce(int M, int N, int S, const float* ws, float* C) {
  const int64_t MN = int64_t(M) * N;
  splitk_reduce_kernel<<<unsigned((MN + kReduceThreads - 1) / kReduceThreads), kReduceThreads>>>(
      MN, S, ws, C);
  CUDA_CHECK_LAUNCH();
}

float* splitk_workspace(size_t bytes) {
  static DeviceBuffer<char> ws;
  return reinterpret_cast<float*>(ws.reserve(bytes));
}
