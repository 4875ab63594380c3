// Chapter 05, experiment: the tile-configuration sweep behind mma_tuned's MmaBest (NOTES.md has
// its table and what it taught). Every entry uses the swizzled tile and ldmatrix:
//   sweep_128x128x32_single  MmaStep with ONE shared stage (load, barrier, compute, barrier):
//                            what chapter 04's double buffering is still worth; its own copy of
//                            step 4's kernel, mma_single_kernel, below
//   the others               step 4's mma_ldmatrix_kernel with other MmaConfig<BM, BN, BK, WM,
//                            WN, MinBlocks>: block tiles, warp tiles, K slabs, blocks per SM
//
//   ./build/05_tensorcore/tensorcore --kernel sweep --size 4096 --bench
//
// Included once, by 05_tensorcore/kernels.cu, after the step it instantiates.
#pragma once

#include "05_tensorcore/steps/4_mma_ldmatrix.cuh"

// --- sweep_128x128x32_single: step 4's kernel (swizzled) with a single buffer -------------------
template <typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, mma_min_blocks<Cfg>())
    mma_single_kernel(int M, int N, int K, const bf16* __restrict__ A,
                      const bf16* __restrict__ Bt, float* __restrict__ C) {
  constexpr TileLayout L = TileLayout::kSwizzled;
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  using ATile = SmemTile<BM, BK, L>;
  using BTile = SmemTile<BN, BK, L>;
  // Dynamic shared memory: its size depends on Cfg (MmaBest's 96 KiB is more than the 48 KiB a
  // static array may have).
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* As = reinterpret_cast<bf16*>(smem);  // 1 stage of (BM, BK)
  bf16* Bs = As + ATile::kElems;             // 1 stage of (BN, BK)

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
  const bool a_vec = K % 8 == 0 && aligned(A, 16), b_vec = K % 8 == 0 && aligned(Bt, 16);

  // Per-lane shared offsets (elements) of the ldmatrix rows of this warp's first fragments,
  // one per k16 step. Fragment i of A is 16 i rows further, which is 16 i * BK elements
  // further in both layouts (MmaConfig's static_assert; tested), so it is an immediate offset.
  constexpr int KS = BK / 16;
  int a_off[KS], b_off[KS];
#pragma unroll
  for (int s = 0; s < KS; ++s) {
    a_off[s] = ATile::offset(wm + Ldmatrix::a_row(lane), 16 * s + Ldmatrix::a_col(lane));
    b_off[s] = BTile::offset(wn + Ldmatrix::b_row(lane), 16 * s + Ldmatrix::b_col(lane));
  }

  float acc[MI][NI][4] = {};  // C fragments: MI x NI tiles of (16, 8), 4 FP32 a lane each

  // One buffer: load, barrier, compute, barrier, load the next tile ...
  TileLoader<BM, BK, L, Cfg::kThreads> a_ld;
  TileLoader<BN, BK, L, Cfg::kThreads> b_ld;
  const int tiles = ceil_div(K, BK);
  a_ld.load(A, M, K, m0, 0, K, a_vec);
  b_ld.load(Bt, N, K, n0, 0, K, b_vec);
  a_ld.store(As);
  b_ld.store(Bs);
  __syncthreads();  // the tile is complete before any warp reads it

  for (int t = 0; t < tiles; ++t) {
    const bf16* as = As;
    const bf16* bs = Bs;
#pragma unroll
    for (int s = 0; s < KS; ++s) {  // k16 steps
      uint32_t a[MI][4], b[NI][2];
      // A fragment i: one ldmatrix.x4, 16 i rows below the first.
#pragma unroll
      for (int i = 0; i < MI; ++i)
        ldmatrix_x4(a[i], smem_addr(as + a_off[s] + 16 * i * ATile::kRowElems));
      // B fragments of n-tiles j and j + 1 (16 rows of Bᵀ): one ldmatrix.x4.
#pragma unroll
      for (int j = 0; j < NI; j += 2) {
        uint32_t r[4];
        ldmatrix_x4(r, smem_addr(bs + b_off[s] + 8 * j * BTile::kRowElems));
        b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], a[i], b[j]);
    }
    if (t + 1 < tiles) {
      __syncthreads();  // every warp is done reading before the tile is overwritten
      a_ld.load(A, M, K, m0, (t + 1) * BK, K, a_vec);
      b_ld.load(Bt, N, K, n0, (t + 1) * BK, K, b_vec);
      a_ld.store(As);
      b_ld.store(Bs);
      __syncthreads();  // the tile is complete before any warp reads it
    }
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

void launch_mma_single(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  using Cfg = MmaStep;
  constexpr int kSmemBytes =  // 1 stage of BF16 tiles
      (SmemTile<Cfg::BM, Cfg::BK, TileLayout::kSwizzled>::kElems +
       SmemTile<Cfg::BN, Cfg::BK, TileLayout::kSwizzled>::kElems) * 2;
  static_assert(kSmemBytes <= 48 * 1024, "more dynamic shared memory would need an opt-in");
  dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM));
  mma_single_kernel<Cfg><<<grid, Cfg::kThreads, kSmemBytes>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}

// --- The other configurations: MmaConfig<BM, BN, BK, WM, WN, MinBlocks> -----------------------
// 4 warps, 3 blocks per SM: at 4 (128 registers a thread) step 4's kernel spills since its loop
// keeps a running K offset; NOTES.md's sweep table measured the earlier kernel at 4.
using Mma128x64x32 = MmaConfig<128, 64, 32, 64, 32, 3>;
using Mma128x128x32w = MmaConfig<128, 128, 32, 64, 64, 2>;      // 4 warps of (64, 64)
using Mma128x256x32 = MmaConfig<128, 256, 32, 64, 64, 1>;
using Mma256x128x32 = MmaConfig<256, 128, 32, 64, 64, 1>;
using Mma256x128x32x16 = MmaConfig<256, 128, 32, 64, 32, 1>;    // 16 warps of (64, 32)
using Mma256x128x64 = MmaConfig<256, 128, 64, 64, 64, 1>;

constexpr TileLayout kSweepLayout = TileLayout::kSwizzled;
const Bf16SweepEntry kMmaSweep[] = {
    {"sweep_128x128x32_single", launch_mma_single},
    {"sweep_128x64x32", launch_mma_ldmatrix_cfg<Mma128x64x32, kSweepLayout>},
    {"sweep_128x128x32_w64x64", launch_mma_ldmatrix_cfg<Mma128x128x32w, kSweepLayout>},
    {"sweep_128x256x32", launch_mma_ldmatrix_cfg<Mma128x256x32, kSweepLayout>},
    {"sweep_256x128x32", launch_mma_ldmatrix_cfg<Mma256x128x32, kSweepLayout>},
    {"sweep_256x128x32_16w", launch_mma_ldmatrix_cfg<Mma256x128x32x16, kSweepLayout>},
    {"sweep_256x128x64", launch_mma_ldmatrix_cfg<Mma256x128x64, kSweepLayout>},
};
const int kMmaSweepSize = sizeof(kMmaSweep) / sizeof(kMmaSweep[0]);
