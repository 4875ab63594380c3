// Chapter 06's split-K, taken apart: for each shape and each base kernel (splitk_simt: FP32 on
// chapter 04's kernel; splitk_mma: BF16 on chapter 05's), the plan (tile, S, workspace bytes),
// the determinism of the two variants, and (unless --check) the time of each part.
//
//   workspace variant   run twice: the two outputs must be the same bits (exit 1 if not)
//   atomic variant      run 10 times: how many elements differ from the first run, by how much
//   timing              the base kernel's partials and the reduction, each between its own
//                       events in one sequence (so the reduction reads the workspace from L2
//                       as it does in a real run); memset and atomic kernel likewise; the
//                       unsplit kernel. Median of --reps, L2 flushed before each sequence.
//
//   ./build/06_splitk/splitk_parts                               # the five shapes
//   ./build/06_splitk/splitk_parts --kernel splitk_mma --shapes 256x256x65536 --splits 16
//   ./build/06_splitk/splitk_parts --check --shapes 33x17x100003  # determinism only (a test)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "shared/tensorcore/splitk.cuh"
#include "common/cli.h"
#include "common/device.h"
#include "common/matrix.h"
#include "common/timer.h"

namespace {

std::vector<float> download(const float* d, size_t n) {
  std::vector<float> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// Returns false if the workspace variant was not bitwise reproducible.
template <typename T>
bool run_shape(const SplitKBase<T>* bases, int n_bases, const Shape& s, const Options& opt,
               int splits, Timer& timer) {
  const int M = s.M, N = s.N, K = s.K;
  const size_t MN = size_t(M) * N;
  const SplitPlan p = plan_for(bases, n_bases, M, N, K, splits);
  const TileShape& t = bases[p.tile].tile;
  std::printf("\n%s %dx%dx%d: tile %dx%dx%d, %lld output tiles, %d resident blocks (SMs x %d), "
              "%lld K-tiles -> S = %d%s, K per slice ~%lld, workspace %zu bytes (%.2f MiB)\n",
              sizeof(T) == 2 ? "bf16" : "fp32", M, N, K, t.BM, t.BN, t.BK, (long long)p.output_tiles, p.capacity,
              p.capacity / device_sm_count(), (long long)p.k_tiles, p.splits,
              splits ? " (--splits)" : "", (long long)(K / p.splits), p.workspace_bytes,
              p.workspace_bytes / 1048576.0);

  DeviceBuffer<T> A(size_t(M) * K), Bt(size_t(N) * K);
  DeviceBuffer<float> C(MN);
  fill_random(A.get(), M, K, opt.seed * 4 + 1);
  fill_random(Bt.get(), K, N, opt.seed * 4 + 2, /*transposed=*/true);

  auto run = [&](SplitMode mode) {
    poison(C.get(), C.bytes());
    splitk_gemm(bases, n_bases, mode, splits, M, N, K, A.get(), Bt.get(), C.get());
    CUDA_CHECK(cudaDeviceSynchronize());
    return download(C.get(), MN);
  };

  // Determinism: the workspace variant twice, bit for bit.
  const std::vector<float> w1 = run(SplitMode::kWorkspace), w2 = run(SplitMode::kWorkspace);
  const bool same = std::memcmp(w1.data(), w2.data(), MN * sizeof(float)) == 0;
  bool finite = true;
  double ss = 0;
  for (float v : w1) finite = finite && std::isfinite(v), ss += double(v) * v;
  const double rms_c = std::sqrt(ss / MN);
  std::printf("  workspace, run twice: %s\n",
              !finite ? "FAIL: output not finite"
                      : same ? "bitwise identical" : "FAIL: the two runs differ");

  // The atomic variant, 10 runs against its first, and against the workspace variant.
  const int kAtomicRuns = 10;
  const std::vector<float> a0 = run(SplitMode::kAtomic);
  int64_t max_differing = 0;
  double max_diff = 0;
  for (int r = 1; r < kAtomicRuns; ++r) {
    const std::vector<float> a = run(SplitMode::kAtomic);
    int64_t differing = 0;
    for (size_t i = 0; i < MN; ++i)
      if (std::memcmp(&a[i], &a0[i], sizeof(float))) {
        ++differing;
        max_diff = std::max(max_diff, double(std::fabs(a[i] - a0[i])));
      }
    max_differing = std::max(max_differing, differing);
  }
  double max_vs_ws = 0;
  for (size_t i = 0; i < MN; ++i) max_vs_ws = std::max(max_vs_ws, double(std::fabs(a0[i] - w1[i])));
  std::printf("  atomic, %d runs: up to %lld of %zu elements differ from the first run, by at most "
              "%.3g (%.2g rms(C)); atomic vs workspace: at most %.3g (%.2g rms(C))\n",
              kAtomicRuns, (long long)max_differing, MN, max_diff, max_diff / rms_c, max_vs_ws,
              max_vs_ws / rms_c);

  if (opt.bench) {
    const SplitKBase<T>& b = bases[p.tile];
    float* ws = splitk_workspace(p.workspace_bytes);
    const int S = p.splits;
    const double flop = 2.0 * M * N * K;
    auto tf = [&](double ms) { return flop / (ms * 1e-3) * 1e-12; };
    const std::vector<double> unsplit = timer.time_sequence(
        {std::function<void()>(
            [&] { b.launch(M, N, K, A.get(), Bt.get(), C.get(), 1, 0, false); })},
        opt.reps);
    std::printf("  unsplit (S = 1, same tile)  %9.4f ms  %6.2f TFLOP/s\n", unsplit[0],
                tf(unsplit[0]));
    if (S > 1) {
      const std::vector<double> w = timer.time_sequence(
          {[&] { b.launch(M, N, K, A.get(), Bt.get(), ws, S, MN, false); },
           [&] { launch_splitk_reduce(M, N, S, ws, C.get()); }},
          opt.reps);
      std::printf("  workspace: partials %9.4f ms + reduction %8.4f ms = %9.4f ms  %6.2f TFLOP/s"
                  "  (reduction %.1f%%, %.0f GB/s)\n",
                  w[0], w[1], w[0] + w[1], tf(w[0] + w[1]), 100 * w[1] / (w[0] + w[1]),
                  (S + 1) * MN * 4.0 / (w[1] * 1e-3) * 1e-9);
      const std::vector<double> a = timer.time_sequence(
          {[&] { CUDA_CHECK(cudaMemsetAsync(C.get(), 0, MN * sizeof(float))); },
           [&] { b.launch(M, N, K, A.get(), Bt.get(), C.get(), S, 0, true); }},
          opt.reps);
      std::printf("  atomic:    memset   %9.4f ms + atomic GEMM %6.4f ms = %9.4f ms  %6.2f TFLOP/s\n",
                  a[0], a[1], a[0] + a[1], tf(a[0] + a[1]));
    }
  }
  return same && finite;
}

}  // namespace

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "06_splitk/splitk_parts";
  spec.summary = "Chapter 06: split-K's plan, determinism and the time of each part.";
  spec.kernels = {"splitk_simt", "splitk_mma"};
  spec.default_shapes = {{256, 256, 65536}, {128, 128, 131072}, {512, 512, 16384},
                         {64, 4096, 8192}, {4096, 4096, 4096}};
  spec.default_reps = 20;
  int splits = 0;
  spec.options.push_back({"--splits", "S", "number of K slices S (default: the heuristic)", 1,
                          1 << 20, &splits, [](int64_t v, const Shape& sh) -> std::string {
                            return v > sh.K ? std::to_string(v) + " slices are more than K = " +
                                                  std::to_string(sh.K)
                                            : "";
                          }});
  Options opt;
  std::string error;
  switch (parse_cli(spec, argc, argv, &opt, &error)) {
    case CliStatus::kHelp: std::fputs(usage_text(spec).c_str(), stdout); return kExitPass;
    case CliStatus::kList: return kExitPass;
    case CliStatus::kError:
      std::fprintf(stderr, "%s: error: %s\n", spec.program.c_str(), error.c_str());
      return kExitUsage;
    case CliStatus::kOk: break;
  }
  if (!cuda_device_available()) {
    std::fprintf(stderr, "%s: no usable CUDA device; skipping\n", spec.program.c_str());
    return kExitSkip;
  }
  print_device_report(stdout);
  Timer timer;  // its flush buffer: twice the L2
  bool ok = true;
  for (const std::string& k : opt.kernels) {
    if (k == "splitk_mma" && device_compute_capability() < 80) {
      std::printf("splitk_mma: needs compute capability 8.0 (mma.sync with BF16); skipped\n");
      continue;
    }
    for (const Shape& s : opt.shapes)
      ok = (k == "splitk_simt" ? run_shape(kSimtBases, kSimtBaseCount, s, opt, splits, timer)
                               : run_shape(kMmaBases, kMmaBaseCount, s, opt, splits, timer)) &&
           ok;
  }
  std::printf("%s\n", ok ? "PASSED" : "FAILED");
  return ok ? kExitPass : kExitFail;
}
