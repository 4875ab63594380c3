// Timing with CUDA events: warm-up, many repetitions, median; the L2 cache is flushed before
// every timed run, so a 4096^2 problem (3 x 64 MB) is not served from the 50 MB L2. The flush
// reads a buffer twice the L2's size: the L2 is left full of clean lines, so the timed run
// pays no write-back of the last run's output. (A memset of that buffer, the earlier flush,
// left it full of dirty lines; GEMM_FLUSH=memset brings it back for comparison:
// docs/measuring.md, "The flush".)
//
// Kernels compared with each other are timed interleaved (time_interleaved): run r of every
// kernel, then run r + 1 of every kernel, and so on. A GPU driven to its power limit lowers its
// clock after some tens of milliseconds of heavy work, so a kernel timed after another one's
// runs would meet a hotter, slower GPU than the one before it. Interleaved, no kernel inherits
// a whole series of another's runs; each run still starts at the clock the run before it left
// (docs/measuring.md says what that does to ratios; chapter 07's NOTES.md measures it).
// Each round runs in its own order (round_order): in a fixed order, a run of a few
// microseconds depends on its place in the round, and every run of a kernel would take the
// same place (docs/measuring.md, "The place in the round").
#pragma once

#include <functional>
#include <vector>

#include "matrix.h"

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
};

// The order of round r of an interleaved series of n launches: a permutation of 0 .. n - 1,
// shuffled per round from a fixed seed, so every process runs the same orders and over many
// rounds each launch takes each place about equally often. Host only; tested by the host tests.
std::vector<int> round_order(int n, int r);

class Timer {
 public:
  Timer();  // allocates the flush buffer: twice the L2 size, zeroed once

  // Runs each launch (which enqueues work on the default stream) twice to warm up, then `reps`
  // times between events, in rounds: run r of every launch in round_order(n, r), then run
  // r + 1 of each. Unless exact_reps, a launch's reps are lowered so that it takes about a
  // second in all (at least 3 runs): slow kernels of the early chapters would take minutes;
  // it then leaves the rotation early. One Timing per launch.
  std::vector<Timing> time_interleaved(const std::vector<std::function<void()>>& launches,
                                       int reps, bool exact_reps);
  // One launch on its own (its runs back to back).
  Timing time(const std::function<void()>& launch, int reps, bool exact_reps) {
    return time_interleaved({launch}, reps, exact_reps).front();
  }

  // Several launches back to back with events between them (a split-K GEMM and its reduction,
  // say): the median milliseconds of each part over `reps` runs of the whole sequence, after
  // one warm-up run, with the L2 flushed before each.
  std::vector<double> time_sequence(const std::vector<std::function<void()>>& parts, int reps);

 private:
  void flush(int r);  // evicts the L2 before run r, outside the events

  DeviceBuffer<char> flush_;
  DeviceBuffer<float> sink_;
  int flush_blocks_ = 0;
  bool memset_flush_ = false;
};
