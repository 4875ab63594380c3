// Exercise (chapter 05): the ldmatrix addresses of the m16n8k16 fragments. THE REFERENCE
// SOLUTION.
//
// mma_ldmatrix's kernel (MmaStep, the padded tile) with the per-lane ldmatrix addresses taken
// out: the tile loads, the double buffering, the ldmatrix_x4 and mma_16816 calls and the
// epilogue are written. Yours are a_off[s] and b_off[s]: which row of the warp's (16, 16) A
// tile and which 8-column half (k 0 or k 8) lane `lane` points at, and the same in the 16 rows
// of Bᵀ that hold two n8 tiles of B, so that register j of each ldmatrix.x4 is fragment
// register j. Write the expressions in `lane` yourself: the Ldmatrix functions of
// tensorcore.cuh are the answer, so do not call them.
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_LDMATRIX_FRAGMENTS` below.
//   2. Replace the four `0` placeholders in ex_ldmatrix_fragments_kernel (the row and the k of
//      the A tile, the row and the k of the Bᵀ tile).
//   3. meson test -C build --suite exercises       # correct at every test shape? then its speed
//      ./build/05_tensorcore/tensorcore --kernel ex_ldmatrix_fragments,mma_ldmatrix --size 4096 --bench
//   4. Compare with 05_tensorcore/steps/4_mma_ldmatrix.cuh (and Ldmatrix, tensorcore.cuh).
//
// Hint (README, "ldmatrix: the addresses each lane gives"): ldmatrix.x4 loads four (8, 8)
// matrices of 16-bit values. Lane l gives the address of row l % 8 of matrix l / 8 (16
// contiguous bytes, 8 BF16 along k); afterwards lane T holds, in register j, row T / 4,
// elements 2 (T % 4) and the next, of matrix j. That is exactly one fragment register
// (Mma16816: A register i is rows 8 (i % 2) .., k 8 (i / 2) ..; B register i of an n8 tile is
// its 8 rows of Bᵀ at k 8 i ..), so only the four matrices are to be chosen:
//
//   lanes    A: rows, k    becomes    Bᵀ: n, k    becomes
//   0-7      0-7,   0      a0         0-7,   0    b0 of n-tile 0
//   8-15     8-15,  0      a1         0-7,   8    b1 of n-tile 0
//   16-23    0-7,   8      a2         8-15,  0    b0 of n-tile 1
//   24-31    8-15,  8      a3         8-15,  8    b1 of n-tile 1
//
// One ldmatrix.x4 loads a whole A fragment, or the B fragments of two n8 tiles.
// Done when: PASS at every shape, and about the speed of mma_ldmatrix (its row in the chapter
// README's Results table). `meson test` times it next to mma_ldmatrix and prints the ratio; more
// than 1.5x slower FAILS, with a sentence on what the lesson is about (tests/exercise.py).
#pragma once

#include "shared/tensorcore/mma_ptx.cuh"
#include "shared/tensorcore/tensorcore.cuh"
#include "shared/tensorcore/tile_loader.cuh"
#include "common/exercise.h"

// mma_ldmatrix's configuration: (128, 128) block tiles, BK 32, 8 warps of (64, 32), 2 blocks
// per SM; rows padded by 8 elements (16 bytes).
__global__ void __launch_bounds__(MmaStep::kThreads, mma_min_blocks<MmaStep>())
    ex_ldmatrix_fragments_kernel(int M, int N, int K, const bf16* __restrict__ A,
                                 const bf16* __restrict__ Bt, float* __restrict__ C) {
  using Cfg = MmaStep;
  constexpr TileLayout L = TileLayout::kPadded;
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  using ATile = SmemTile<BM, BK, L>;
  using BTile = SmemTile<BN, BK, L>;
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
    // ---- your code: the (row, k) of the tile that lane `lane` points at, in terms of lane:
    // A: a row 0..15 of the warp's (16, 16) tile, k 0 or 8 (then + 16 s, this k16 step);
    // Bᵀ: a row 0..15 of the two n8 tiles (n), k 0 or 8 ----
    // A: lanes 0-15 rows 0-15 at k 0 (a0, a1), lanes 16-31 the same rows at k 8 (a2, a3).
    a_off[s] = ATile::offset(wm + lane % 16, 16 * s + 8 * (lane / 16));
    // Bᵀ: lanes 0-15 n 0-7 (n-tile 0), lanes 16-31 n 8-15 (n-tile 1); within each, the second
    // 8 lanes at k 8 (b1).
    b_off[s] = BTile::offset(wn + lane % 8 + 8 * (lane / 16), 16 * s + 8 * ((lane / 8) % 2));
    // ---- end of your code ----
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

// mma_ldmatrix's launch: one block of 256 threads per (128, 128) tile of C, 40 KiB of dynamic
// shared memory (2 stages of the padded A and Bᵀ tiles), within the 48 KiB that needs no opt-in.
void launch_ex_ldmatrix_fragments(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
#ifdef EXERCISE_NOT_WRITTEN_LDMATRIX_FRAGMENTS
  exercise_not_written("05_tensorcore/exercises/ldmatrix_fragments.cuh");
#endif
  using Cfg = MmaStep;
  constexpr int kSmemBytes =  // 2 stages of BF16 tiles
      2 * (SmemTile<Cfg::BM, Cfg::BK, TileLayout::kPadded>::kElems +
           SmemTile<Cfg::BN, Cfg::BK, TileLayout::kPadded>::kElems) * 2;
  static_assert(kSmemBytes <= 48 * 1024, "above 48 KiB a kernel must opt in");
  dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM));
  ex_ldmatrix_fragments_kernel<<<grid, Cfg::kThreads, kSmemBytes>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}
