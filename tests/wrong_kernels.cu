// Deliberately wrong kernels, built only for the tests. Each runs through the very driver the
// chapters use (run_gemm_chapter, run_copy_chapter), and the tests expect it to FAIL
// (`should_fail: true` in tests/meson.build): proof, end to end, that the check path catches
// a wrong kernel: a missing term of the sum, one element off by one, a wrong output stride,
// and a store one element outside the output (right values in it, so only the guard zones
// around it, common/matrix.h, can see that one).
// The BF16 pair goes through the tensor-core chapters' path (exact FP64 reference, the
// tensor-core tolerance), which is a different check from the FP32 one.
//
//   ./build/tests/wrong_kernels gemm --kernel wrong_skip_k --check --shapes 64x64x64   # exit 1
//   ./build/tests/wrong_kernels gemm_bf16 --kernel bf16_skip_k --check --shapes 64x64x4096
//   ./build/tests/wrong_kernels transpose --kernel transpose_wrong_stride --check --shapes 31x33
//   ./build/tests/wrong_kernels gemm --kernel wrong_past_end --check --shapes 1x1x1     # exit 1
//   ./build/tests/wrong_kernels transpose --kernel transpose_past_end --check --shapes 31x33
#include <cstring>

#include "01_naive/naive.cuh"
#include "02_transpose_copy/copy_chapter.h"
#include "02_transpose_copy/transpose.cuh"
#include "common/gemm.h"

