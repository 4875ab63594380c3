// Chapter 05's program: WMMA, then mma.sync with LDS, with ldmatrix, and with a swizzled tile,
// next to cuBLAS (cublasGemmEx, BF16 in, FP32 compute and out) on the same Bᵀ layout. The
// kernels are the step files (steps/, in this order) and the sweep (experiments/mma_sweep.cuh).
#include "shared/tensorcore/tensorcore.cuh"
#include "common/gemm.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "05_tensorcore/tensorcore";
  spec.summary =
      "Chapter 05: tensor cores (WMMA with generic and with shared fragment loads, mma.sync "
      "with LDS, ldmatrix, swizzled tiles); BF16 A and Bᵀ, FP32 accumulate and C.";
  spec.default_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4097, 4095, 4093}};
  spec.min_cc = 80;
  spec.min_cc_why = "mma.sync with BF16 and ldmatrix need sm_80 or newer";
  constexpr BLayout kBt = BLayout::kTransposed;
  std::vector<Bf16GemmKernel> kernels = {
      {"cublas_bt", kBt, nullptr},
      {"wmma", kBt, launch_wmma},
      {"wmma_shared", kBt, launch_wmma_shared},
      {"mma_lds", kBt, launch_mma_lds},
      {"mma_ldmatrix", kBt, launch_mma_ldmatrix},
      {"mma_swizzle", kBt, launch_mma_swizzle},
      {"mma_tuned", kBt, launch_mma_tuned, Role::kBest},
      // Yours to write (exercises/ldmatrix_fragments.cuh): --kernel ex_ldmatrix_fragments.
      {"ex_ldmatrix_fragments", kBt, launch_ex_ldmatrix_fragments, Role::kExercise},
  };
  // The tile sweep behind mma_tuned (NOTES.md): --kernel sweep.
  for (int i = 0; i < kMmaSweepSize; ++i)
    kernels.push_back({kMmaSweep[i].name, kBt, kMmaSweep[i].launch, Role::kSweep});
  return run_gemm_chapter(spec, kernels, argc, argv);
}
