// Chapter 09's program: chapter 08's kernel at every shape, step by step, next to chapter 07's
// and chapter 08's answers and cuBLAS (cublasGemmEx, BF16 in, FP32 accumulate and out, Bᵀ).
#include "09_every_shape/schedule.cuh"
#include "common/gemm.h"
#include "shared/hopper/hopper.cuh"
#include "shared/tensorcore/pipelined.cuh"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "09_every_shape/every_shape";
  spec.summary =
      "Chapter 09: every shape on any Hopper GPU: a smaller tile, the last wave split along K, "
      "a menu of tiles, two accumulators, one consumer warpgroup, and a tile and schedule per "
      "shape (BF16 A and Bᵀ, FP32 accumulate and C; sm_90a).";
  spec.default_shapes = {{3072, 3072, 3072}, {1536, 1536, 1536}, {256, 256, 65536},
                         {32, 4096, 4096}};
  spec.min_cc = 90;
  spec.exact_cc = true;
  spec.min_cc_why = "wgmma, TMA and setmaxnreg are compiled for sm_90a, which runs on 9.0 only";
  constexpr BLayout kBt = BLayout::kTransposed;
  const std::vector<Bf16GemmKernel> kernels = {
      {"cublas_bt", kBt, nullptr},
      {"pipelined", kBt, launch_pipelined, Role::kPrevious},  // chapter 07's answer
      {"staged", kBt, launch_staged, Role::kPrevious},        // chapter 08's answer
      {"tile128", kBt, launch_tile128},
      {"split_wave", kBt, launch_split_wave},
      {"split_wave128", kBt, launch_split_wave128},
      {"m128x192", kBt, launch_m128x192},
      {"m128x144", kBt, launch_m128x144},
      {"m64x128", kBt, launch_m64x128},
      {"m64x64", kBt, launch_m64x64},
      {"acc2_64x128", kBt, launch_acc2_64x128},
      {"acc2_64x64", kBt, launch_acc2_64x64},
      {"wg1_64x128", kBt, launch_wg1_64x128},
      {"wg1_64x64", kBt, launch_wg1_64x64},
      {"hopper", kBt, launch_hopper, Role::kBest},
      // Stream-K (experiments/stream_k.cuh, NOTES.md): every K-tile of every tile dealt evenly;
      // correct, and slower than split_wave.
      {"stream_k", kBt, launch_stream_k, Role::kSweep},
      {"stream_k128", kBt, launch_stream_k128, Role::kSweep},
      // Yours to write (exercises/split_plan.cuh): --kernel ex_split_plan.
      {"ex_split_plan", kBt, launch_ex_split_plan, Role::kExercise},
  };
  return run_gemm_chapter(spec, kernels, argc, argv);
}
