// tools/ceilings: the ceilings the tutorial's kernels are measured against, measured on the GPU
// at hand rather than quoted from a datasheet:
//
//   fma_fp32       FFMA from registers. 8 independent chains a thread and every SM filled to
//                  full occupancy, so nothing waits on a result: the rate is the FP32 pipe's
//                  issue rate (one warp FFMA a clock per SM sub-partition where it has 32 lanes;
//                  16 lanes on sm_80). The ceiling of the CUDA-core chapters (01-04). Printed
//                  next to the peak the device properties imply: SMs x FP32 lanes an SM x 2 FLOP
//                  x the SM clock of cudaDevAttrClockRate (its highest clock).
//   mma_sync_bf16  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 from registers: 8
//                  independent accumulators a warp (a 2 x 4 grid of (16, 8) tiles, as in a GEMM's
//                  warp tile) and every SM filled, so the tensor pipe never waits on a dependency
//                  or on memory: the most the warp-level MMA of chapters 05-07 can give.
//   wgmma_bf16     wgmma.mma_async m64n256k16 BF16 -> FP32 with both operands in shared memory
//                  (wgmma.cu, sm_90a only): chapter 08's consumer loop with the loads taken away,
//                  two (and three) consumer warpgroups per SM issuing back to back, a K tile of
//                  four wgmma a commit group, one group in flight while the next is issued. The
//                  ceiling of chapter 08. The row reports the faster of two and three
//                  warpgroups; its detail names both.
//   copy           cudaMemcpyAsync device to device of a buffer 16 times the L2 (at least 1 GiB),
//                  so that every byte comes from and goes to DRAM; bytes read + written. The
//                  DRAM bandwidth a memory-bound kernel (chapter 02's copy) is held against.
//   wgmma_fp8_e4m3 the same loop with e4m3 operands and wgmma m64n256k32 (a K tile of 128 FP8
//                  values, the same 128-byte rows): the tensor cores' FP8 rate, for chapter 10.
//
// Each is timed with CUDA events: one untimed launch, then the work per run calibrated to
// about 25 ms, two warm-up runs and 11 timed runs back to back; the median run gives the rate
// (about 0.3 s of work a ceiling). The runs are short enough that a GPU starting cool holds its
// boost clock through them; a long GEMM that drives the GPU to its power limit runs at a lower
// clock (docs/measuring.md). The tensor-core operands are random nonzero BF16 values (zeros
// multiply faster); the results of every kernel are written out, so nothing is optimised away.
//
// Counterparts: the peaks in NVIDIA's H100 Tensor Core GPU datasheet and architecture
// whitepaper (FP32 and dense BF16 tensor rates), the FP32 throughput table of the CUDA C++
// Programming Guide (Arithmetic Instructions), and CUDA samples' bandwidthTest, whose device to
// device figure also counts each byte read and written. Luo et al., "Benchmarking and
// Dissecting the Nvidia Hopper GPU Architecture" (2024), measure mma.sync and wgmma on a
// Hopper GPU in the same spirit.
//
//   ./build/tools/ceilings/ceilings --csv docs/results/<gpu>/ceilings.csv
//
// The table goes to stdout; --csv also writes it as ceiling,unit,value,detail after comment lines
// naming the device (print_device_report's line), the date and the command. On a GPU other than
// compute capability 9.0 the wgmma rows have no value ("needs sm_90a"). Exit codes: 0 done, 1 a
// CUDA error or a rate that is not a positive number, 2 bad usage, 77 no usable GPU (or one older
// than sm_80).
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "shared/tensorcore/mma_ptx.cuh"  // mma_16816
#include "common/check.h"
#include "common/cli.h"     // exit codes
#include "common/device.h"  // print_device_report
#include "common/matrix.h"  // DeviceBuffer
#include "tools/ceilings/ceilings.h"

namespace {

const char* const kProgram = "ceilings";
constexpr uint64_t kSeed = 1234;

// --- FP32 FMA -----------------------------------------------------------------------------------
// kFmaChains independent FMA chains a thread (an FFMA's result is ready about 4 clocks later, so
// 8 chains keep even a lone warp issuing), kFmaUnroll FFMA a chain per loop trip so that the
// loop's own instructions take under 2% of the issue slots.
constexpr int kFmaThreads = 256, kFmaChains = 8, kFmaUnroll = 32;

__global__ void __launch_bounds__(kFmaThreads)
    fma_kernel(int iters, float x, float y, float* __restrict__ sink) {
  float v[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) v[c] = float(threadIdx.x + c);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < kFmaUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kFmaChains; ++c) v[c] = fmaf(v[c], x, y);
  }
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) s += v[c];
  sink[blockIdx.x * kFmaThreads + threadIdx.x] = s;
}

