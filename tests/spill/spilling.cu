// Not part of the tutorial: a kernel that must spill (64 live accumulators under the 32
// registers a thread gets with 1024 threads x 2 blocks per SM). tests/meson.build compiles it
// with the project's flags and expects the build to fail, proving the no-spill check works.
__global__ void __launch_bounds__(1024, 2) spilling_kernel(const float* x, float* y, int n) {
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
