#include "reference.h"

#include <vector>

#include "check.h"

Cublas::Cublas(CublasMath math) {
  CUBLAS_CHECK(cublasCreate(&h_));
  CUBLAS_CHECK(cublasSetMathMode(
      h_, math == CublasMath::kPedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH));
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

void Cublas::gemm(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B,
                  BLayout layout, float* C) {
  // The same operand swap as sgemm; only the types differ.
  const float one = 1.0f, zero = 0.0f;
  const bool row_major = layout == BLayout::kRowMajor;
  CUBLAS_CHECK(cublasGemmEx(h_, row_major ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one,
                            B, CUDA_R_16BF, row_major ? N : K, A, CUDA_R_16BF, K, &zero, C,
                            CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
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

namespace {
// One thread per element of C, a 16 x 16 block, K walked through shared tiles of 16. x runs
// over the columns of C (up to 2^16 blocks of 16: within gridDim.x's 2^31 - 1); the block rows
// are a grid-stride loop over y, since 2^20 rows are 65,536 blocks of 16, one more than
// gridDim.y allows.
template <typename T>
__global__ void gemm_fp64_kernel(int M, int N, int K, const T* A, const T* B, bool b_row_major,
                                 float* C) {
  __shared__ double As[16][17], Bs[16][17];  // (16, 16) tiles of A and B, padded
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int n = blockIdx.x * 16 + tx;
  const int n_load = blockIdx.x * 16 + ty;  // Bᵀ tile: thread (tx, ty) loads element (n, k)
  for (int m0 = blockIdx.y * 16; m0 < M; m0 += gridDim.y * 16) {  // the same for the block
    const int m = m0 + ty;
    double acc = 0;
    for (int64_t k0 = 0; k0 < K; k0 += 16) {
      const int64_t ka = k0 + tx, kb = k0 + ty;
      As[ty][tx] = (m < M && ka < K) ? static_cast<double>(A[int64_t(m) * K + ka]) : 0.0;
      if (b_row_major)
        Bs[ty][tx] = (kb < K && n < N) ? static_cast<double>(B[kb * N + n]) : 0.0;
      else
        Bs[tx][ty] =
            (n_load < N && ka < K) ? static_cast<double>(B[int64_t(n_load) * K + ka]) : 0.0;
      __syncthreads();  // both tiles complete before they are read
      for (int k = 0; k < 16; ++k) acc += As[ty][k] * Bs[k][tx];
      __syncthreads();  // all reads done before the next tiles overwrite them
    }
    if (m < M && n < N) C[int64_t(m) * N + n] = static_cast<float>(acc);
  }
}
}  // namespace

template <typename T>
void gpu_gemm_fp64(int M, int N, int K, const T* A, const T* B, BLayout layout, float* C) {
  const int tiles_m = ceil_div(M, 16);
  dim3 block(16, 16), grid(ceil_div(N, 16), tiles_m < 32768 ? tiles_m : 32768);
  gemm_fp64_kernel<<<grid, block>>>(M, N, K, A, B, layout == BLayout::kRowMajor, C);
  CUDA_CHECK_LAUNCH();
}
template void gpu_gemm_fp64(int, int, int, const float*, const float*, BLayout, float*);
template void gpu_gemm_fp64(int, int, int, const __nv_bfloat16*, const __nv_bfloat16*, BLayout,
                            float*);
