// Chapter 04's program: the trap and its fixes, the SIMT ladder and the best SIMT kernel, next
// to chapter 03's kernels and cuBLAS for both B layouts. The kernels: kernels.cu (the step
// files in reading order, then the experiments); the reader's exercise: exercises/exercises.cu.
#include "03_tiled/tiled.cuh"
#include "04_coalesced/coalesced.cuh"
#include "shared/simt/simt.cuh"
#include "common/gemm.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "04_coalesced/coalesced";
  spec.summary =
      "Chapter 04: Bᵀ (K-major) loads, the bank-conflict trap and its fix, the SIMT ladder to "
      "the best SIMT kernel (FP32).";
  spec.default_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4000, 3000, 2000}};
  constexpr BLayout kB = BLayout::kRowMajor, kBt = BLayout::kTransposed;
  std::vector<GemmKernel> kernels = {
      {"cublas", kB, nullptr},
      {"cublas_bt", kBt, nullptr},
      // cuBLAS in its default math mode, timed as a % of the pedantic FP32 `cublas` above.
      {"cublas_default_math", kB, nullptr, Role::kBaseline, CublasMath::kDefault},
      {"tiled_smem", kB, launch_tiled_smem, Role::kPrevious},  // chapter 03, B row-major
      {"tiled_bt_trap", kBt, launch_tiled_bt_trap},
      {"tiled_bt_padded", kBt, launch_tiled_bt_padded},
      {"tiled_bt_swizzled", kBt, launch_tiled_bt_swizzled},
      // The same three with registers left to ptxas: unequal occupancy (the README's occupancy
      // confound; experiments/free_occupancy.cuh). Only by name or with --kernel sweep.
      {"tiled_bt_trap_free", kBt, launch_tiled_bt_trap_free, Role::kSweep},
      {"tiled_bt_padded_free", kBt, launch_tiled_bt_padded_free, Role::kSweep},
      {"tiled_bt_swizzled_free", kBt, launch_tiled_bt_swizzled_free, Role::kSweep},
      // Yours to write (exercises/fix_the_trap.cuh): --kernel ex_fix_the_trap.
      {"ex_fix_the_trap", kBt, launch_ex_fix_the_trap, Role::kExercise},
      {"tiled_2d", kB, launch_tiled_2d, Role::kPrevious},  // ch. 03's best: the ladder starts here
      {"simt_lds128", kB, launch_simt_lds128},
      {"simt_vec", kB, launch_simt_vec},
      {"simt_swizzle", kB, launch_simt_swizzle},
      {"simt_warps", kB, launch_simt_warps},
      {"simt_bigtile", kB, launch_simt_bigtile},
      {"simt", kB, launch_simt},  // double buffering on the 128 x 256 tile, at every shape
      {"simt_bt", kBt, launch_simt_bt},
      // The chapter's answer for every size: the tile chosen for the shape (choose_simt_tile).
      {"simt_auto", kB, launch_simt_auto, Role::kBest},
      {"simt_bt_auto", kBt, launch_simt_bt_auto, Role::kBest},
  };
  // Each block tile of the shape heuristic by name (--kernel simt_64x64 overrides the
  // heuristic; experiments/tiles.cuh), and the tile sweep behind SimtBest
  // (experiments/tile_sweep.cuh): only with --kernel sweep or by name.
  for (int i = 0; i < kSimtTilesSize; ++i)
    kernels.push_back({kSimtTiles[i].name, kSimtTiles[i].bt ? kBt : kB, kSimtTiles[i].launch,
                       Role::kSweep});
  for (int i = 0; i < kSimtSweepSize; ++i)
    kernels.push_back({kSimtSweep[i].name, kSimtSweep[i].bt ? kBt : kB, kSimtSweep[i].launch,
                       Role::kSweep});
  return run_gemm_chapter(spec, kernels, argc, argv);
}
