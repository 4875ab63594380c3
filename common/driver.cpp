#include "driver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <nvtx3/nvToolsExt.h>

#include "check.h"
#include "device.h"
#include "table.h"
#include "timer.h"

const char* role_name(Role r) {
  switch (r) {
    case Role::kStep: return "step";
    case Role::kBaseline: return "baseline";
    case Role::kPrevious: return "previous";
    case Role::kSweep: return "sweep";
    case Role::kBest: return "best";
    case Role::kExercise: return "exercise";
  }
  return "?";
}

int run_chapter(Chapter ch, int argc, char** argv) {
  ch.cli.kernels.clear();
  ch.cli.sweep.clear();
  ch.cli.exercises.clear();
  for (const auto& k : ch.kernels) {
    ch.cli.kernels.push_back(k.name);
    if (k.role == Role::kSweep) ch.cli.sweep.push_back(k.name);
    if (k.role == Role::kExercise) ch.cli.exercises.push_back(k.name);
  }

  // 1. Arguments, before any GPU work: bad usage exits 2 even where there is no GPU.
  Options opt;
  std::string error;
  switch (parse_cli(ch.cli, argc, argv, &opt, &error)) {
    case CliStatus::kHelp:
      std::fputs(usage_text(ch.cli).c_str(), stdout);
      return kExitPass;
    case CliStatus::kList: {  // the registry the tools read: name role baseline precision shape
      const Shape& s = ch.cli.default_shapes.front();
      std::string shape = std::to_string(s.M) + "x" + std::to_string(s.N) +
                          (ch.cli.has_k ? "x" + std::to_string(s.K) : "");
      for (const auto& k : ch.kernels)
        std::printf("%s %s %s %s %s\n", k.name.c_str(), role_name(k.role),
                    k.baseline.empty() ? "-" : k.baseline.c_str(),
                    k.precision.empty() ? ch.precision : k.precision.c_str(), shape.c_str());
      return kExitPass;
    }
    case CliStatus::kError:
      std::fprintf(stderr, "%s: error: %s\n", ch.cli.program.c_str(), error.c_str());
      return kExitUsage;
    case CliStatus::kOk:
      break;
  }
  // A kernel named at a K above its limit: one line, exit 2 (KernelEntry::max_k).
  if (opt.kernels_named)
    for (const auto& k : ch.kernels)
      for (const auto& name : opt.kernels)
        for (const auto& s : opt.shapes)
          if (k.name == name && k.max_k > 0 && s.K > k.max_k) {
            std::fprintf(stderr, "%s: error: %s is refused at K = %d (above %d): %s\n",
                         ch.cli.program.c_str(), name.c_str(), s.K, k.max_k,
                         k.max_k_why.c_str());
            return kExitUsage;
          }
  if (!opt.csv.empty()) {
    FILE* f = std::fopen(opt.csv.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "%s: error: --csv: cannot write '%s'\n", ch.cli.program.c_str(),
                   opt.csv.c_str());
      return kExitUsage;
    }
    std::fclose(f);
  }

  // 2. The GPU.
  if (!cuda_device_available()) {
    std::fprintf(stderr, "%s: no usable CUDA device; skipping\n", ch.cli.program.c_str());
    return kExitSkip;
  }
  if (int cc = device_compute_capability();
      cc < ch.cli.min_cc || (ch.cli.exact_cc && cc != ch.cli.min_cc)) {
    std::fprintf(stderr, "%s: needs compute capability %d.%d%s (%s); this GPU is %d.%d; "
                 "skipping\n", ch.cli.program.c_str(), ch.cli.min_cc / 10, ch.cli.min_cc % 10,
                 ch.cli.exact_cc ? "" : " or newer", ch.cli.min_cc_why.c_str(), cc / 10, cc % 10);
    return kExitSkip;
  }
  print_device_report(stdout);
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // GEMM_TUTORIAL_FREE_MIB pretends less memory is free, so the tests can exercise this check.
  if (const char* cap = std::getenv("GEMM_TUTORIAL_FREE_MIB"))
    free_bytes = std::min<size_t>(free_bytes, std::strtoull(cap, nullptr, 10) << 20);
  for (const auto& s : opt.shapes) {
    size_t need = ch.device_bytes(s) + (256u << 20);  // + L2 flush buffer and cuBLAS workspace
    if (need > free_bytes) {
      std::fprintf(stderr,
                   "%s: error: size too large: %dx%d%s needs %.1f GiB of GPU memory, "
                   "%.1f GiB free\n",
                   ch.cli.program.c_str(), s.M, s.N,
                   ch.cli.has_k ? ("x" + std::to_string(s.K)).c_str() : "", need / 1073741824.0,
                   free_bytes / 1073741824.0);
      return kExitUsage;
    }
  }

  // Which kernels run: the selected ones, and for timing also their baselines, so that every
  // percentage compares two kernels timed in this same process.
  std::vector<bool> run(ch.kernels.size(), false);
  for (size_t i = 0; i < ch.kernels.size(); ++i)
    for (const auto& name : opt.kernels)
      if (ch.kernels[i].name == name) {
        run[i] = true;
        if (opt.bench)
          for (size_t j = 0; j < ch.kernels.size(); ++j)
            if (ch.kernels[j].name == ch.kernels[i].baseline) run[j] = true;
      }

  std::printf("seed %llu, %s\n", static_cast<unsigned long long>(opt.seed),
              !opt.bench        ? "verify only"
              : opt.sequential ? "verify then time (median, L2 flushed before each run; "
                                 "each kernel's runs back to back)"
                               : "verify then time (median, L2 flushed before each run; "
                                 "the kernels' runs interleaved)");
  std::fflush(stdout);

  std::vector<ResultRow> rows;
  int failures = 0, skipped = 0, verified = 0;
  std::unique_ptr<Timer> timer;
  if (opt.bench) timer = std::make_unique<Timer>();

  auto shape_text = [&](const Shape& s) {
    return std::to_string(s.M) + "x" + std::to_string(s.N) +
           (ch.cli.has_k ? "x" + std::to_string(s.K) : "");
  };
  for (const auto& s : opt.shapes) {
    auto c = ch.make_case(s, opt.seed);
    size_t first_row = rows.size();
    std::vector<size_t> row_of(ch.kernels.size(), SIZE_MAX);

    // 3. Verify every kernel that runs; a kernel that fails is never timed.
    for (size_t i = 0; i < ch.kernels.size(); ++i) {
      if (!run[i]) continue;
      ResultRow r;
      r.kernel = ch.kernels[i].name;
      r.baseline = ch.kernels[i].baseline;
      r.shape = s;
      if (ch.kernels[i].max_k > 0 && s.K > ch.kernels[i].max_k) {  // left out here: say why
        std::fprintf(stderr, "%s: left out at K = %d (above %d): %s\n", r.kernel.c_str(), s.K,
                     ch.kernels[i].max_k, ch.kernels[i].max_k_why.c_str());
        r.status = "skip";
        ++skipped;
        row_of[i] = rows.size();
        rows.push_back(r);
        continue;
      }
      c->poison_output();
      // The verified run, in an NVTX range named after the kernel: the profiling tools ask
      // Nsight Compute for exactly the launches inside it (--nvtx-include NAME/).
      nvtxRangePushA(r.kernel.c_str());
      try {
        c->launch(i);
      } catch (const KernelNotSupported& e) {  // not on this GPU: say why, go on
        nvtxRangePop();
        std::fprintf(stderr, "%s: skipped on this GPU: %s\n", r.kernel.c_str(), e.what());
        r.status = "skip";
        ++skipped;
        row_of[i] = rows.size();
        rows.push_back(r);
        continue;
      }
      nvtxRangePop();
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaDeviceSynchronize());
      ++verified;
      auto v = c->verify_output(i);
      if (!v) {
        r.status = "ref";
      } else {
        r.rel_err = v->rel_err;
        r.status = v->pass ? "pass" : "FAIL";
        if (!v->pass) {
          ++failures;
          std::fprintf(stderr, "%s ", shape_text(s).c_str());
          print_mismatches(stderr, r.kernel.c_str(), *v);
        }
      }
      // A write outside the output (into a guard zone, matrix.h) fails like a wrong element,
      // whatever the output itself holds.
      auto guards_hold = [&] {
        const std::string touched = c->check_guards();
        if (touched.empty()) return true;
        std::fprintf(stderr, "%s %s: FAIL %s\n", shape_text(s).c_str(), r.kernel.c_str(),
                     touched.c_str());
        if (r.status != "FAIL") ++failures;
        r.status = "FAIL";
        return false;
      };
      guards_hold();
      // --twice: the same input again, into a poisoned output: the same bits, or a failure.
      if (opt.twice && r.status == "pass") {
        const std::vector<unsigned char> first = c->output_bytes();
        c->poison_output();
        c->launch(i);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
        if (c->output_bytes() != first) {
          std::fprintf(stderr, "%s %s: a second run on the same input gave other bits\n",
                       shape_text(s).c_str(), r.kernel.c_str());
          r.status = "FAIL";
          ++failures;
        }
        guards_hold();
      }
      row_of[i] = rows.size();
      rows.push_back(r);
    }

    // 4. Time what passed: all of it interleaved (Timer::time_interleaved), so that no kernel
    //    is timed on a GPU that the kernels timed before it have heated; or, with --sequential,
    //    each kernel's runs back to back, one kernel after the other. (At the power limit each
    //    run still starts at the clock the run before it left: docs/measuring.md.)
    if (opt.bench) {
      std::vector<size_t> timed;
      for (size_t i = 0; i < ch.kernels.size(); ++i)
        if (run[i] && rows[row_of[i]].status != "FAIL" && rows[row_of[i]].status != "skip")
          timed.push_back(i);
      std::vector<Timing> t;
      if (opt.sequential) {
        for (size_t i : timed)
          t.push_back(timer->time([&, i] { c->launch(i); }, opt.reps, opt.reps_given));
      } else {
        std::vector<std::function<void()>> launches;
        for (size_t i : timed) launches.push_back([&, i] { c->launch(i); });
        t = timer->time_interleaved(launches, opt.reps, opt.reps_given);
      }
      for (size_t x = 0; x < timed.size(); ++x) {
        ResultRow& r = rows[row_of[timed[x]]];
        r.timed = true;
        r.ms = t[x].median_ms;
        r.ms_min = t[x].min_ms;
        r.ms_max = t[x].max_ms;
        r.reps = t[x].reps;
        r.rate = c->work() / (t[x].median_ms * 1e-3) * ch.rate_scale;
      }
      for (size_t i = first_row; i < rows.size(); ++i) {
        ResultRow& r = rows[i];
        const std::string& base = r.baseline.empty() ? r.kernel : r.baseline;
        for (size_t j = first_row; j < rows.size(); ++j)
          if (r.timed && rows[j].timed && rows[j].kernel == base) r.pct = 100.0 * rows[j].ms / r.ms;
      }
    }
  }

  std::printf("\n");
  print_table(stdout, rows, ch.rate_unit, ch.cli.has_k);
  if (!opt.csv.empty() && !write_csv(opt.csv, ch.cli.program, ch.precision, rows, ch.rate_unit)) {
    std::fprintf(stderr, "%s: error: could not write %s\n", ch.cli.program.c_str(),
                 opt.csv.c_str());
    return kExitFail;
  }
  std::printf("%s\n", failures ? "FAILED" : skipped ? "PASSED (some kernels skipped)" : "PASSED");
  if (failures) return kExitFail;
  // Every kernel asked for is beyond this GPU: nothing ran, as with no GPU at all.
  return skipped > 0 && verified == 0 ? kExitSkip : kExitPass;
}
