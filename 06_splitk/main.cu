// Chapter 06's FP32 program: split-K on chapter 04's SIMT kernel, workspace and atomic
// variants, next to the unsplit kernel and cuBLAS SGEMM (pure FP32, Bᵀ layout). The kernels:
// simt_kernels.cu (steps/1_simt_splitk.cuh) and splitk.cu; the reader's exercise:
// exercises/exercises.cu.
#include <string>

#include "shared/tensorcore/splitk.cuh"
#include "common/gemm.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "06_splitk/splitk";
  spec.summary =
      "Chapter 06: split-K (workspace + fixed-order reduction, or atomics) on chapter 04's "
      "SIMT kernel (FP32, Bᵀ).";
  spec.default_shapes = {{256, 256, 65536}, {128, 128, 131072}, {512, 512, 16384},
                         {64, 4096, 8192}, {4096, 4096, 4096}};
  spec.options.push_back({"--splits", "S",
                          "number of K slices S (default: the heuristic, README); 1 <= S <= K",
                          1, 1 << 20, &g_simt_splits,
                          [](int64_t s, const Shape& sh) -> std::string {
                            if (s > sh.K)
                              return std::to_string(s) + " slices are more than K = " +
                                     std::to_string(sh.K);
                            return "";
                          }});
  constexpr BLayout kBt = BLayout::kTransposed;
  const std::vector<GemmKernel> kernels = {
      {"cublas_bt", kBt, nullptr},
      {"simt_bt_unsplit", kBt, launch_simt_bt_unsplit, Role::kPrevious},  // 04's kernel, S = 1
      {"splitk_simt_atomic", kBt, launch_splitk_simt_atomic},
      {"splitk_simt", kBt, launch_splitk_simt, Role::kBest},
      // Yours to write (exercises/deterministic_reduction.cuh): splitk_simt with your reduction.
      {"ex_deterministic_reduction", kBt, launch_ex_deterministic_reduction, Role::kExercise},
  };
  return run_gemm_chapter(spec, kernels, argc, argv);
}
