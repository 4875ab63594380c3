// Not part of the tutorial: a kernel that must spill (64 live accumulators under the 40
// registers a thread gets with 768 threads x 2 blocks per SM, which every GPU from sm_80 on
// holds). tests/spill/check_spill.py compiles it with the project's flags and expects ptxas to
// refuse it for spilling, proving the no-spill check works.
__global__ void __launch_bounds__(768, 2) spilling_kernel(const float* x, float* y, int n) {
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = x[threadIdx.x + i];
  for (int t = 0; t < n; ++t) {
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = fmaf(acc[i], acc[(i + 1) % 64], x[t]);
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 64; ++i) s += acc[i] * i;
  y[threadIdx.x] = s;
}
