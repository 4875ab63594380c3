// References: cuBLAS with the same types and layouts as the chapter's kernels, and a CPU
// product in double precision for small shapes (which checks the cuBLAS call itself).
#pragma once

#include <cublas_v2.h>

// How B is stored. kRowMajor: B is K x N row-major. kTransposed: Bᵀ is stored, N x K
// row-major ("K-major", the layout of a Linear layer's weight).
enum class BLayout { kRowMajor, kTransposed };

// One cuBLAS handle in pure FP32: CUBLAS_PEDANTIC_MATH forbids TF32 and any other reduced
// precision, so the FP32 chapters race cuBLAS on equal terms.
class Cublas {
 public:
  Cublas();
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // Row-major C (M x N) = A (M x K) * B, with B stored as `layout` says.
  void sgemm(int M, int N, int K, const float* A, const float* B, BLayout layout, float* C);

  // Row-major out (cols x rows) = inᵀ, in is rows x cols (cublasSgeam with a transposed operand).
  void transpose(int rows, int cols, const float* in, float* out);

 private:
  cublasHandle_t h_ = nullptr;
};

// C = A * B in double precision on the CPU; A (M x K), B (K x N), C (M x N), all row-major.
void cpu_gemm(int M, int N, int K, const float* A, const float* B, float* C);
