// Chapter 08's program: wgmma and TMA, step by step, next to chapter 07's answer and
// cuBLAS (cublasGemmEx, BF16 in, FP32 accumulate and out, Bᵀ).
#include "shared/tensorcore/pipelined.cuh"
#include "shared/hopper/hopper.cuh"
#include "common/gemm.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "08_hopper/hopper";
  spec.summary =
      "Chapter 08: Hopper's main loop: wgmma with synchronous loads, TMA, a TMA pipeline, "
      "warp specialization, a persistent grid, a staged epilogue (BF16 A and Bᵀ, FP32 "
      "accumulate and C; sm_90a).";
  spec.default_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4097, 4095, 4093}};
  spec.min_cc = 90;
  spec.exact_cc = true;
  spec.min_cc_why = "wgmma, TMA and setmaxnreg are compiled for sm_90a, which runs on 9.0 only";
  constexpr BLayout kBt = BLayout::kTransposed;
  const std::vector<Bf16GemmKernel> kernels = {
      {"cublas_bt", kBt, nullptr},
      {"pipelined", kBt, launch_pipelined, Role::kPrevious},  // chapter 07's answer
      {"wgmma_sync", kBt, launch_wgmma_sync},
      {"tma", kBt, launch_tma},
      {"tma_pipe", kBt, launch_tma_pipe},
      {"warp_spec", kBt, launch_warp_spec},
      {"raster", kBt, launch_hopper_raster},
      {"persistent", kBt, launch_persistent},
      {"group16", kBt, launch_group16},
      {"staged", kBt, launch_staged, Role::kBest},
      // Experiments (08_hopper/experiments/, NOTES.md): the ring without a tile in flight, and
      // clusters with the Bᵀ tile multicast (a side step from group16 that was no faster).
      {"tma_ring", kBt, launch_tma_ring, Role::kSweep},
      {"cluster", kBt, launch_cluster, Role::kSweep},
      // warp_spec at tma_pipe's 128 x 128 tile: step 3's two changes apart (NOTES.md).
      {"warp_spec_128", kBt, launch_warp_spec_128, Role::kSweep},
      // Yours to write (exercises/consumer_barriers.cuh): --kernel ex_consumer_barriers.
      {"ex_consumer_barriers", kBt, launch_ex_consumer_barriers, Role::kExercise},
  };
  return run_gemm_chapter(spec, kernels, argc, argv);
}
