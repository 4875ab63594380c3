#include "reference.h"

#include <vector>

#include "check.h"

Cublas::Cublas() {
  CUBLAS_CHECK(cublasCreate(&h_));
  CUBLAS_CHECK(cublasSetMathMode(h_, CUBLAS_PEDANTIC_MATH));
}

Cublas::~Cublas() { cublasDestroy(h_); }

// cuBLAS is column-major. A row-major r x c matrix, read column-major with leading dimension
// c, is its c x r transpose. So row-major C = A * B is column-major Cᵀ = Bᵀ * Aᵀ, where each
// transpose costs nothing: pass B as the first operand and A as the second, with the sizes
// (N, M, K) and leading dimensions (N, K, N). This is the only place in the tutorial that swaps.
void Cublas::sgemm(int M, int N, int K, const float* A, const float* B, BLayout layout, float* C) {
  const float one = 1.0f, zero = 0.0f;
  if (layout == BLayout::kRowMajor) {
    // B row-major K x N == column-major Bᵀ (N x K, ld N): used as is.
    CUBLAS_CHECK(cublasSgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N));
  } else {
    // Bᵀ row-major N x K == column-major B (K x N, ld K): cuBLAS transposes it (OP_T).
    CUBLAS_CHECK(cublasSgemm(h_, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, B, K, A, K, &zero, C, N));
  }
}

void Cublas::transpose(int rows, int cols, const float* in, float* out) {
  // Column-major view: in is a cols x rows matrix (ld cols); out is rows x cols (ld rows) and
  // must equal its transpose, out = 1 * opT(in) + 0 * (anything).
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSgeam(h_, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one, in, cols, &zero, out,
                           rows, out, rows));
}

void cpu_gemm(int M, int N, int K, const float* A, const float* B, float* C) {
  std::vector<double> row(N);
  for (int m = 0; m < M; ++m) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int k = 0; k < K; ++k) {
      double a = A[static_cast<size_t>(m) * K + k];
      const float* b = B + static_cast<size_t>(k) * N;
      for (int n = 0; n < N; ++n) row[n] += a * b[n];
    }
    for (int n = 0; n < N; ++n) C[static_cast<size_t>(m) * N + n] = static_cast<float>(row[n]);
  }
}
