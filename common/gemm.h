// What a GEMM chapter program needs: list its kernels, call run_gemm_chapter.
//
//   static const std::vector<GemmKernel> kKernels = {
//       {"cublas", BLayout::kRowMajor, nullptr},              // nullptr: cuBLAS itself
//       {"naive_coalesced", BLayout::kRowMajor, launch_naive_coalesced},
//   };
//   int main(int argc, char** argv) { return run_gemm_chapter(spec, kKernels, argc, argv); }
//
// Inputs are random in [-1, 1) from the seed. The tensor-core chapters list Bf16GemmKernel:
// their inputs are the same values rounded to BF16 once, and C is FP32.
//
// References. FP32: cuBLAS in pure FP32 (the first cuBLAS entry), itself checked against a CPU
// product in double precision at small sizes. BF16: the exact product of the BF16 inputs,
// computed in double precision (on the CPU at small sizes, on the GPU above), against which
// cuBLAS is checked like every other kernel. Every kernel is timed against the first cuBLAS
// entry of its own B layout.
#pragma once

#include <cuda_bf16.h>

#include <vector>

#include "cli.h"
#include "driver.h"
#include "reference.h"

// Row-major C (M x N) = A (M x K) * B, B stored K x N (kRowMajor) or as Bᵀ, N x K (kTransposed).
// T is the type of A and B (float or __nv_bfloat16); C is always FP32. Launches on the default
// stream.
template <typename T>
using GemmLauncherT = void (*)(int M, int N, int K, const T* A, const T* B, float* C);
using GemmLauncher = GemmLauncherT<float>;
using Bf16GemmLauncher = GemmLauncherT<__nv_bfloat16>;

template <typename T>
struct GemmKernelT {
  const char* name;
  BLayout layout;
  GemmLauncherT<T> launch;    // nullptr: cuBLAS with this layout (Role::kBaseline)
  Role role = Role::kStep;
  CublasMath math = CublasMath::kPedantic;  // cuBLAS entries of the FP32 chapters only
};
using GemmKernel = GemmKernelT<float>;
using Bf16GemmKernel = GemmKernelT<__nv_bfloat16>;

int run_gemm_chapter(const CliSpec& spec, const std::vector<GemmKernel>& kernels, int argc,
                     char** argv);
int run_gemm_chapter(const CliSpec& spec, const std::vector<Bf16GemmKernel>& kernels, int argc,
                     char** argv);
