// What a GEMM chapter program needs: list its kernels, call run_gemm_chapter.
//
//   static const GemmKernel kKernels[] = {
//       {"cublas", BLayout::kRowMajor, nullptr},              // nullptr: cuBLAS itself
//       {"naive_coalesced", BLayout::kRowMajor, launch_naive_coalesced},
//   };
//   int main(int argc, char** argv) { return run_gemm_chapter(spec, kKernels, argc, argv); }
//
// Inputs are random in [-1, 1) from the seed; the reference is cuBLAS (pure FP32) with the
// first cuBLAS entry's layout, itself checked against a CPU product in double precision at
// small sizes. Every kernel is compared with the cuBLAS entry of its own B layout.
#pragma once

#include <vector>

#include "cli.h"
#include "reference.h"

// Row-major C (M x N) = A (M x K) * B, B stored K x N (kRowMajor) or as Bᵀ, N x K (kTransposed).
// Launches on the default stream.
using GemmLauncher = void (*)(int M, int N, int K, const float* A, const float* B, float* C);

struct GemmKernel {
  const char* name;
  BLayout layout;
  GemmLauncher launch;  // nullptr: cuBLAS with this layout (a baseline)
};

int run_gemm_chapter(const CliSpec& spec, const std::vector<GemmKernel>& kernels, int argc,
                     char** argv);
