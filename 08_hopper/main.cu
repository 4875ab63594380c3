// Chapter 08's program: wgmma and TMA on the H100, step by step, next to chapter 07's answer and
// cuBLAS (cublasGemmEx, BF16 in, FP32 accumulate and out, Bᵀ).
#include "shared/tensorcore/pipelined.cuh"
#include "shared/hopper/hopper.cuh"
#include "common/gemm.h"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "08_hopper/hopper";
  spec.summary =
      "Chapter 08: Hopper's wgmma and TMA: synchronous loads, TMA, a TMA pipeline, warp "
      "specialization, a persistent grid, a staged epilogue, a smaller tile, the last "
      "wave split along K, a menu of tiles, two accumulators, one consumer warpgroup, and a "
      "tile and schedule per shape (BF16 A and Bᵀ, FP32 accumulate and C; sm_90a).";
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
      {"staged", kBt, launch_staged},
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
      // Experiments (08_hopper/experiments/, NOTES.md): the ring without a tile in flight,
      // clusters with the Bᵀ tile multicast (a side step from group16 that was no faster), and
      // Stream-K.
      {"tma_ring", kBt, launch_tma_ring, Role::kSweep},
      {"cluster", kBt, launch_cluster, Role::kSweep},
      // Stream-K: every K-tile of every tile dealt evenly; correct, and slower than split_wave.
      {"stream_k", kBt, launch_stream_k, Role::kSweep},
      {"stream_k128", kBt, launch_stream_k128, Role::kSweep},
      // Yours to write (exercises/consumer_barriers.cuh): --kernel ex_consumer_barriers.
      {"ex_consumer_barriers", kBt, launch_ex_consumer_barriers, Role::kExercise},
  };
  return run_gemm_chapter(spec, kernels, argc, argv);
}
