#include "matrix.h"

namespace {
template <typename T>
__global__ void fill_random_kernel(T* d, int rows, int cols, uint64_t seed, bool transposed) {
  int64_t total = static_cast<int64_t>(rows) * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = i / cols, c = i % cols;
    d[transposed ? c * rows + r : i] = T(random_uniform(seed, static_cast<uint64_t>(i)));
  }
}
}  // namespace

void fill_random(float* d, int rows, int cols, uint64_t seed, bool transposed) {
  fill_random_kernel<<<1024, 256>>>(d, rows, cols, seed, transposed);
  CUDA_CHECK_LAUNCH();
}

void fill_random(__nv_bfloat16* d, int rows, int cols, uint64_t seed, bool transposed) {
  fill_random_kernel<<<1024, 256>>>(d, rows, cols, seed, transposed);  // rounds to nearest
  CUDA_CHECK_LAUNCH();
}

void poison(void* d, size_t bytes) { CUDA_CHECK(cudaMemset(d, 0xFF, bytes)); }
