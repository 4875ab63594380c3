// The result table every program prints, and the same rows as CSV.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"

struct ResultRow {
  std::string kernel;
  std::string baseline;    // the kernel this one is compared with ("" for none)
  Shape shape;
  bool timed = false;
  double ms = 0, ms_min = 0, ms_max = 0;  // median, fastest, slowest run
  int reps = 0;
  double rate = 0;         // TFLOP/s or GB/s
  double pct = 0;          // 100 * baseline time / this time, same run
  double rel_err = 0;
  std::string status;      // "pass", "FAIL", "ref"
};

// rate_unit: "TFLOP/s" or "GB/s". has_k: print K (GEMM) or not (copy/transpose).
void print_table(FILE* f, const std::vector<ResultRow>& rows, const char* rate_unit, bool has_k);
bool write_csv(const std::string& path, const std::string& program, const char* precision,
               const std::vector<ResultRow>& rows, const char* rate_unit);
