// Error checks used by every chapter.
//
//   CUDA_CHECK(cudaMalloc(&p, bytes));   // any CUDA runtime call
//   CUBLAS_CHECK(cublasCreate(&h));      // any cuBLAS call
//   my_kernel<<<grid, block>>>(...);
//   CUDA_CHECK_LAUNCH();                 // after every kernel launch
//
// On failure they print the failing expression, the error, file and line, and exit(1).
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CUDA_CHECK(expr)                                                                     \
  do {                                                                                       \
    cudaError_t err_ = (expr);                                                               \
    if (err_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "error: %s failed: %s (%s) at %s:%d\n", #expr,                   \
                   cudaGetErrorString(err_), cudaGetErrorName(err_), __FILE__, __LINE__);    \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

#define CUBLAS_CHECK(expr)                                                                   \
  do {                                                                                       \
    cublasStatus_t st_ = (expr);                                                             \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                      \
      std::fprintf(stderr, "error: %s failed: %s at %s:%d\n", #expr,                        \
                   cublasGetStatusString(st_), __FILE__, __LINE__);                          \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// A launch reports bad configurations (too many threads, too much shared memory) only
// through cudaGetLastError; faults inside the kernel surface at the next synchronising call.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// A driver function (cuTensorMapEncodeTiled, cuStreamWriteValue32, ...) by name and the CUDA
// version of its signature, through the runtime (cudaGetDriverEntryPointByVersion, the CUDA 13
// form of cudaGetDriverEntryPoint): no link against libcuda. Absent, one line and exit(1).
//   static auto fn = reinterpret_cast<PFN_cuX_v12000>(driver_function("cuX", 12000));
inline void* driver_function(const char* name, unsigned version) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || p == nullptr) {
    std::fprintf(stderr, "error: %s not found in the driver\n", name);
    std::exit(1);
  }
  return p;
}

// Integer ceiling division, for grid sizes: ceil_div(1000, 32) == 32.
__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
