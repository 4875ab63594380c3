#include "access_model.h"

#include <algorithm>
#include <set>

namespace {
// Threads served together: the whole warp for 4-byte accesses; 128 bytes of registers
// otherwise, twice that for a load whose lanes pair up (access_model.h).
int threads_per_phase(const uint32_t* byte_addr, int n_threads, int access_bytes, SmemOp op) {
  if (access_bytes <= 4) return 32;
  const int per_phase = 32 / (access_bytes / 4);  // 16 for 8 bytes, 8 for 16 bytes
  const bool packed = op == SmemOp::kLoad && lanes_pair_up(byte_addr, n_threads);
  return packed ? 2 * per_phase : per_phase;
}

// Wavefronts of one phase: its busiest bank's distinct words.
int phase_wavefronts(const uint32_t* byte_addr, int first, int count, int access_bytes) {
  const int words = std::max(1, access_bytes / 4);
  std::set<uint32_t> distinct[32];  // distinct word addresses per bank
  for (int t = first; t < first + count; ++t)
    for (int w = 0; w < words; ++w) {
      const uint32_t word = byte_addr[t] / 4 + w;
      distinct[word % 32].insert(word);
    }
  size_t busiest = 0;
  for (const auto& d : distinct) busiest = std::max(busiest, d.size());
  return static_cast<int>(busiest);
}
}  // namespace

bool lanes_pair_up(const uint32_t* byte_addr, int n_threads) {
  for (int mask : {1, 2}) {
    bool all = true;
    for (int t = 0; t < n_threads && all; ++t)
      if ((t ^ mask) < n_threads && byte_addr[t] != byte_addr[t ^ mask]) all = false;
    if (all) return true;
  }
  return false;
}

int shared_wavefronts(const uint32_t* byte_addr, int n_threads, int access_bytes, SmemOp op) {
  const int per_phase = threads_per_phase(byte_addr, n_threads, access_bytes, op);
  int total = 0;
  for (int first = 0; first < n_threads; first += per_phase)
    total += phase_wavefronts(byte_addr, first, std::min(per_phase, n_threads - first),
                              access_bytes);
  return total;
}

int shared_phases(const uint32_t* byte_addr, int n_threads, int access_bytes, SmemOp op) {
  const int per_phase = threads_per_phase(byte_addr, n_threads, access_bytes, op);
  return (n_threads + per_phase - 1) / per_phase;
}

int ldmatrix_wavefronts(const uint32_t* row_addr, int n_matrices) {
  int total = 0;
  for (int m = 0; m < n_matrices; ++m) total += phase_wavefronts(row_addr, 8 * m, 8, 16);
  return total;
}

int ideal_wavefronts(int n_threads, int access_bytes) {
  const int per_phase = 32 / std::max(1, access_bytes / 4);
  return (n_threads + per_phase - 1) / per_phase;
}

int global_sectors(const uint64_t* byte_addr, int n_threads, int access_bytes) {
  std::set<uint64_t> sectors;
  for (int t = 0; t < n_threads; ++t)
    for (uint64_t b = byte_addr[t] / 32; b <= (byte_addr[t] + access_bytes - 1) / 32; ++b)
      sectors.insert(b);
  return static_cast<int>(sectors.size());
}
