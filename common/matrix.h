// Device buffers, random inputs and output poisoning.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>

#include "check.h"

// Owns one cudaMalloc'd array of n elements of T.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) : n_(n) { CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T))); }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; o.n_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// Uniform value in [-1, 1) for element `i` of the stream `seed`: a counter-based hash
// (SplitMix64's finaliser), so host and device produce the same matrix, in any order.
__host__ __device__ inline float random_uniform(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  // 24 random bits -> a float in [0, 1) exactly representable, then to [-1, 1).
  return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// Fills a rows x cols matrix with random_uniform(seed, r * cols + c) for logical element (r, c).
// transposed = false stores it row-major (at r * cols + c); transposed = true stores the same
// logical matrix column-major (at c * rows + r), i.e. its transpose row-major. So a matrix B and
// the Bᵀ filled from the same seed hold the same values.
// The BF16 version stores each value rounded to the nearest BF16 (bf16_round): the inputs of
// the tensor-core chapters, which the references then see exactly.
void fill_random(float* d, int rows, int cols, uint64_t seed, bool transposed = false);
void fill_random(__nv_bfloat16* d, int rows, int cols, uint64_t seed, bool transposed = false);

// x rounded to the nearest BF16 value (ties to even), as a float: 8 significant bits.
__host__ __device__ inline float bf16_round(float x) {
  return __bfloat162float(__float2bfloat16_rn(x));
}

// Sets every byte to 0xFF: a float or bf16 of all ones is NaN, so any element the kernel
// forgets to write fails verification.
void poison(void* d, size_t bytes);