void launch_fma(int blocks, int iters, float* sink) {
  // x < 1 and y small: every chain converges towards y / (1 - x) = 1, no overflow, no denormals.
  fma_kernel<<<blocks, kFmaThreads>>>(iters, 0.999f, 0.001f, sink);
  CUDA_CHECK_LAUNCH();
}
constexpr double kFmaFlopPerThreadIter = 2.0 * kFmaChains * kFmaUnroll;

// FP32 lanes an SM (CUDA C++ Programming Guide, "Arithmetic Instructions": results per clock
// per SM of 32-bit floating-point add, multiply, multiply-add): 64 on sm_80 (A100), 128 on
// sm_86, sm_89 and sm_90, and on the later GPUs this program can run on through PTX.
int fp32_lanes_per_sm(int cc) { return cc == 80 ? 64 : 128; }

// --- mma.sync -----------------------------------------------------------------------------------
// A warp tile of 2 x 4 (16, 8) accumulators (32 floats a thread): each loop trip issues 8
// independent mma.sync, A fragment i with B fragment j into accumulator (i, j), as a GEMM's warp
// tile does for one k16 step. The fragments stay in registers: no loads in the loop.
constexpr int kMmaThreads = 256, kMmaTilesM = 2, kMmaTilesN = 4;
constexpr double kMmaFlop = 2.0 * 16 * 8 * 16;  // one mma.sync m16n8k16, one warp

__global__ void __launch_bounds__(kMmaThreads)
    mma_sync_kernel(int iters, uint64_t seed, float* __restrict__ sink) {
  const uint64_t t = uint64_t(blockIdx.x) * kMmaThreads + threadIdx.x;
  uint32_t a[kMmaTilesM][4], b[kMmaTilesN][2];
  float c[kMmaTilesM][kMmaTilesN][4] = {};
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) a[i][r] = random_bf16x2(seed, 16 * t + 4 * i + r);
#pragma unroll
  for (int j = 0; j < kMmaTilesN; ++j)
#pragma unroll
    for (int r = 0; r < 2; ++r) b[j][r] = random_bf16x2(seed, 16 * t + 8 + 2 * j + r);
#pragma unroll 2
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < kMmaTilesM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaTilesN; ++j) mma_16816(c[i][j], a[i], b[j]);
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) s += c[i][j][r];
  sink[t] = s;
}

void launch_mma_sync(int blocks, int iters, float* sink) {
  mma_sync_kernel<<<blocks, kMmaThreads>>>(iters, kSeed, sink);
  CUDA_CHECK_LAUNCH();
}
constexpr double kMmaFlopPerWarpIter = kMmaFlop * kMmaTilesM * kMmaTilesN;

// --- Timing -------------------------------------------------------------------------------------
constexpr double kTargetMs = 25;  // one timed run
constexpr int kWarmups = 2, kReps = 11;

// Enqueues n units of work (loop trips, or copies) on the default stream.
using Work = std::function<void(int64_t n)>;

struct Measured {
  int64_t n = 0;        // units of work a run
  double median_ms = 0;
};

