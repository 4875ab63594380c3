// Chapter 05, step 1: wmma. The multiply-adds move onto the tensor cores through the portable
// C++ API (nvcuda::wmma): BF16 fragments of (16, 16), FP32 accumulators, one warp-wide
// wmma::mma_sync per fragment pair. The tiling and the loads are chapter 04's: (128, 128) block
// tiles, BK 32, 8 warps of (64, 32), double-buffered shared tiles padded by 16 bytes a row.
// Which lane holds which element is the API's secret.
//
//   ./build/05_tensorcore/tensorcore --kernel wmma --size 4096 --bench
//
// Included once, by 05_tensorcore/kernels.cu.
#pragma once

#include <mma.h>

#include "shared/tensorcore/mma_ptx.cuh"
#include "shared/tensorcore/tensorcore.cuh"
#include "shared/tensorcore/tile_loader.cuh"

__global__ void __launch_bounds__(wmma_cfg::kThreads, 2)
    wmma_kernel(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ Bt,
                float* __restrict__ C) {
  using namespace nvcuda;
  using namespace wmma_cfg;
  using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>;
  // B(k, n) = Bᵀ(n, k): the Bᵀ tile read as a column-major (16 k, 16 n) matrix.
  using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major>;
  constexpr int FM = WM / 16, FN = WN / 16;  // fragments per warp
  // Two stages of tiles, then (after the main loop) each warp's (16, 16) FP32 staging area.
  constexpr int kTileBytes = 2 * (ATile::kElems + BTile::kElems) * 2;
  constexpr int kStageBytes = kThreads / 32 * 16 * 16 * 4;
  __shared__ __align__(128) unsigned char smem[kTileBytes > kStageBytes ? kTileBytes : kStageBytes];
  bf16* As = reinterpret_cast<bf16*>(smem);  // 2 stages of (BM, BK), rows of BK + 8
  bf16* Bs = As + 2 * ATile::kElems;         // 2 stages of (BN, BK), rows of BK + 8

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int wm = (warp / (BN / WN)) * WM, wn = (warp % (BN / WN)) * WN;
  const bool a_vec = K % 8 == 0 && aligned(A, 16), b_vec = K % 8 == 0 && aligned(Bt, 16);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];  // (16, 16) tiles of C
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  // Chapter 04's double buffering: the next tile's loads are in flight while this one is
  // computed, then stored into the other stage.
  TileLoader<BM, BK, TileLayout::kPadded, kThreads> a_ld;
  TileLoader<BN, BK, TileLayout::kPadded, kThreads> b_ld;
  const int tiles = ceil_div(K, BK);
  a_ld.load(A, M, K, m0, 0, K, a_vec);
  b_ld.load(Bt, N, K, n0, 0, K, b_vec);
  a_ld.store(As);
  b_ld.store(Bs);
  __syncthreads();  // stage 0 is complete before any warp reads it

  for (int t = 0; t < tiles; ++t) {
    const int stage = t % 2;
    if (t + 1 < tiles) {
      a_ld.load(A, M, K, m0, (t + 1) * BK, K, a_vec);
      b_ld.load(Bt, N, K, n0, (t + 1) * BK, K, b_vec);
    }
    const bf16* as = As + stage * ATile::kElems;
    const bf16* bs = Bs + stage * BTile::kElems;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      FragA a[FM];
      FragB b[FN];
#pragma unroll
      for (int i = 0; i < FM; ++i)
        wmma::load_matrix_sync(a[i], as + ATile::offset(wm + 16 * i, kk), ATile::kRowElems);
#pragma unroll
      for (int j = 0; j < FN; ++j)
        wmma::load_matrix_sync(b[j], bs + BTile::offset(wn + 16 * j, kk), BTile::kRowElems);
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    // The other stage was last read in iteration t - 1, which every warp has finished.
    if (t + 1 < tiles) {
      a_ld.store(As + (1 - stage) * ATile::kElems);
      b_ld.store(Bs + (1 - stage) * BTile::kElems);
    }
    __syncthreads();  // the next stage is complete, and this one is free to be overwritten
  }

  // Epilogue. A fragment inside C goes straight to global memory with store_matrix_sync,
  // which needs a 32-byte-aligned address: C aligned and N % 8 == 0 (the fragment's column is
  // a multiple of 16). Which lane holds which accumulator element is unspecified for WMMA, so
  // any other fragment goes through a (16, 16) staging area in shared memory (the tiles are
  // free now), from which lane l writes row l / 2, columns 8 (l % 2) .. + 7, masked at the edges.
  const bool c_direct = N % 8 == 0 && aligned(C, 32);
  float* stage = reinterpret_cast<float*>(smem) + warp * 16 * 16;
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) {
      const int fm = m0 + wm + 16 * i, fn = n0 + wn + 16 * j;  // the fragment's corner in C
      if (c_direct && fm + 16 <= M && fn + 16 <= N) {  // the same for the whole warp
        wmma::store_matrix_sync(C + static_cast<int64_t>(fm) * N + fn, acc[i][j], N,
                                wmma::mem_row_major);
        continue;
      }
      wmma::store_matrix_sync(stage, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();  // the fragment is in shared memory before lanes read other lanes' parts
      const int r = lane / 2, c = 8 * (lane % 2);
      const int m = fm + r, n = fn + c;
      if (m < M)
#pragma unroll
        for (int q = 0; q < 8; ++q)
          if (n + q < N) C[static_cast<int64_t>(m) * N + n + q] = stage[r * 16 + c + q];
      __syncwarp();  // everyone has read the area before the next fragment overwrites it
    }
}

void launch_wmma(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  using namespace wmma_cfg;
  dim3 grid(ceil_div(N, BN), ceil_div(M, BM));
  wmma_kernel<<<grid, kThreads>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}
