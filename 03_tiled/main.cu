// Chapter 03's program: the three tiled kernels next to 01's coalesced kernel and cuBLAS.
#include "01_naive/naive.cuh"
#include "03_tiled/tiled.cuh"
#include "common/gemm.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "03_tiled/tiled";
  spec.summary = "Chapter 03: shared-memory tiling, 1D and 2D register blocking (FP32).";
  spec.default_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4000, 3000, 2000}};
  static const std::vector<GemmKernel> kernels = {
      {"cublas", BLayout::kRowMajor, nullptr},
      // cuBLAS in its default math mode, timed as a % of the pedantic FP32 `cublas` above.
      {"cublas_default_math", BLayout::kRowMajor, nullptr, Role::kBaseline, CublasMath::kDefault},
      {"naive_coalesced", BLayout::kRowMajor, launch_naive_coalesced, Role::kPrevious},  // 01
      {"tiled_smem", BLayout::kRowMajor, launch_tiled_smem},
      {"tiled_1d", BLayout::kRowMajor, launch_tiled_1d},
      {"tiled_2d", BLayout::kRowMajor, launch_tiled_2d, Role::kBest},
      // Yours to write (exercises/register_tile.cuh): --kernel ex_register_tile.
      {"ex_register_tile", BLayout::kRowMajor, launch_ex_register_tile, Role::kExercise},
      // The K-slab sweep behind tiled_2d's BK (experiments/bk_sweep.cuh, NOTES.md): --kernel sweep.
      {"tiled_2d_bk8", BLayout::kRowMajor, launch_tiled_2d_bk8, Role::kSweep},
      {"tiled_2d_bk16", BLayout::kRowMajor, launch_tiled_2d_bk16, Role::kSweep},
      {"tiled_2d_bk32", BLayout::kRowMajor, launch_tiled_2d_bk32, Role::kSweep},
  };
  return run_gemm_chapter(spec, kernels, argc, argv);
}