class Events {
 public:
  Events() {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~Events() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  double time_ms(const Work& work, int64_t n) {
    CUDA_CHECK(cudaEventRecord(start_));
    work(n);
    CUDA_CHECK(cudaEventRecord(stop_));
    CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

// One untimed run (module loading, clocks up); then n grows from n0 until a run takes 2 ms,
// is scaled to kTargetMs (at most n_max), and after kWarmups runs, kReps runs give the median.
Measured measure(const Work& work, int64_t n0, int64_t n_max) {
  Events ev;
  work(n0);
  CUDA_CHECK(cudaDeviceSynchronize());
  int64_t n = n0;
  double ms = ev.time_ms(work, n);
  while (ms < 2.0 && n < n_max) {
    n = std::min(n_max, n * 8);
    ms = ev.time_ms(work, n);
  }
  n = std::clamp<int64_t>(std::llround(double(n) * kTargetMs / std::max(ms, 1e-3)), 1, n_max);
  for (int w = 0; w < kWarmups; ++w) work(n);
  std::vector<double> runs;
  for (int r = 0; r < kReps; ++r) runs.push_back(ev.time_ms(work, n));
  std::sort(runs.begin(), runs.end());
  return {n, runs[kReps / 2]};
}

// --- The table ----------------------------------------------------------------------------------
struct Row {
  std::string ceiling, unit;
  double value = NAN;  // NaN: not measured on this GPU (the CSV's value is empty)
  std::string detail;
};

std::string fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

// Blocks of `threads` that fill every SM: the SMs times the blocks one SM holds at once.
int full_grid(const void* kernel, int threads) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  return device_sm_count() * per_sm;
}

Row measure_fma(int cc, int clock_khz) {
  const int blocks = full_grid(reinterpret_cast<const void*>(fma_kernel), kFmaThreads);
  DeviceBuffer<float> sink(size_t(blocks) * kFmaThreads);
  const Measured m =
      measure([&](int64_t n) { launch_fma(blocks, int(n), sink.get()); }, 256, 1 << 30);
  const double flop = kFmaFlopPerThreadIter * double(blocks) * kFmaThreads * double(m.n);
  const int lanes = fp32_lanes_per_sm(cc);
  const double peak = double(device_sm_count()) * lanes * 2.0 * clock_khz * 1e3 / 1e12;
  const double value = flop / (m.median_ms * 1e-3) / 1e12;
  return {"fma_fp32", "TFLOP/s", value,
          fmt("FFMA from registers: %d chains x %d a trip x %d trips; %d threads x %d blocks "
              "(%d an SM); %.1f%% of the peak %.2f TFLOP/s = %d SMs x %d lanes x 2 x %.0f MHz",
              kFmaChains, kFmaUnroll, int(m.n), kFmaThreads, blocks, blocks / device_sm_count(),
              100.0 * value / peak, peak, device_sm_count(), lanes, clock_khz / 1e3)};
}

Row measure_mma_sync() {
  const int blocks = full_grid(reinterpret_cast<const void*>(mma_sync_kernel), kMmaThreads);
  DeviceBuffer<float> sink(size_t(blocks) * kMmaThreads);
  const Measured m =
      measure([&](int64_t n) { launch_mma_sync(blocks, int(n), sink.get()); }, 256, 1 << 30);
  const double warps = double(blocks) * kMmaThreads / 32;
  const double value = kMmaFlopPerWarpIter * warps * double(m.n) / (m.median_ms * 1e-3) / 1e12;
  return {"mma_sync_bf16", "TFLOP/s", value,
          fmt("mma.sync m16n8k16 BF16 -> FP32 from registers: %d independent accumulators a "
              "warp x %d trips; %d threads x %d blocks (%d an SM)",
              kMmaTilesM * kMmaTilesN, int(m.n), kMmaThreads, blocks,
              blocks / device_sm_count())};
}

Row measure_wgmma(int cc, bool fp8) {
  Row row{fp8 ? "wgmma_fp8_e4m3" : "wgmma_bf16", "TFLOP/s", NAN, "needs sm_90a"};
  if (cc != 90) return row;
  const int blocks = device_sm_count();  // one block an SM (128 accumulator registers a thread)
  double rate[4] = {};
  int64_t trips[4] = {};
  for (int consumers : {2, 3}) {
    DeviceBuffer<float> sink(size_t(blocks) * wgmma_threads(consumers));
    const Measured m = measure(
        [&](int64_t n) { launch_wgmma(consumers, fp8, blocks, int(n), kSeed, sink.get()); }, 64,
        1 << 30);
    const double flop = (fp8 ? kWgmmaFp8Flop : kWgmmaFlop) * kWgmmaKSteps * consumers *
                        double(blocks) * double(m.n);
    rate[consumers] = flop / (m.median_ms * 1e-3) / 1e12;
    trips[consumers] = m.n;
  }
  const int best = rate[3] > rate[2] ? 3 : 2, other = 5 - best;
  row.value = rate[best];
  row.detail = fmt("wgmma m64n256k%d %s -> FP32 from shared memory: %d consumer warpgroups "
                   "an SM x %d blocks; %d wgmma a commit group; wait_group 1; %lld trips "
                   "(%d warpgroups: %.1f TFLOP/s)",
                   fp8 ? 32 : 16, fp8 ? "e4m3" : "BF16", best, blocks, kWgmmaKSteps,
                   static_cast<long long>(trips[best]), other, rate[other]);
  return row;
}

Row measure_copy() {
  Row row{"copy", "GB/s", NAN, ""};
  int dev = 0, l2 = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const size_t want = std::max<size_t>(16 * size_t(l2), size_t(1) << 30);
  const size_t room = free_bytes > (size_t(512) << 20) ? (free_bytes - (size_t(512) << 20)) / 2 : 0;
  const size_t bytes = std::min(want, room) & ~((size_t(1) << 20) - 1);  // whole MiB
  if (bytes < 4 * size_t(l2)) {
    row.detail = fmt("not enough free GPU memory for two buffers of 4x the L2 (%.0f MiB free)",
                     free_bytes / 1048576.0);
    return row;
  }
  DeviceBuffer<char> src(bytes), dst(bytes);
  CUDA_CHECK(cudaMemset(src.get(), 0x5A, bytes));  // no reads of uninitialised memory
  const Measured m = measure(
      [&](int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice));
      },
      1, 10000);
  row.value = 2.0 * double(bytes) * double(m.n) / (m.median_ms * 1e-3) / 1e9;
  row.detail = fmt("cudaMemcpyAsync device to device of %.0f MiB (%.1fx the %.0f MiB L2) x %lld "
                   "a run; bytes read + written",
                   bytes / 1048576.0, double(bytes) / l2, l2 / 1048576.0,
                   static_cast<long long>(m.n));
  return row;
}