namespace {

// 01's naive_coalesced_kernel with the loop bound off by one: k < K - 1 drops the last
// product term of every element of C (all of it when K = 1).
__global__ void wrong_skip_k_kernel(int M, int N, int K, const float* __restrict__ A,
                                    const float* __restrict__ B, float* __restrict__ C) {
  const RowCol e = naive_coalesced_element(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
  if (e.row >= M || e.col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K - 1; ++k) acc += A[e.row * K + k] * B[k * N + e.col];  // wrong: K - 1
  C[e.row * N + e.col] = acc;
}

// Correct everywhere but one element, C(M / 2, N / 2), which is 1 too large. rms(C) is
// sqrt(K) / 3 and the tolerance (8/3) u K, so an error of 1 is out of it for K < 6.3 million.
__global__ void wrong_off_by_one_kernel(int M, int N, int K, const float* __restrict__ A,
                                        const float* __restrict__ B, float* __restrict__ C) {
  const RowCol e = naive_coalesced_element(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
  if (e.row >= M || e.col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[e.row * K + k] * B[k * N + e.col];
  if (e.row == M / 2 && e.col == N / 2) acc += 1.0f;  // wrong: one element off by one
  C[e.row * N + e.col] = acc;
}

// Correct in every element of C, and one store more, by one thread: Where = +1, the thread of
// the last element also stores it at C[M N], one past the end (the tail overrun of a missing
// bounds check); Where = -1, the thread of C(0, 0) also stores at C[-1]. C itself is right, so
// only the guard zone after (before) C can fail it; one thread, one store: no race, the same
// at every run.
template <int Where>
__global__ void wrong_outside_kernel(int M, int N, int K, const float* __restrict__ A,
                                     const float* __restrict__ B, float* __restrict__ C) {
  const RowCol e = naive_coalesced_element(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
  if (e.row >= M || e.col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[e.row * K + k] * B[k * N + e.col];
  C[e.row * N + e.col] = acc;
  if (Where > 0 && e.row == M - 1 && e.col == N - 1) C[int64_t(M) * N] = acc;  // wrong: C[M N]
  if (Where < 0 && e.row == 0 && e.col == 0) C[-1] = acc;                     // wrong: C[-1]
}

template <auto Kernel>
void launch_naive_like(int M, int N, int K, const float* A, const float* B, float* C) {
  dim3 block(kNaiveBlock, kNaiveBlock);
  dim3 grid(ceil_div(N, kNaiveBlock), ceil_div(M, kNaiveBlock));
  Kernel<<<grid, block>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}

// BF16 A (M x K) and Bᵀ (N x K), one thread per element of C, FP32 sums over k < K - Skip:
// Skip = 0 is right (the control), Skip = 1 drops the last product term of every element.
template <int Skip>
__global__ void bf16_naive_kernel(int M, int N, int K, const __nv_bfloat16* __restrict__ A,
                                  const __nv_bfloat16* __restrict__ Bt, float* __restrict__ C) {
  const RowCol e = naive_coalesced_element(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
  if (e.row >= M || e.col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K - Skip; ++k)
    acc = fmaf(__bfloat162float(A[int64_t(e.row) * K + k]),
               __bfloat162float(Bt[int64_t(e.col) * K + k]), acc);
  C[int64_t(e.row) * N + e.col] = acc;
}

template <int Skip>
void launch_bf16_naive(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* Bt,
                       float* C) {
  dim3 block(kNaiveBlock, kNaiveBlock);
  dim3 grid(ceil_div(N, kNaiveBlock), ceil_div(M, kNaiveBlock));
  bf16_naive_kernel<Skip><<<grid, block>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}

// A transpose with the classic stride mistake: output rows are `cols` long instead of `rows`.
// Right for square matrices, wrong for every other shape (writes that would leave the buffer
// are dropped, so the error is in the values, not a crash).
__global__ void transpose_wrong_stride_kernel(int rows, int cols, const float* __restrict__ in,
                                              float* __restrict__ out) {
  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell g = tile_cell(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    if (g.row >= rows || g.col >= cols) continue;
    const int64_t o = int64_t(g.col) * cols + g.row;  // wrong: the stride is rows
    if (o < int64_t(rows) * cols) out[o] = in[g.row * cols + g.col];
  }
}

void launch_transpose_wrong_stride(int rows, int cols, const float* in, float* out) {
  dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTile));
  transpose_wrong_stride_kernel<<<grid, dim3(kTile, kBlockRows)>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

// A right transpose whose thread of the last input element also stores it one past the end of
// the output, at out[rows cols]: only the guard after the output sees it. One store: no race.
__global__ void transpose_past_end_kernel(int rows, int cols, const float* __restrict__ in,
                                          float* __restrict__ out) {
  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell g = tile_cell(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    if (g.row >= rows || g.col >= cols) continue;
    const float v = in[g.row * cols + g.col];
    out[int64_t(g.col) * rows + g.row] = v;
    if (g.row == rows - 1 && g.col == cols - 1) out[int64_t(rows) * cols] = v;  // wrong
  }
}

void launch_transpose_past_end(int rows, int cols, const float* in, float* out) {
  dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTile));
  transpose_past_end_kernel<<<grid, dim3(kTile, kBlockRows)>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

int main(int argc, char** argv) {
  const bool gemm = argc > 1 && std::strcmp(argv[1], "gemm") == 0;
  const bool gemm_bf16 = argc > 1 && std::strcmp(argv[1], "gemm_bf16") == 0;
  const bool transpose = argc > 1 && std::strcmp(argv[1], "transpose") == 0;
  if (!gemm && !gemm_bf16 && !transpose) {
    std::fprintf(stderr, "usage: wrong_kernels gemm|gemm_bf16|transpose [chapter options]\n");
    return kExitUsage;
  }
  argv[1] = argv[0];  // the driver parses the rest as a chapter program would
  CliSpec spec;
  spec.default_shapes = {{64, 64, 64}};
  if (gemm) {
    spec.program = "tests/wrong_kernels gemm";
    spec.summary = "Deliberately wrong GEMMs: each must fail verification.";
    static const std::vector<GemmKernel> kernels = {
        {"cublas", BLayout::kRowMajor, nullptr},
        {"naive_coalesced", BLayout::kRowMajor, launch_naive_coalesced},  // a right one
        {"wrong_skip_k", BLayout::kRowMajor, launch_naive_like<wrong_skip_k_kernel>},
        {"wrong_off_by_one", BLayout::kRowMajor, launch_naive_like<wrong_off_by_one_kernel>},
        {"wrong_past_end", BLayout::kRowMajor, launch_naive_like<wrong_outside_kernel<1>>},
        {"wrong_before_start", BLayout::kRowMajor, launch_naive_like<wrong_outside_kernel<-1>>},
    };
    return run_gemm_chapter(spec, kernels, argc - 1, argv + 1);
  }
  if (gemm_bf16) {
    spec.program = "tests/wrong_kernels gemm_bf16";
    spec.summary = "A deliberately wrong BF16 GEMM: it must fail verification.";
    static const std::vector<Bf16GemmKernel> kernels = {
        {"cublas_bt", BLayout::kTransposed, nullptr},
        {"bf16_naive", BLayout::kTransposed, launch_bf16_naive<0>},  // a right one
        {"bf16_skip_k", BLayout::kTransposed, launch_bf16_naive<1>},
    };
    return run_gemm_chapter(spec, kernels, argc - 1, argv + 1);
  }
  spec.program = "tests/wrong_kernels transpose";
  spec.summary = "Deliberately wrong transposes: each must fail verification.";
  spec.default_shapes = {{31, 33}};
  static const std::vector<CopyKernel> kernels = {
      {"cublas_geam", "", CopyOp::kTranspose, nullptr, Role::kBaseline},
      {"transpose_padded", "cublas_geam", CopyOp::kTranspose, launch_transpose_padded},
      {"transpose_wrong_stride", "cublas_geam", CopyOp::kTranspose, launch_transpose_wrong_stride},
      {"transpose_past_end", "cublas_geam", CopyOp::kTranspose, launch_transpose_past_end},
  };
  return run_copy_chapter(spec, kernels, argc - 1, argv + 1);
}
