#include "table.h"

void print_table(FILE* f, const std::vector<ResultRow>& rows, const char* rate_unit, bool has_k) {
  size_t w = 6, wb = 8;
  for (const auto& r : rows) {
    w = std::max(w, r.kernel.size());
    wb = std::max(wb, r.baseline.size());
  }
  std::fprintf(f, "%-*s %6s %6s %6s %10s %9s %9s %8s %-*s %9s %s\n", static_cast<int>(w), "kernel",
               has_k ? "M" : "rows", has_k ? "N" : "cols", has_k ? "K" : "", "ms(median)",
               "ms(min)", rate_unit, "% of", static_cast<int>(wb), "baseline", "rel_err",
               "check");
  for (const auto& r : rows) {
    char k[16] = "";
    if (has_k) std::snprintf(k, sizeof k, "%d", r.shape.K);
    if (r.timed) {
      std::fprintf(f, "%-*s %6d %6d %6s %10.4f %9.4f %9.2f %7.1f%% %-*s %9.2e %s\n",
                   static_cast<int>(w), r.kernel.c_str(), r.shape.M, r.shape.N, k, r.ms, r.ms_min,
                   r.rate, r.pct, static_cast<int>(wb), r.baseline.c_str(), r.rel_err,
                   r.status.c_str());
    } else {
      std::fprintf(f, "%-*s %6d %6d %6s %10s %9s %9s %8s %-*s %9.2e %s\n", static_cast<int>(w),
                   r.kernel.c_str(), r.shape.M, r.shape.N, k, "-", "-", "-", "-",
                   static_cast<int>(wb), r.baseline.c_str(), r.rel_err, r.status.c_str());
    }
  }
}

bool write_csv(const std::string& path, const std::string& program, const char* precision,
               const std::vector<ResultRow>& rows, const char* rate_unit) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "program,precision,kernel,M,N,K,ms_median,ms_min,ms_max,reps,%s,pct_of_baseline,"
                  "baseline,rel_err,check\n", rate_unit);
  for (const auto& r : rows)
    std::fprintf(f, "%s,%s,%s,%d,%d,%d,%.6f,%.6f,%.6f,%d,%.4f,%.2f,%s,%.3e,%s\n",
                 program.c_str(), precision, r.kernel.c_str(), r.shape.M, r.shape.N, r.shape.K,
                 r.ms, r.ms_min, r.ms_max, r.reps, r.rate, r.pct, r.baseline.c_str(), r.rel_err,
                 r.status.c_str());
  return std::fclose(f) == 0;
}
