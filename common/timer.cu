#include "timer.h"

#include <algorithm>
#include <vector>

Timer::Timer() {
  int dev = 0, l2 = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  flush_ = DeviceBuffer<char>(2 * static_cast<size_t>(std::max(l2, 1 << 20)));
}

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

Timing Timer::time(const std::function<void()>& launch, int reps, bool exact_reps) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));

  // Warm-up: first-launch costs (module load, cuBLAS heuristics) stay out of the numbers;
  // the second run, timed, sizes the repetition count.
  launch();
  CUDA_CHECK(cudaMemsetAsync(flush_.get(), 0, flush_.bytes()));
  CUDA_CHECK(cudaEventRecord(start));
  launch();
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float once = 0;
  CUDA_CHECK(cudaEventElapsedTime(&once, start, stop));
  if (!exact_reps) reps = std::max(3, std::min(reps, static_cast<int>(1000.0f / once)));

  std::vector<cudaEvent_t> ev(2 * reps);
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  for (int r = 0; r < reps; ++r) {
    // Overwrite the whole L2 with unrelated data, outside the timed region.
    CUDA_CHECK(cudaMemsetAsync(flush_.get(), r & 0xFF, flush_.bytes()));
    CUDA_CHECK(cudaEventRecord(ev[2 * r]));
    launch();
    CUDA_CHECK(cudaEventRecord(ev[2 * r + 1]));
  }
  CUDA_CHECK(cudaEventSynchronize(ev.back()));
  CUDA_CHECK(cudaGetLastError());

  std::vector<double> ms(reps);
  for (int r = 0; r < reps; ++r) {
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, ev[2 * r], ev[2 * r + 1]));
    ms[r] = t;
  }
  for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));

  std::sort(ms.begin(), ms.end());
  Timing t;
  t.reps = reps;
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.median_ms = median(ms);
  return t;
}

std::vector<double> Timer::time_sequence(const std::vector<std::function<void()>>& parts,
                                         int reps) {
  std::vector<cudaEvent_t> ev(parts.size() + 1);
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  std::vector<std::vector<double>> ms(parts.size());
  for (int r = -1; r < reps; ++r) {  // r = -1: the warm-up
    CUDA_CHECK(cudaMemsetAsync(flush_.get(), r & 0xFF, flush_.bytes()));  // evict the L2
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
