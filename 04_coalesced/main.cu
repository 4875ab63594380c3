// Chapter 04's program: the trap, its fixes and the best SIMT kernel, next to chapter 03's
// kernels and cuBLAS for both B layouts.
#include "03_tiled/tiled.cuh"
#include "04_coalesced/coalesced.cuh"
#include "common/gemm.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "04_coalesced/coalesced";
  spec.summary =
      "Chapter 04: Bᵀ (K-major) loads, the bank-conflict trap and its fix, the best SIMT "
      "kernel (FP32).";
  spec.default_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4000, 3000, 2000}};
  constexpr BLayout kB = BLayout::kRowMajor, kBt = BLayout::kTransposed;
  const std::vector<GemmKernel> kernels = {
      {"cublas", kB, nullptr},
      {"cublas_bt", kBt, nullptr},
      // cuBLAS in its default math mode, timed as a % of the pedantic FP32 `cublas` above.
      {"cublas_default_math", kB, nullptr, Role::kBaseline, CublasMath::kDefault},
      {"tiled_smem", kB, launch_tiled_smem, Role::kPrevious},  // chapter 03, B row-major
      {"tiled_bt_trap", kBt, launch_tiled_bt_trap},
      {"tiled_bt_padded", kBt, launch_tiled_bt_padded},
      {"tiled_bt_swizzled", kBt, launch_tiled_bt_swizzled},
      // The same three with registers left to ptxas: unequal occupancy (README side note).
      // Only by name (or --kernel sweep): they are the side note, not a step.
      {"tiled_bt_trap_free", kBt, launch_tiled_bt_trap_free, Role::kSweep},
      {"tiled_bt_padded_free", kBt, launch_tiled_bt_padded_free, Role::kSweep},
      {"tiled_bt_swizzled_free", kBt, launch_tiled_bt_swizzled_free, Role::kSweep},
      {"tiled_2d", kB, launch_tiled_2d, Role::kPrevious},  // chapter 03's best
      {"simt", kB, launch_simt},
      {"simt_bt", kBt, launch_simt_bt},
  };
  std::vector<GemmKernel> all = kernels;
  // The sweep of tile shapes (Bᵀ layout); simt and simt_bt use the winner.
  for (int i = 0; i < kSimtSweepSize; ++i) all.push_back({kSimtSweep[i].name, kBt, kSimtSweep[i].launch});
  return run_gemm_chapter(spec, all, argc, argv);
}
