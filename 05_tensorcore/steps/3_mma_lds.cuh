// Chapter 05, step 3: mma_lds. The PTX instruction mma.sync.aligned.m16n8k16 (mma_16816) in
// place of the WMMA API: the fragment layout is now ours (Mma16816, tensorcore.cuh), each
// fragment register filled by one 32-bit LDS of two BF16 neighbours along k from the padded
// tile, and the epilogue stores C straight from the registers. Same tiling (MmaStep).
//
//   ./build/05_tensorcore/tensorcore --kernel mma_lds --size 4096 --bench
//   tools/steps.py diff mma_lds              # against steps/2_wmma_shared.cuh
//
// Included once, by 05_tensorcore/kernels.cu.
#pragma once

#include "shared/tensorcore/mma_ptx.cuh"
#include "shared/tensorcore/tensorcore.cuh"
#include "shared/tensorcore/tile_loader.cuh"

template <typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, mma_min_blocks<Cfg, true>())
    mma_lds_kernel(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ Bt,
                   float* __restrict__ C) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  using ATile = SmemTile<BM, BK, TileLayout::kPadded>;
  using BTile = SmemTile<BN, BK, TileLayout::kPadded>;
  // Dynamic shared memory: its size depends on Cfg (MmaBest's 96 KiB is more than the 48 KiB a
  // static array may have).
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* As = reinterpret_cast<bf16*>(smem);  // 2 stages of (BM, BK), rows of BK + 8
  bf16* Bs = As + 2 * ATile::kElems;         // 2 stages of (BN, BK), rows of BK + 8

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
  const bool a_vec = K % 8 == 0 && aligned(A, 16), b_vec = K % 8 == 0 && aligned(Bt, 16);

  float acc[MI][NI][4] = {};  // C fragments: MI x NI tiles of (16, 8), 4 FP32 a lane each

  // Chapter 04's double buffering: the next tile's loads are in flight while this one is
  // computed, then stored into the other stage.
  TileLoader<BM, BK, TileLayout::kPadded, Cfg::kThreads> a_ld;
  TileLoader<BN, BK, TileLayout::kPadded, Cfg::kThreads> b_ld;
  const int tiles = ceil_div(K, BK);
  a_ld.load(A, M, K, m0, 0, K, a_vec);
  b_ld.load(Bt, N, K, n0, 0, K, b_vec);
  a_ld.store(As);
  b_ld.store(Bs);
  __syncthreads();  // stage 0 is complete before any warp reads it

  for (int t = 0, k_next = BK; t < tiles; ++t, k_next += BK) {  // k_next: the next tile's k
    const int stage = t % 2;
    if (t + 1 < tiles) {
      a_ld.load(A, M, K, m0, k_next, K, a_vec);
      b_ld.load(Bt, N, K, n0, k_next, K, b_vec);
    }
    const bf16* as = As + stage * ATile::kElems;
    const bf16* bs = Bs + stage * BTile::kElems;
#pragma unroll
    for (int s = 0; s < BK / 16; ++s) {  // k16 steps
      uint32_t a[MI][4], b[NI][2];
      // A fragment i, register r: the 2 BF16 at (a_row, a_col) of the fragment map, one LDS.32
      // (adjacent in k, so adjacent in the K-major tile).
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          a[i][r] = *reinterpret_cast<const uint32_t*>(
              as + ATile::offset(wm + 16 * i + Mma16816::a_row(lane, r),
                                 16 * s + Mma16816::a_col(lane, r, 0)));
      // B fragment j, register r: the 2 BF16 at (b_n, b_k), one LDS.32.
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int r = 0; r < 2; ++r)
          b[j][r] = *reinterpret_cast<const uint32_t*>(
              bs + BTile::offset(wn + 8 * j + Mma16816::b_n(lane),
                                 16 * s + Mma16816::b_k(lane, r, 0)));
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], a[i], b[j]);
    }
    // The other stage was last read in iteration t - 1, which every warp has finished.
    if (t + 1 < tiles) {
      a_ld.store(As + (1 - stage) * ATile::kElems);
      b_ld.store(Bs + (1 - stage) * BTile::kElems);
    }
    __syncthreads();  // the next stage is complete, and this one is free to be overwritten
  }

  // Epilogue, straight from the registers: c0, c1 (and c2, c3, 8 rows down) are adjacent
  // columns, one 8-byte store where the row allows it. A quad of lanes writes 32 bytes of a row.
  const bool c_vec = N % 2 == 0 && aligned(C, 8);
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = m0 + wm + 16 * i + Mma16816::c_row(lane, 2 * h);
        const int n = n0 + wn + 8 * j + Mma16816::c_col(lane, 0);
        if (m >= M) continue;
        float* c = C + static_cast<int64_t>(m) * N + n;
        if (c_vec && n + 1 < N) {
          *reinterpret_cast<float2*>(c) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (n < N) c[0] = acc[i][j][2 * h];
          if (n + 1 < N) c[1] = acc[i][j][2 * h + 1];
        }
      }
}

void launch_mma_lds(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  using Cfg = MmaStep;
  constexpr int kSmemBytes =  // 2 stages of BF16 tiles
      2 * (SmemTile<Cfg::BM, Cfg::BK, TileLayout::kPadded>::kElems +
           SmemTile<Cfg::BN, Cfg::BK, TileLayout::kPadded>::kElems) * 2;
  static_assert(kSmemBytes <= 48 * 1024, "more dynamic shared memory would need an opt-in");
  dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM));
  mma_lds_kernel<Cfg><<<grid, Cfg::kThreads, kSmemBytes>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}
