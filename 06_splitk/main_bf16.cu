// Chapter 06's BF16 program: split-K on chapter 05's best mma.sync kernel, workspace and atomic
// variants, next to the unsplit kernel and cuBLAS (cublasGemmEx, BF16 in, FP32 accumulate and
// out, Bᵀ layout), all checked against the exact product.
#include <string>

#include "shared/tensorcore/splitk.cuh"
#include "common/gemm.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "06_splitk/splitk_bf16";
  spec.summary =
      "Chapter 06: split-K (workspace + fixed-order reduction, or atomics) on chapter 05's "
      "mma.sync kernel (BF16 in, FP32 out, Bᵀ).";
  spec.default_shapes = {{256, 256, 65536}, {128, 128, 131072}, {512, 512, 16384},
                         {64, 4096, 8192}, {4096, 4096, 4096}};
  spec.min_cc = 80;
  spec.min_cc_why = "mma.sync with BF16";
  spec.options.push_back({"--splits", "S",
                          "number of K slices S (default: the heuristic, README); 1 <= S <= K",
                          1, 1 << 20, &g_mma_splits,
                          [](int64_t s, const Shape& sh) -> std::string {
                            if (s > sh.K)
                              return std::to_string(s) + " slices are more than K = " +
                                     std::to_string(sh.K);
                            return "";
                          }});
  constexpr BLayout kBt = BLayout::kTransposed;
  const std::vector<Bf16GemmKernel> kernels = {
      {"cublas", kBt, nullptr},
      {"mma_unsplit", kBt, launch_mma_unsplit, Role::kPrevious},  // 05's best, S = 1
      {"splitk_mma_atomic", kBt, launch_splitk_mma_atomic},
      {"splitk_mma", kBt, launch_splitk_mma, Role::kBest},
  };
  return run_gemm_chapter(spec, kernels, argc, argv);
}
