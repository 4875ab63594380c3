// Chapter 01 — the naive SGEMM: one thread per element of C, operands straight from global
// memory. Two kernels that differ only in how threads map to elements of C.
//
// New in this chapter: everything (it is the first). C = A * B, row-major FP32,
// A is M x K, B is K x N, C is M x N.
//
// The program (main.cu) runs both next to cuBLAS. Build and run (from the repository root):
//   meson setup build && meson compile -C build
//   ./build/01_naive/naive                        # check, then benchmark at 4096^3 and 2048^3
//   ./build/01_naive/naive --kernel naive_coalesced --size 1000 --bench
//   meson test -C build --suite 01_naive          # correctness at many shapes
// Explanation and measurements: 01_naive/README.md
#include "01_naive/naive.cuh"

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

// Consecutive threads of a warp compute consecutive ROWS of one column of C.
__global__ void naive_uncoalesced_kernel(int M, int N, int K, const float* __restrict__ A,
                                         const float* __restrict__ B, float* __restrict__ C) {
  const RowCol e = naive_uncoalesced_element(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
  if (e.row >= M || e.col >= N) return;  // the grid is rounded up to whole blocks
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += A[e.row * K + k] * B[k * N + e.col];  // A: 32 rows apart per warp -> 32 sectors
  C[e.row * N + e.col] = acc;                    // strided store: 32 sectors per warp
}

// Consecutive threads of a warp compute consecutive COLUMNS of one row of C.
__global__ void naive_coalesced_kernel(int M, int N, int K, const float* __restrict__ A,
                                       const float* __restrict__ B, float* __restrict__ C) {
  const RowCol e = naive_coalesced_element(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
  if (e.row >= M || e.col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += A[e.row * K + k] * B[k * N + e.col];  // A: one address per warp (broadcast);
                                                 // B: 32 consecutive floats -> 4 sectors
  C[e.row * N + e.col] = acc;                    // 128 contiguous bytes per warp
}

// ---------------------------------------------------------------------------------------------
// Launchers: the grid covers C with 32 x 32 blocks, rounded up.
// ---------------------------------------------------------------------------------------------

void launch_naive_uncoalesced(int M, int N, int K, const float* A, const float* B, float* C) {
  dim3 block(kNaiveBlock, kNaiveBlock);
  dim3 grid(ceil_div(M, kNaiveBlock), ceil_div(N, kNaiveBlock));  // x runs over rows
  naive_uncoalesced_kernel<<<grid, block>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}

void launch_naive_coalesced(int M, int N, int K, const float* A, const float* B, float* C) {
  dim3 block(kNaiveBlock, kNaiveBlock);
  dim3 grid(ceil_div(N, kNaiveBlock), ceil_div(M, kNaiveBlock));  // x runs over columns
  naive_coalesced_kernel<<<grid, block>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}
