// References: cuBLAS with the same types and layouts as the chapter's kernels, and a CPU
// product in double precision for small shapes (which checks the cuBLAS call itself).
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>

// How B is stored. kRowMajor: B is K x N row-major. kTransposed: Bᵀ is stored, N x K
// row-major ("K-major", the layout of a Linear layer's weight).
enum class BLayout { kRowMajor, kTransposed };

// kPedantic (CUBLAS_PEDANTIC_MATH) forbids TF32 and any other reduced precision: the FP32
// chapters race cuBLAS on equal terms. kDefault is cuBLAS as most programs call it; for SGEMM it
// is FP32 too (TF32 needs CUBLAS_TF32_TENSOR_OP_MATH), and the FP32 chapters time it once next to
// pedantic mode to show that the stricter mode costs nothing. The BF16 chapters use kDefault.
enum class CublasMath { kPedantic, kDefault };

// One cuBLAS handle.
class Cublas {
 public:
  explicit Cublas(CublasMath math = CublasMath::kPedantic);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // Row-major C (M x N) = A (M x K) * B, with B stored as `layout` says.
  void sgemm(int M, int N, int K, const float* A, const float* B, BLayout layout, float* C);
  // The same product with BF16 A and B, FP32 accumulation and FP32 C (cublasGemmEx,
  // CUBLAS_COMPUTE_32F): the yardstick of the tensor-core chapters.
  void gemm(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, BLayout layout,
            float* C);
  void gemm(int M, int N, int K, const float* A, const float* B, BLayout layout, float* C) {
    sgemm(M, N, K, A, B, layout, C);
  }

  // Row-major out (cols x rows) = inᵀ, in is rows x cols (cublasSgeam with a transposed operand).
  void transpose(int rows, int cols, const float* in, float* out);

 private:
  cublasHandle_t h_ = nullptr;
};

// C = A * B in double precision on the CPU; A (M x K), B (K x N), C (M x N), all row-major.
void cpu_gemm(int M, int N, int K, const float* A, const float* B, float* C);

// The same on the GPU, for sizes the CPU would take minutes on: every product and sum in double
// precision (a product of two BF16 or FP32 values is exact in double), rounded to float once.
// B is stored as `layout` says. Simple and slow (about 1 TFLOP/s on an H100): a reference.
template <typename T>
void gpu_gemm_fp64(int M, int N, int K, const T* A, const T* B, BLayout layout, float* C);
