#include "access_model.h"

#include <algorithm>
#include <set>

int shared_wavefronts(const uint32_t* byte_addr, int n_threads, int access_bytes) {
  const int words = access_bytes / 4;            // 4-byte words per thread access
  const int per_phase = 32 / words;              // threads served per 128-byte phase
  int total = 0;
  for (int first = 0; first < n_threads; first += per_phase) {
    std::set<uint32_t> distinct[32];             // distinct word addresses per bank
    for (int t = first; t < std::min(first + per_phase, n_threads); ++t)
      for (int w = 0; w < words; ++w) {
        uint32_t word = byte_addr[t] / 4 + w;
        distinct[word % 32].insert(word);
      }
    size_t busiest = 0;
    for (const auto& d : distinct) busiest = std::max(busiest, d.size());
    total += static_cast<int>(busiest);
  }
  return total;
}

int ldmatrix_wavefronts(const uint32_t* row_addr, int n_matrices) {
  return shared_wavefronts(row_addr, 8 * n_matrices, 16);
}

int ideal_wavefronts(int n_threads, int access_bytes) {
  const int per_phase = 32 / (access_bytes / 4);
  return (n_threads + per_phase - 1) / per_phase;
}

int global_sectors(const uint64_t* byte_addr, int n_threads, int access_bytes) {
  std::set<uint64_t> sectors;
  for (int t = 0; t < n_threads; ++t)
    for (uint64_t b = byte_addr[t] / 32; b <= (byte_addr[t] + access_bytes - 1) / 32; ++b)
      sectors.insert(b);
  return static_cast<int>(sectors.size());
}
