// Device buffers, random inputs, output poisoning, and the guard zones around an output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

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
  // A kept workspace: at least n elements, the array kept while it is large enough, so a timed
  // call allocates nothing once the buffer has grown. Growing waits for the device first (the
  // old array may still be in use) and does not keep the contents.
  T* reserve(size_t n) {
    if (n > n_) {
      CUDA_CHECK(cudaDeviceSynchronize());
      *this = DeviceBuffer();
      *this = DeviceBuffer(n);
    }
    return p_;
  }
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

// Guard zones. An output lives in one allocation between two zones of kGuardBytes each, filled
// with kGuardByte: a write a little outside the output lands there, where the harness looks
// after every verified run, instead of in the allocation's slack, where nothing would see it.
//
//   [ guard before: kGuardBytes ][ the output: n floats ][ guard after: kGuardBytes ]
//   ^ cudaMalloc (256-byte aligned)  ^ get(): still 256-byte aligned (kGuardBytes % 256 == 0),
//                                      as TMA (16 bytes) and the 16-byte vector paths need
//
// The after-guard starts at the output's last byte + 1, so one element past the end is caught.
// A write that stores exactly the guard's bytes, or lands beyond a guard, is not seen.
constexpr size_t kGuardBytes = 4096;  // each side: 1,024 floats
static_assert(kGuardBytes % 256 == 0, "the output must keep cudaMalloc's 256-byte alignment");
// 0xA5 in every byte: as a float 0xA5A5A5A5 = -2.87e-16, finite and not the poison (0xFF, NaN),
// so a write past the end is told apart from an element left unwritten.
constexpr unsigned char kGuardByte = 0xA5;

// The touched guard element nearest the output: element < 0 is before it (C[-1] is the float
// just before C[0]), element >= n after it (C[n] is the float just past the end).
struct GuardTouch {
  bool before = false;
  int64_t element = 0;  // index relative to the output's first element
  uint32_t bits = 0;    // the 4 bytes found there
};

// Host side of the check (host-tested): `before` and `after` are copies of the two guards of an
// output of n elements of elem_bytes each (4: floats; 2: chapter 10's BF16 output). nullopt
// when every byte is still kGuardByte.
std::optional<GuardTouch> find_guard_touch(const unsigned char* before,
                                           const unsigned char* after, size_t guard_bytes,
                                           size_t n, size_t elem_bytes = sizeof(float));

// One line: "guard after C touched: C[4096] (float 1 past its end) holds 0x3f800000 (1)"; a
// BF16 output names its elements "bf16" and shows their 2 bytes.
std::string describe_guard_touch(const GuardTouch& t, const char* output, size_t n,
                                 size_t elem_bytes = sizeof(float));

// Owns n floats (or n elements of elem_bytes: chapter 10's BF16 D) between two guard zones (above). Filled with the guard pattern when allocated;
// poison() fills the output with NaN (poison) and the zones with the pattern again before a
// verified run; touched(name) reads both zones back after it: "" while untouched, else the
// line describe_guard_touch writes.
class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  explicit GuardedBuffer(size_t n, size_t elem_bytes = sizeof(float));
  float* get() const { return reinterpret_cast<float*>(raw_.get() + kGuardBytes); }
  template <typename T>
  T* as() const { return reinterpret_cast<T*>(raw_.get() + kGuardBytes); }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * elem_; }
  void poison();
  std::string touched(const char* name) const;

 private:
  size_t n_ = 0, elem_ = sizeof(float);
  DeviceBuffer<unsigned char> raw_;
};
