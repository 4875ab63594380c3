// Chapter 02, step 2: copy_vec. The matrix is one contiguous array, so a copy needs no tiles
// and no 2D indexing: each thread moves a float4 (16 bytes, 512 per warp instruction, 16
// sectors) and strides through the array with a grid sized to fill the GPU once.
//
//   ./build/02_transpose_copy/transpose --kernel copy_vec --size 8192 --bench
//   tools/steps.py diff copy_vec              # against step 1's tiled copy
//
// Included once, by 02_transpose_copy/kernels.cu.
#pragma once

#include <algorithm>
#include <cstdint>

#include "02_transpose_copy/transpose.cuh"
#include "common/device.h"

// n = rows * cols floats: the first n_vec float4s move 16 bytes per thread, then the last
// n - 4 * n_vec floats (0 to 3 of them, or all n if the launcher found the pointers not
// 16-byte aligned) one by one.
__global__ void copy_vec_kernel(int64_t n, int64_t n_vec, const float* __restrict__ in,
                                float* __restrict__ out) {
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const float4* in4 = reinterpret_cast<const float4*>(in);
  float4* out4 = reinterpret_cast<float4*>(out);
  for (int64_t v = first; v < n_vec; v += stride) out4[v] = in4[v];  // floats 4v .. 4v + 3
  for (int64_t e = 4 * n_vec + first; e < n; e += stride) out[e] = in[e];  // the scalar tail
}

// Enough blocks to fill every SM (8 x 256 = 2048 resident threads each), fewer if the array
// is small; each thread then loops over the array with a stride of the whole grid.
void launch_copy_vec(int rows, int cols, const float* in, float* out) {
  constexpr int kThreads = 256;
  const int64_t n = int64_t(rows) * cols;
  // float4 accesses need 16-byte aligned addresses. cudaMalloc returns 256-byte aligned
  // pointers, so with this chapter's buffers the whole array but its last n % 4 floats goes
  // through the float4 loop; any other pointer is copied float by float.
  const bool aligned = (reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) %
                           alignof(float4) == 0;
  const int64_t n_vec = aligned ? n / 4 : 0;
  const int64_t items = std::max<int64_t>(n_vec, n - 4 * n_vec);
  const int blocks = static_cast<int>(std::clamp<int64_t>((items + kThreads - 1) / kThreads, 1,
                                                          int64_t(8) * device_sm_count()));
  copy_vec_kernel<<<blocks, kThreads>>>(n, n_vec, in, out);
  CUDA_CHECK_LAUNCH();
}
