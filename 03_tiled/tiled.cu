// Chapter 03 — shared-memory tiling, then register blocking.
//
// New since chapter 01 (naive_coalesced): three steps, each a diff on the last.
//   tiled_smem  (32, 32) tiles of A and B are staged in shared memory; each element loaded
//               from global memory once per block instead of once per thread.
//   tiled_1d    each thread computes TM = 8 outputs of a column; a B value read from shared
//               memory is reused from a register TM times.
//   tiled_2d    each thread computes a TM x TN = 8 x 8 micro-tile as outer products of
//               register-cached slices of A and B.
// C = A * B, row-major FP32, A is M x K, B is K x N; every M, N, K >= 1 (partial tiles are
// zero-filled on load and masked on store).
//
// Build and run (from the repository root):
//   meson setup build && meson compile -C build
//   ./build/03_tiled/tiled                        # check, then bench at the default sizes
//   ./build/03_tiled/tiled --kernel tiled_2d --m 1000 --n 1000 --k 999
//   meson test -C build --suite 03_tiled
// Explanation and measurements: 03_tiled/README.md
#include "03_tiled/tiled.cuh"

// ---------------------------------------------------------------------------------------------
// Kernel 1: shared-memory tiling. Block (32, 32) computes a (32, 32) tile of C; it walks K in
// steps of 32, staging a (32, 32) tile of A and one of B in shared memory.
// ---------------------------------------------------------------------------------------------
__global__ void tiled_smem_kernel(int M, int N, int K, const float* __restrict__ A,
                                  const float* __restrict__ B, float* __restrict__ C) {
  constexpr int T = kSmemTile;
  __shared__ float As[T][T];  // (T, T) tile of A: rows of C's tile, a K-slab
  __shared__ float Bs[T][T];  // (T, T) tile of B: a K-slab, columns of C's tile

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T + ty;  // as in 01's coalesced kernel: threadIdx.x walks a row
  const int col = blockIdx.x * T + tx;
  float acc = 0.0f;

  for (int k0 = 0; k0 < K; k0 += T) {
    // Each thread loads one element of each tile; a warp reads 32 consecutive floats of a row
    // of A and of B (coalesced). Outside the matrix: 0, which adds nothing to the sum.
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them

    for (int k = 0; k < T; ++k)
      acc += As[ty][k] * Bs[k][tx];  // As: one word per warp (broadcast); Bs: 32 banks
    __syncthreads();  // everyone is done reading before the next iteration overwrites the tiles
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

void launch_tiled_smem(int M, int N, int K, const float* A, const float* B, float* C) {
  dim3 block(kSmemTile, kSmemTile);
  dim3 grid(ceil_div(N, kSmemTile), ceil_div(M, kSmemTile));
  tiled_smem_kernel<<<grid, block>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------------
// Kernel 2: 1D register blocking. Block tile (BM, BN) = (64, 64), K-slab BK = 8, 512 threads.
// Thread t computes rows (t / BN) * TM + i, i < TM, of column t % BN: one B value from shared
// memory feeds TM multiply-adds.
// ---------------------------------------------------------------------------------------------
__global__ void __launch_bounds__(k1dThreads)
    tiled_1d_kernel(int M, int N, int K, const float* __restrict__ A,
                    const float* __restrict__ B, float* __restrict__ C) {
  constexpr int BM = k1dBM, BN = k1dBN, BK = k1dBK, TM = k1dTM;
  static_assert(BM * BK == k1dThreads && BK * BN == k1dThreads,
                "each thread loads exactly one element of each tile");
  __shared__ float As[BM][BK];  // (BM, BK) tile of A
  __shared__ float Bs[BK][BN];  // (BK, BN) tile of B

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tcol = tid % BN;        // this thread's column of the block tile
  const int trow = tid / BN * TM;   // first of its TM rows; a warp (32 < BN) shares it
  // Loader coordinates: one element of each tile per thread, consecutive threads along a row.
  const int a_r = tid / BK, a_c = tid % BK;
  const int b_r = tid / BN, b_c = tid % BN;

  float acc[TM] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    As[a_r][a_c] = (m0 + a_r < M && k0 + a_c < K) ? A[(m0 + a_r) * K + k0 + a_c] : 0.0f;
    Bs[b_r][b_c] = (k0 + b_r < K && n0 + b_c < N) ? B[(k0 + b_r) * N + n0 + b_c] : 0.0f;
    __syncthreads();  // tiles complete before use

    for (int k = 0; k < BK; ++k) {
      const float b = Bs[k][tcol];  // kept in a register for TM multiply-adds
      for (int i = 0; i < TM; ++i) acc[i] += As[trow + i][k] * b;  // broadcast within a warp
    }
    __syncthreads();  // tiles consumed before they are overwritten
  }
  for (int i = 0; i < TM; ++i)
    if (m0 + trow + i < M && n0 + tcol < N) C[(m0 + trow + i) * N + n0 + tcol] = acc[i];
}

void launch_tiled_1d(int M, int N, int K, const float* A, const float* B, float* C) {
  dim3 grid(ceil_div(N, k1dBN), ceil_div(M, k1dBM));
  tiled_1d_kernel<<<grid, k1dThreads>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------------
// Kernel 3: 2D register blocking. Block tile (BM, BN), K-slab BK; thread computes a (TM, TN)
// micro-tile. Per k: TM values of A and TN of B go to registers, then TM * TN multiply-adds
// (an outer product): TM + TN shared loads for TM * TN FMAs instead of 1 + TM.
// ---------------------------------------------------------------------------------------------
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(Tile2d<BM, BN, TM, TN>::kThreads)
    tiled_2d_kernel(int M, int N, int K, const float* __restrict__ A,
                    const float* __restrict__ B, float* __restrict__ C) {
  using Tile = Tile2d<BM, BN, TM, TN>;
  constexpr int kThreads = Tile::kThreads;
  static_assert(BM % TM == 0 && BN % TN == 0, "micro-tiles divide the block tile");
  static_assert((BM * BK) % kThreads == 0 && (BK * BN) % kThreads == 0,
                "the threads load whole tiles in equal shares");
  static_assert(kThreads % BK == 0 && kThreads % BN == 0, "loader rows are whole");
  __shared__ float As[BM][BK];  // (BM, BK) tile of A
  __shared__ float Bs[BK][BN];  // (BK, BN) tile of B

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  float acc[TM][TN] = {};
  float a_frag[TM], b_frag[TN];

  for (int k0 = 0; k0 < K; k0 += BK) {
    // Each thread loads (BM * BK) / kThreads elements of A: consecutive threads along a row.
    for (int e = tid; e < BM * BK; e += kThreads) {
      const int r = e / BK, c = e % BK;
      As[r][c] = (m0 + r < M && k0 + c < K) ? A[(m0 + r) * K + k0 + c] : 0.0f;
    }
    for (int e = tid; e < BK * BN; e += kThreads) {
      const int r = e / BN, c = e % BN;
      Bs[r][c] = (k0 + r < K && n0 + c < N) ? B[(k0 + r) * N + n0 + c] : 0.0f;
    }
    __syncthreads();  // tiles complete before use

    // Unrolled: the loads of step k + 1 can be issued while step k's FMAs run. Without the
    // pragma nvcc unrolls the i and j loops but keeps this one, and every step waits for its
    // own loads (seen in the SASS: one copy of the 16 LDS and 64 FFMA, in a loop).
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      for (int i = 0; i < TM; ++i) a_frag[i] = (&As[0][0])[Tile::template a_word<BK>(tid, i, k)];
      for (int j = 0; j < TN; ++j) b_frag[j] = (&Bs[0][0])[Tile::b_word(tid, j, k)];
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];  // outer product
    }
    __syncthreads();  // tiles consumed before they are overwritten
  }

  for (int i = 0; i < TM; ++i) {
    const int m = m0 + Tile::row(tid, i);
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + Tile::col(tid, j);
      if (m < M && n < N) C[m * N + n] = acc[i][j];
    }
  }
}

template <int BK>
void launch_tiled_2d_bk(int M, int N, int K, const float* A, const float* B, float* C) {
  constexpr int BM = 128, BN = 128, TM = 8, TN = 8;
  dim3 grid(ceil_div(N, BN), ceil_div(M, BM));
  tiled_2d_kernel<BM, BN, BK, TM, TN><<<grid, Tile2d<BM, BN, TM, TN>::kThreads>>>(M, N, K, A, B, C);
  CUDA_CHECK_LAUNCH();
}

// The K-slab sweep of the README, with the (128, 128) block tile and 8 x 8 per thread.
void launch_tiled_2d_bk8(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_tiled_2d_bk<8>(M, N, K, A, B, C);
}
void launch_tiled_2d_bk16(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_tiled_2d_bk<16>(M, N, K, A, B, C);
}
void launch_tiled_2d_bk32(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_tiled_2d_bk<32>(M, N, K, A, B, C);
}

// The configuration tiled_2d runs. In the sweep BK = 16 and 32 are within 1% of each other
// (README); 16 needs half the shared memory.
void launch_tiled_2d(int M, int N, int K, const float* A, const float* B, float* C) {
  launch_tiled_2d_bk<16>(M, N, K, A, B, C);
}
