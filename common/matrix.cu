#include "matrix.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

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

std::optional<GuardTouch> find_guard_touch(const unsigned char* before,
                                           const unsigned char* after, size_t guard_bytes,
                                           size_t n, size_t elem_bytes) {
  // Walk out from the output: the touched byte nearest it is the first a tail overrun writes.
  for (size_t i = 0; i < guard_bytes; ++i)
    if (after[i] != kGuardByte) {
      GuardTouch t;
      const size_t e = i / elem_bytes;  // the element holding byte i
      t.element = int64_t(n + e);
      std::memcpy(&t.bits, after + e * elem_bytes, elem_bytes);
      return t;
    }
  for (size_t i = guard_bytes; i-- > 0;)
    if (before[i] != kGuardByte) {
      GuardTouch t;
      t.before = true;
      const size_t e = i / elem_bytes;  // guard_bytes is a multiple of 4: C[-1] ends it
      t.element = int64_t(e) - int64_t(guard_bytes / elem_bytes);
      std::memcpy(&t.bits, before + e * elem_bytes, elem_bytes);
      return t;
    }
  return std::nullopt;
}

std::string describe_guard_touch(const GuardTouch& t, const char* output, size_t n,
                                 size_t elem_bytes) {
  float value;
  if (elem_bytes == 2) {  // a BF16: the top half of a float
    const uint32_t f = t.bits << 16;
    std::memcpy(&value, &f, sizeof value);
  } else {
    std::memcpy(&value, &t.bits, sizeof value);
  }
  const long long k = t.before ? -t.element : t.element - int64_t(n) + 1;  // 1st, 2nd, ...
  char line[256];
  std::snprintf(line, sizeof line,
                "guard %s %s touched: %s[%lld] (%s %lld %s) holds 0x%0*" PRIx32 " (%g)",
                t.before ? "before" : "after", output, output, static_cast<long long>(t.element),
                elem_bytes == 2 ? "bf16" : "float", k,
                t.before ? "before its start" : "past its end", int(2 * elem_bytes), t.bits,
                static_cast<double>(value));
  return line;
}

GuardedBuffer::GuardedBuffer(size_t n, size_t elem_bytes)
    : n_(n), elem_(elem_bytes), raw_(kGuardBytes + n * elem_bytes + kGuardBytes) {
  poison();
}

void GuardedBuffer::poison() {
  ::poison(get(), bytes());
  CUDA_CHECK(cudaMemset(raw_.get(), kGuardByte, kGuardBytes));
  CUDA_CHECK(cudaMemset(raw_.get() + kGuardBytes + bytes(), kGuardByte, kGuardBytes));
}

std::string GuardedBuffer::touched(const char* name) const {
  std::vector<unsigned char> before(kGuardBytes), after(kGuardBytes);
  CUDA_CHECK(cudaMemcpy(before.data(), raw_.get(), kGuardBytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(after.data(), raw_.get() + kGuardBytes + bytes(), kGuardBytes,
                        cudaMemcpyDeviceToHost));
  const auto t = find_guard_touch(before.data(), after.data(), kGuardBytes, n_, elem_);
  return t ? describe_guard_touch(*t, name, n_, elem_) : "";
}
