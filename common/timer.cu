#include "timer.h"

#include <algorithm>
#include <vector>

Timer::Timer() {
  int dev = 0, l2 = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  flush_ = DeviceBuffer<char>(2 * static_cast<size_t>(std::max(l2, 1 << 20)));
}

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
  t.median_ms = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
  return t;
}
