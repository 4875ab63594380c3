// The ceilings' wgmma loop (wgmma.cu, the kernel behind the wgmma_bf16 and wgmma_fp8_e4m3 rows),
// launched back to back for SECONDS, each launch's time and rate printed: what a tensor-core
// loop sustains once the GPU sits at its power limit, while `nvidia-smi --query-gpu=timestamp,
// clocks.sm,power.draw,clocks_event_reasons.active -lms 20` samples the clock and the power
// (docs/measuring.md, "The measured ceiling and the datasheet"; docs/results/h200/wgmma_clock.csv).
//
//   ./build/tools/ceilings/wgmma_hold bf16 2 4     # BF16, 2 consumer warpgroups an SM, 4 s
//   ./build/tools/ceilings/wgmma_hold fp8 3 4      # e4m3, 3 consumer warpgroups an SM, 4 s
//
// A launch runs the ceilings' trips of its row on the H200 (42519 BF16, 26745 e4m3): about 25 ms.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/check.h"
#include "common/device.h"
#include "tools/ceilings/ceilings.h"

namespace {
constexpr const char* kProgram = "wgmma_hold";
constexpr int kExitUsage = 2, kExitSkip = 77;

int usage_error(const std::string& what) {
  std::fprintf(stderr, "%s: error: %s (usage: %s bf16|fp8 2|3 SECONDS)\n", kProgram,
               what.c_str(), kProgram);
  return kExitUsage;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("usage: %s bf16|fp8 CONSUMERS SECONDS\n  the ceilings' wgmma loop, launched "
                "back to back for SECONDS (0 < SECONDS <= 600) with CONSUMERS (2 or 3) "
                "warpgroups an SM; one line a launch: index, time since start, ms, TFLOP/s\n",
                kProgram);
    return 0;
  }
  if (argc != 4) return usage_error("three arguments expected, " + std::to_string(argc - 1) +
                                    " given");
  const std::string kind = argv[1];
  if (kind != "bf16" && kind != "fp8") return usage_error("'" + kind + "' is not bf16 or fp8");
  const std::string c = argv[2];
  if (c != "2" && c != "3") return usage_error("consumers '" + c + "' is not 2 or 3");
  char* end = nullptr;
  const double seconds = std::strtod(argv[3], &end);
  if (end == argv[3] || *end != '\0' || !(seconds > 0 && seconds <= 600))
    return usage_error(std::string("seconds '") + argv[3] + "' is not in (0, 600]");
  if (!cuda_device_available() || device_compute_capability() != 90) {
    std::fprintf(stderr, "%s: needs a GPU of compute capability 9.0 (wgmma, sm_90a); skipping\n",
                 kProgram);
    return kExitSkip;
  }
  const bool fp8 = kind == "fp8";
  const int consumers = c == "3" ? 3 : 2, blocks = device_sm_count();
  const int iters = fp8 ? 26745 : 42519;
  const double flop = (fp8 ? kWgmmaFp8Flop : kWgmmaFlop) * kWgmmaKSteps * consumers *
                      double(blocks) * iters;
  DeviceBuffer<float> sink(size_t(blocks) * wgmma_threads(consumers));
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 0;; ++n) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (t >= seconds) break;
    CUDA_CHECK(cudaEventRecord(a));
    launch_wgmma(consumers, fp8, blocks, iters, 1234, sink.get());
    CUDA_CHECK(cudaEventRecord(b));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    std::printf("%s %d %.3f s %.3f ms %.1f TFLOP/s\n", kind.c_str(), n,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), ms,
                flop / (ms * 1e-3) / 1e12);
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  return 0;
}
