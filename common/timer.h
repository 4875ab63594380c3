// Timing with CUDA events: warm-up, many repetitions, median; the L2 cache is flushed before
// every timed run, so a 4096^2 problem (3 x 64 MB) is not served from the 50 MB L2.
#pragma once

#include <functional>
#include <vector>

#include "matrix.h"

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
};

class Timer {
 public:
  Timer();  // allocates the flush buffer: twice the L2 size

  // Runs `launch` (which enqueues work on the default stream) twice to warm up, then `reps`
  // times between events. Unless exact_reps, reps is lowered so that one kernel takes about a
  // second in all (at least 3 runs): slow kernels of the early chapters would take minutes.
  Timing time(const std::function<void()>& launch, int reps, bool exact_reps);

  // Several launches back to back with events between them (a split-K GEMM and its reduction,
  // say): the median milliseconds of each part over `reps` runs of the whole sequence, after
  // one warm-up run, with the L2 flushed before each.
  std::vector<double> time_sequence(const std::vector<std::function<void()>>& parts, int reps);

 private:
  DeviceBuffer<char> flush_;
};
