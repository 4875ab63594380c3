// Chapter 01's program: the two naive kernels (steps/) next to cuBLAS; the lesson is README.md.
#include "01_naive/naive.cuh"
#include "common/gemm.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "01_naive/naive";
  spec.summary = "Chapter 01: naive SGEMM, uncoalesced vs coalesced thread mapping (FP32).";
  spec.default_shapes = {{4096, 4096, 4096}, {2048, 2048, 2048}};
  static const std::vector<GemmKernel> kernels = {
      {"cublas", BLayout::kRowMajor, nullptr},
      // cuBLAS in its default math mode, timed as a % of the pedantic FP32 `cublas` above.
      {"cublas_default_math", BLayout::kRowMajor, nullptr, Role::kBaseline, CublasMath::kDefault},
      {"naive_uncoalesced", BLayout::kRowMajor, launch_naive_uncoalesced},
      {"naive_coalesced", BLayout::kRowMajor, launch_naive_coalesced, Role::kBest},
      // Yours to write (exercises/coalesced_mapping.cuh): --kernel ex_coalesced_mapping.
      {"ex_coalesced_mapping", BLayout::kRowMajor, launch_ex_coalesced_mapping, Role::kExercise},
  };
  return run_gemm_chapter(spec, kernels, argc, argv);
}
