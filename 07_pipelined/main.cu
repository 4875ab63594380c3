// Chapter 07's program: cp.async pipelining on chapter 05's best mma.sync kernel, step by step,
// next to chapter 05's kernel and cuBLAS (cublasGemmEx, BF16 in, FP32 accumulate and out, Bᵀ).
// The kernels: kernels.cu (the step files in reading order, then the experiments).
#include "shared/tensorcore/tensorcore.cuh"
#include "shared/tensorcore/pipelined.cuh"
#include "common/gemm.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "07_pipelined/pipelined";
  spec.summary =
      "Chapter 07: cp.async multi-stage pipelining, fragment double buffering, block order, "
      "an autotuned choice with split-K (BF16 A and Bᵀ, FP32 accumulate and C).";
  spec.default_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4097, 4095, 4093},
                         {256, 256, 65536},  {128, 128, 131072}, {512, 512, 16384}};
  spec.min_cc = 80;
  spec.min_cc_why = "cp.async, ldmatrix and mma.sync with BF16 need sm_80 or newer";
  constexpr BLayout kBt = BLayout::kTransposed;
  std::vector<Bf16GemmKernel> kernels = {
      {"cublas_bt", kBt, nullptr},
      {"mma_tuned", kBt, launch_mma_tuned, Role::kPrevious},  // chapter 05's best
      {"cp_async2", kBt, launch_cp_async2},
      {"stages", kBt, launch_stages},
      {"frag_db", kBt, launch_frag_db},
      {"spread", kBt, launch_spread},
      {"raster", kBt, launch_raster},
      {"epilogue", kBt, launch_epilogue},
      {"pipelined", kBt, launch_pipelined, Role::kBest},
      // Yours to write (exercises/cp_async_pipeline.cuh): --kernel ex_cp_async_pipeline (S = 2)
      // and ex_cp_async_pipeline_s3 (S = 3), the same lines.
      {"ex_cp_async_pipeline", kBt, launch_ex_cp_async_pipeline, Role::kExercise},
      {"ex_cp_async_pipeline_s3", kBt, launch_ex_cp_async_pipeline_s3, Role::kExercise},
  };
  // The experiments (experiments/, NOTES.md): only with --kernel sweep or by name.
  for (int i = 0; i < kPipeSweepSize; ++i)
    kernels.push_back({kPipeSweep[i].name, kBt, kPipeSweep[i].launch, Role::kSweep});
  return run_gemm_chapter(spec, kernels, argc, argv);
}