// print_device_report's line, for the CSV's "# device:" comment.
std::string device_line() {
  FILE* f = std::tmpfile();
  if (!f) return "unknown";
  print_device_report(f);
  std::rewind(f);
  char buf[1024] = {};
  std::string line = "unknown";
  while (std::fgets(buf, sizeof buf, f))
    if (std::strncmp(buf, "GPU ", 4) == 0) {
      line = buf;
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
      break;
    }
  std::fclose(f);
  return line;
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char buf[16] = {};
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::localtime(&now));
  return buf;
}

const char* const kUsage =
    "usage: ceilings [--csv FILE] [--help]\n"
    "Measures on this GPU what the tutorial's kernels are measured against: FP32 FMA and\n"
    "mma.sync BF16 from registers, wgmma BF16 from shared memory (sm_90a), and device to\n"
    "device copy bandwidth. Prints a table; --csv FILE writes it as CSV (ceiling,unit,value,\n"
    "detail) after comment lines naming the device, the date and the command.\n";

}  // namespace

int main(int argc, char** argv) {
  // 1. Arguments, before any GPU work: bad usage exits 2 even where there is no GPU.
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return kExitPass;
    } else if (arg == "--csv") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: error: --csv needs a value\n", kProgram);
        return kExitUsage;
      }
      csv = argv[++i];
    } else {
      std::fprintf(stderr, "%s: error: unknown option '%s' (see --help)\n", kProgram,
                   arg.c_str());
      return kExitUsage;
    }
  }
  if (!csv.empty()) {
    FILE* f = std::fopen(csv.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "%s: error: --csv: cannot write '%s'\n", kProgram, csv.c_str());
      return kExitUsage;
    }
    std::fclose(f);
  }

  // 2. The GPU.
  if (!cuda_device_available()) {
    std::fprintf(stderr, "%s: no usable CUDA device; skipping\n", kProgram);
    return kExitSkip;
  }
  const int cc = device_compute_capability();
  if (cc < 80) {
    std::fprintf(stderr, "%s: needs compute capability 8.0 or newer (mma.sync with BF16); this "
                 "GPU is %d.%d; skipping\n", kProgram, cc / 10, cc % 10);
    return kExitSkip;
  }
  const std::string device = device_line();
  std::printf("%s\n", device.c_str());
  int dev = 0, clock_khz = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));

  // 3. The ceilings.
  std::vector<Row> rows;
  rows.push_back(measure_fma(cc, clock_khz));
  rows.push_back(measure_mma_sync());
  rows.push_back(measure_wgmma(cc, false));
  rows.push_back(measure_copy());
  rows.push_back(measure_wgmma(cc, true));  // chapter 10's (FP8); last, so the rows before keep
                                            // their places

  std::printf("\n%-14s %10s  %-8s %s\n", "ceiling", "value", "unit", "detail");
  for (const Row& r : rows)
    std::printf("%-14s %10s  %-8s %s\n", r.ceiling.c_str(),
                std::isnan(r.value) ? "-" : fmt("%.2f", r.value).c_str(), r.unit.c_str(),
                r.detail.c_str());

  if (!csv.empty()) {
    FILE* f = std::fopen(csv.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "%s: error: --csv: cannot write '%s'\n", kProgram, csv.c_str());
      return kExitUsage;
    }
    std::string command = argv[0];
    for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
    std::fprintf(f, "# device: %s\n# date: %s\n# command: %s\n", device.c_str(), today().c_str(),
                 command.c_str());
    std::fprintf(f, "ceiling,unit,value,detail\n");
    for (const Row& r : rows) {
      // The details hold no commas or quotes, so no field needs quoting.
      std::fprintf(f, "%s,%s,%s,%s\n", r.ceiling.c_str(), r.unit.c_str(),
                   std::isnan(r.value) ? "" : fmt("%.2f", r.value).c_str(), r.detail.c_str());
    }
    if (std::fclose(f) != 0) {
      std::fprintf(stderr, "%s: error: --csv: cannot write '%s'\n", kProgram, csv.c_str());
      return kExitFail;
    }
  }

  // A measured rate must be a positive number: zero or infinity means the timing is broken.
  // (NaN is a row not measured on this GPU: wgmma off sm_90a, the copy without the memory.)
  for (const Row& r : rows)
    if (!std::isnan(r.value) && !(r.value > 0 && std::isfinite(r.value))) {
      std::fprintf(stderr, "%s: error: %s measured %g %s\n", kProgram, r.ceiling.c_str(),
                   r.value, r.unit.c_str());
      return kExitFail;
    }
  return kExitPass;
}
