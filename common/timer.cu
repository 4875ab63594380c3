#include "timer.h"

#include "device.h"  // device_facts: the L2 to flush, the SMs to flush it with

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
// Reads the whole flush buffer, 16 bytes a thread per step: every line it brings into the L2 is
// clean, and the lines it evicts (the last run's C, written) are written back now, outside the
// timed region. The sum is stored only if it takes a value the zeroed buffer cannot give, so
// the compiler keeps every load.
__global__ void flush_read_kernel(const float4* __restrict__ buf, size_t n, float* sink) {
  float acc = 0.0f;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const float4 v = buf[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1.0f) *sink = acc;  // never: the buffer holds zeros
}
}  // namespace

Timer::Timer() {
  const DeviceFacts& d = device_facts();
  flush_ = DeviceBuffer<char>(2 * std::max(d.l2_bytes, size_t(1) << 20));
  CUDA_CHECK(cudaMemset(flush_.get(), 0, flush_.bytes()));  // written once, read ever after
  sink_ = DeviceBuffer<float>(1);
  flush_blocks_ = 4 * std::max(d.sms, 1);
  const char* how = std::getenv("GEMM_FLUSH");  // docs/measuring.md, "The flush"
  memset_flush_ = how && std::strcmp(how, "memset") == 0;
}

void Timer::flush(int r) {
  if (memset_flush_) {  // the earlier flush: it leaves the L2 full of dirty lines
    CUDA_CHECK(cudaMemsetAsync(flush_.get(), r & 0xFF, flush_.bytes()));
    return;
  }
  flush_read_kernel<<<flush_blocks_, 256>>>(reinterpret_cast<const float4*>(flush_.get()),
                                            flush_.bytes() / sizeof(float4), sink_.get());
  CUDA_CHECK_LAUNCH();
}

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

std::vector<int> round_order(int n, int r) {
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  // Fisher-Yates, drawing from the inputs' counter-based hash (random_uniform, in [-1, 1)).
  for (int i = n - 1; i > 0; --i) {
    const float u = 0.5f * (random_uniform(0x7155 + static_cast<uint64_t>(r), i) + 1.0f);
    const int j = std::min(i, static_cast<int>(u * (i + 1)));
    std::swap(order[i], order[j]);
  }
  return order;
}

std::vector<Timing> Timer::time_interleaved(const std::vector<std::function<void()>>& launches,
                                           int reps, bool exact_reps) {
  const size_t n = launches.size();
  if (n == 0) return {};  // (every selected kernel failed verification: nothing to time)
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));

  // Warm-up: first-launch costs (module load, cuBLAS heuristics) stay out of the numbers;
  // the second run, timed, sizes the launch's repetition count.
  std::vector<int> count(n, reps);
  for (size_t i = 0; i < n; ++i) {
    launches[i]();
    flush(0);
    CUDA_CHECK(cudaEventRecord(start));
    launches[i]();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float once = 0;
    CUDA_CHECK(cudaEventElapsedTime(&once, start, stop));
    if (!exact_reps) count[i] = std::max(3, std::min(reps, static_cast<int>(1000.0f / once)));
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));

  // The timed runs, in rounds: every launch's run r lies between runs r - 1 and r + 1 of
  // every other launch that is still in the rotation, in the round's own order (round_order).
  std::vector<std::vector<cudaEvent_t>> ev(n);
  for (size_t i = 0; i < n; ++i) {
    ev[i].resize(2 * count[i]);
    for (auto& e : ev[i]) CUDA_CHECK(cudaEventCreate(&e));
  }
  const int rounds = *std::max_element(count.begin(), count.end());
  for (int r = 0; r < rounds; ++r)
    for (int i : round_order(static_cast<int>(n), r)) {
      if (r >= count[i]) continue;
      // Fill the whole L2 with unrelated, clean lines, outside the timed region.
      flush(r);
      CUDA_CHECK(cudaEventRecord(ev[i][2 * r]));
      launches[i]();
      CUDA_CHECK(cudaEventRecord(ev[i][2 * r + 1]));
    }
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaGetLastError());

  std::vector<Timing> out(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> ms(count[i]);
    for (int r = 0; r < count[i]; ++r) {
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, ev[i][2 * r], ev[i][2 * r + 1]));
      ms[r] = t;
    }
    for (auto& e : ev[i]) CUDA_CHECK(cudaEventDestroy(e));
    std::sort(ms.begin(), ms.end());
    out[i].reps = count[i];
    out[i].min_ms = ms.front();
    out[i].max_ms = ms.back();
    out[i].median_ms = median(ms);
  }
  return out;
}

std::vector<double> Timer::time_sequence(const std::vector<std::function<void()>>& parts,
                                         int reps) {
  std::vector<cudaEvent_t> ev(parts.size() + 1);
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  std::vector<std::vector<double>> ms(parts.size());
  for (int r = -1; r < reps; ++r) {  // r = -1: the warm-up
    flush(r);  // evict the L2
    CUDA_CHECK(cudaEventRecord(ev[0]));
    for (size_t i = 0; i < parts.size(); ++i) {
      parts[i]();
      CUDA_CHECK(cudaEventRecord(ev[i + 1]));
    }
    CUDA_CHECK(cudaEventSynchronize(ev.back()));
    CUDA_CHECK(cudaGetLastError());
    if (r < 0) continue;
    for (size_t i = 0; i < parts.size(); ++i) {
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, ev[i], ev[i + 1]));
      ms[i].push_back(t);
    }
  }
  for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
  std::vector<double> out;
  for (auto& m : ms) out.push_back(median(m));
  return out;
}
