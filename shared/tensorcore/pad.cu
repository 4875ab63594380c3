// Chapter 07: copying a K-major operand into rows of round_up(K, 8) elements (zeros after K), so
// that its rows are 16-byte aligned for cp.async (chapter 07) and TMA (chapter 08). See pad.cuh.
#include "shared/tensorcore/pad.cuh"

#include <algorithm>
#include <cstdint>

#include "common/check.h"
#include "common/matrix.h"

namespace {

// Y (rows x Kp) = X (rows x K) with zero columns K .. Kp - 1. Each thread writes 16 bytes.
__global__ void pad_rows_kernel(const __nv_bfloat16* __restrict__ X, int64_t rows, int K, int Kp,
                                __nv_bfloat16* __restrict__ Y) {
  const int pieces = Kp / 8;
  const int64_t total = rows * pieces;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / pieces;
    const int k = int(i % pieces) * 8;
    const unsigned short* x = reinterpret_cast<const unsigned short*>(X + r * K);
    uint32_t w[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const uint32_t lo = k + 2 * e < K ? x[k + 2 * e] : 0;
      const uint32_t hi = k + 2 * e + 1 < K ? x[k + 2 * e + 1] : 0;
      w[e] = lo | hi << 16;
    }
    *reinterpret_cast<uint4*>(Y + r * Kp + k) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// The padded copies of A and Bᵀ: grown when needed and kept, so a timed call allocates nothing.
__nv_bfloat16* pad_buffer(int which, size_t elems) {
  static DeviceBuffer<__nv_bfloat16> buf[2];
  return buf[which].reserve(elems);
}

}  // namespace

const __nv_bfloat16* pad_rows(int which, const __nv_bfloat16* X, int rows, int K, int Kp) {
  __nv_bfloat16* Y = pad_buffer(which, size_t(rows) * Kp);
  const int64_t total = int64_t(rows) * (Kp / 8);
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((total + threads - 1) / threads, 65535);
  pad_rows_kernel<<<unsigned(blocks), threads>>>(X, rows, K, Kp, Y);
  CUDA_CHECK_LAUNCH();
  return Y;
}

bool rows_aligned(int K, const __nv_bfloat16* A, const __nv_bfloat16* Bt) {
  return K % 8 == 0 && reinterpret_cast<uintptr_t>(A) % 16 == 0 &&
         reinterpret_cast<uintptr_t>(Bt) % 16 == 0;
}

void pad_operands_if_unaligned(int M, int N, int& K, const __nv_bfloat16*& A,
                               const __nv_bfloat16*& Bt) {
  if (rows_aligned(K, A, Bt)) return;
  const int Kp = (K + 7) / 8 * 8;
  A = pad_rows(0, A, M, K, Kp);
  Bt = pad_rows(1, Bt, N, K, Kp);
  K = Kp;
}
