// Chapter 05, step 4: mma_ldmatrix, mma_swizzle, mma_tuned. The fragments are loaded by
// ldmatrix.x4 (ldmatrix_x4, the addresses from Ldmatrix): one instruction fills 4 registers of
// every lane, a whole A fragment or the B fragments of two n8 tiles, where step 3 issued 4 LDS.
// One kernel template over the tile layout and the configuration, three launchers:
//   mma_ldmatrix  the padded tile of step 3, MmaStep
//   mma_swizzle   the layout only: TileLayout::kSwizzled, unpadded rows whose 16-byte chunks
//                 are XOR-permuted (swizzle_chunk): ldmatrix and the 128-bit stores that fill
//                 the tile are both free of bank conflicts
//   mma_tuned     the configuration only: MmaBest, the sweep's winner (128 x 256 block tiles,
//                 BK 64, 8 warps of 64 x 64, one block per SM)
//
//   ./build/05_tensorcore/tensorcore --kernel mma_ldmatrix,mma_swizzle,mma_tuned --bench
//   tools/steps.py diff mma_ldmatrix         # against steps/3_mma_lds.cuh
//   tools/steps.py diff mma_swizzle          # the launcher's one changed argument
//
// Included once, by 05_tensorcore/kernels.cu (experiments/mma_sweep.cuh instantiates the
// kernel with the sweep's configurations).
#pragma once

#include "shared/tensorcore/mma_ptx.cuh"
#include "shared/tensorcore/tensorcore.cuh"
#include "shared/tensorcore/tile_loader.cuh"

template <typename Cfg, TileLayout L>
__global__ void __launch_bounds__(Cfg::kThreads, mma_min_blocks<Cfg>())
    mma_ldmatrix_kernel(int M, int N, int K, const bf16* __restrict__ A,
                        const bf16* __restrict__ Bt, float* __restrict__ C) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  using ATile = SmemTile<BM, BK, L>;
  using BTile = SmemTile<BN, BK, L>;
  // Dynamic shared memory: its size depends on Cfg (MmaBest's 96 KiB is more than the 48 KiB a
  // static array may have).
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* As = reinterpret_cast<bf16*>(smem);  // 2 stages of (BM, BK)
  bf16* Bs = As + 2 * ATile::kElems;         // 2 stages of (BN, BK)

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

  // Chapter 04's double buffering: the next tile's loads are in flight while this one is
  // computed, then stored into the other stage.
  TileLoader<BM, BK, L, Cfg::kThreads> a_ld;
  TileLoader<BN, BK, L, Cfg::kThreads> b_ld;
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

template <typename Cfg, TileLayout L>
void launch_mma_ldmatrix_cfg(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  constexpr int kSmemBytes =  // 2 stages of BF16 tiles
      2 * (SmemTile<Cfg::BM, Cfg::BK, L>::kElems + SmemTile<Cfg::BN, Cfg::BK, L>::kElems) * 2;
  auto kernel = mma_ldmatrix_kernel<Cfg, L>;
  // Above 48 KiB of dynamic shared memory (MmaBest: 96 KiB) a kernel must opt in; once per
  // kernel, so that no host call sits between the timing events and the launch.
  static const bool opted_in = [&] {
    if (kSmemBytes > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      kSmemBytes));
    return true;
  }();
  (void)opted_in;
  dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM));
  kernel<<<grid, Cfg::kThreads, kSmemBytes>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}

void launch_mma_ldmatrix(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_mma_ldmatrix_cfg<MmaStep, TileLayout::kPadded>(M, N, K, A, Bt, C);
}
void launch_mma_swizzle(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_mma_ldmatrix_cfg<MmaStep, TileLayout::kSwizzled>(M, N, K, A, Bt, C);
}
void launch_mma_tuned(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_mma_ldmatrix_cfg<MmaBest, TileLayout::kSwizzled>(M, N, K, A, Bt, C);
}
