// Chapter 07, experiment: unaligned_sync. Rows that are not 16-byte aligned (K % 8 != 0) without
// the padding copy: each 16-byte piece of a tile is built from 8 two-byte loads (zero outside
// the matrix) and stored to shared memory by the thread, synchronously, where cp.async cannot
// copy 16 bytes (and at odd K not even 4). A copy of step 4's kernel (raster, G = 16) with
// SyncTileCopier in place of TileCopier; the launcher does not pad. It lost to the padding copy
// (README, "Rows that are not 16-byte aligned"; the measurements are in NOTES.md).
//
//   ./build/07_pipelined/pipelined --kernel raster,unaligned_sync --shapes 4097x4095x4093 --bench
//
// Included once, by 07_pipelined/kernels.cu, after the steps.
#pragma once

#include "shared/tensorcore/mma_ptx.cuh"
#include "07_pipelined/cp_async.cuh"
#include "shared/tensorcore/pipelined.cuh"
#include "common/device.h"

// One (ROWS, BK) tile into a stage by element loads and 16-byte shared stores: the same pieces
// as TileCopier (copy_piece), any row alignment.
template <int ROWS, int BK, int kThreads>
struct SyncTileCopier {
  using Tile = SmemTile<ROWS, BK, TileLayout::kSwizzled>;
  static constexpr int kPieces = ROWS * BK / 8 / kThreads;
  static constexpr int kRowsPerPass = kThreads / (BK / 8);
  static_assert(kThreads % 64 == 0, "piece p + 1 is whole swizzle periods after piece p");
  const bf16* X;
  int rows, ld, x, k, dst0;  // x, k: the matrix row and column of this thread's piece 0

  __device__ __forceinline__ SyncTileCopier(const bf16* X_, int rows_, int ld_, int x0, int k_begin)
      : X(X_), rows(rows_), ld(ld_) {
    const CopyPiece c = copy_piece<BK>(threadIdx.x, 0, kThreads);
    x = x0 + c.row, k = k_begin + c.k;
    dst0 = Tile::offset(c.row, c.k);
  }
  // One 16-byte piece by element loads, 0 outside the matrix.
  static __device__ __forceinline__ uint4 load_piece_elems(const bf16* X, int rows, int ld, int x,
                                                           int k, int k_end) {
    const unsigned short* q = reinterpret_cast<const unsigned short*>(X + int64_t(x) * ld + k);
    uint32_t w[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const uint32_t lo = (x < rows && k + 2 * e < k_end) ? q[2 * e] : 0;
      const uint32_t hi = (x < rows && k + 2 * e + 1 < k_end) ? q[2 * e + 1] : 0;
      w[e] = lo | hi << 16;
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
  // A 16-byte shared store to a 32-bit shared address.
  static __device__ __forceinline__ void st_shared_16(uint32_t dst, uint4 v) {
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
  }
  // Pieces [p0, p1) of the K tile at k0 (from the K range's start) into `tile`, zero at and
  // beyond k_end.
  __device__ __forceinline__ void copy(uint32_t tile, int k0, int k_end, int p0 = 0,
                                       int p1 = kPieces) const {
    const uint32_t dst = tile + 2 * dst0;  // shared byte address of piece 0
#pragma unroll 1
    for (int p = p0; p < p1; ++p)
      st_shared_16(dst + p * kRowsPerPass * BK * 2,
                   load_piece_elems(X, rows, ld, x + p * kRowsPerPass, k + k0, k_end));
  }
};

template <typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    unaligned_sync_kernel(int M, int N, int K, const bf16* __restrict__ A,
                          const bf16* __restrict__ Bt, float* __restrict__ C, int group) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  constexpr int S = Cfg::kStages, KS = BK / 16;  // stages; k16 steps per tile
  using ATile = typename Cfg::ATile;
  using BTile = typename Cfg::BTile;
  static_assert(S >= 2, "fragment double buffering runs on the stage ring");

  const int tiles_m = ceil_div(M, BM), tiles_n = ceil_div(N, BN);
  const TileCoord tile = grouped_tile(blockIdx.x, tiles_m, tiles_n, group);
  const int m0 = tile.m * BM, n0 = tile.n * BN;
  const int tiles = ceil_div(K, BK);

  extern __shared__ __align__(128) unsigned char smem_raw[];
  // S stages, each the (BM, BK) tile of A, then the (BN, BK) tile of Bᵀ. Shared memory is
  // addressed by 32-bit byte addresses (what ldmatrix and cp.async take), so that every
  // ldmatrix of a k16 step is one base register plus an immediate offset.
  const uint32_t smem = smem_addr(smem_raw);
  constexpr uint32_t kStageBytes = Cfg::kStageElems * 2;
  auto a_stage = [&](int s) { return smem + s * kStageBytes; };
  auto b_stage = [&](int s) { return smem + s * kStageBytes + ATile::kElems * 2; };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
  // Any row alignment: element loads.
  using ACopier = SyncTileCopier<BM, BK, Cfg::kThreads>;
  using BCopier = SyncTileCopier<BN, BK, Cfg::kThreads>;
  const ACopier a_cp(A, M, K, m0, 0);
  const BCopier b_cp(Bt, N, K, n0, 0);
  // K tile t into a stage: all of it, or part `part` of `parts`, a share of each operand's
  // pieces. Where t is past the last tile the pieces are zeros (k beyond K). The commit groups
  // stay (empty: nothing is asynchronous) so that the loop is step 4's.
  auto copy_tile = [&](int t, int stage, int part = 0, int parts = 1) {
    constexpr int PA = ACopier::kPieces, PB = BCopier::kPieces;
    a_cp.copy(a_stage(stage), t * BK, K, part * PA / parts, (part + 1) * PA / parts);
    b_cp.copy(b_stage(stage), t * BK, K, part * PB / parts, (part + 1) * PB / parts);
  };

  // Per-lane byte offsets of this warp's first ldmatrix rows, one per k16 step (chapter 05).
  uint32_t a_off[KS], b_off[KS];
#pragma unroll
  for (int s = 0; s < KS; ++s) {
    a_off[s] = 2 * ATile::offset(wm + Ldmatrix::a_row(lane), 16 * s + Ldmatrix::a_col(lane));
    b_off[s] = 2 * BTile::offset(wn + Ldmatrix::b_row(lane), 16 * s + Ldmatrix::b_col(lane));
  }
  // The fragments of k16 step s of a stage: MI A tiles, NI B tiles (two per ldmatrix.x4).
  // Fragment i is 16 i rows on: 16 i * BK elements in the swizzled tile (MmaConfig's argument).
  auto load_frags = [&](uint32_t(&a)[MI][4], uint32_t(&b)[NI][2], int stage, int s) {
    const uint32_t as = a_stage(stage) + a_off[s];
    const uint32_t bs = b_stage(stage) + b_off[s];
#pragma unroll
    for (int i = 0; i < MI; ++i) ldmatrix_x4(a[i], as + 2 * 16 * i * BK);
#pragma unroll
    for (int j = 0; j < NI; j += 2) {
      uint32_t r[4];
      ldmatrix_x4(r, bs + 2 * 8 * j * BK);
      b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
    }
  };

  float acc[MI][NI][4] = {};  // C fragments: MI x NI tiles of (16, 8), 4 FP32 a lane each
  auto mma_all = [&](const uint32_t(&a)[MI][4], const uint32_t(&b)[NI][2]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], a[i], b[j]);
  };

  // ---- PREFETCH: tiles 0 .. S - 2 into stages 0 .. S - 2, one commit group each ----
  // Every tile position gets a group, empty or zero-filled where there is no tile, so that
  // group t is always tile t and cp_async_wait<S - 2> below always means "tile t has landed".
#pragma unroll
  for (int t = 0; t < S - 1; ++t) {
    copy_tile(t, t);
    cp_async_commit();
  }
  int read_stage = 0, write_stage = S - 1;
  auto next = [](int s) { return s + 1 == S ? 0 : s + 1; };

  // ---- PIPELINED MAIN LOOP with fragment double buffering ----
  // Registers hold two k16 steps of fragments: the mma of step s read set s % 2 while the
  // ldmatrix of step s + 1 fill the other. Step 0 of tile t + 1 is loaded during the last
  // step of tile t, so the wait and the barrier for tile t + 1 move there.
  // The copies of tile t + S - 1 go into the stage of tile t - 1, which no warp reads any
  // more (the barrier during tile t - 1's last step): a share at each of steps 0 .. KS - 2,
  // committed at step KS - 2, before the next wait.
  uint32_t fa[2][MI][4], fb[2][NI][2];
  cp_async_wait<S - 2>();
  __syncthreads();  // tile 0 has landed for everyone
  load_frags(fa[0], fb[0], read_stage, 0);
  for (int t = 0; t < tiles; ++t) {
    const bool more = t + 1 < tiles;
#pragma unroll
    for (int s = 0; s < KS; ++s) {
      if (s == KS - 1 && more) {
        cp_async_wait<S - 2>();  // this thread's copies of tile t + 1 have landed
        // Everyone's have, and every warp has loaded its last fragments of tile t - 1's
        // stage (step KS - 1 was loaded during step KS - 2, before this barrier).
        __syncthreads();
        read_stage = next(read_stage);
      }
      if (s + 1 < KS)
        load_frags(fa[(s + 1) % 2], fb[(s + 1) % 2], read_stage, s + 1);
      else if (more)
        load_frags(fa[(s + 1) % 2], fb[(s + 1) % 2], read_stage, 0);
      if (s < KS - 1) copy_tile(t + S - 1, write_stage, s, KS - 1);
      if (s == KS - 2) {
        cp_async_commit();
        write_stage = next(write_stage);
      }
      mma_all(fa[s % 2], fb[s % 2]);
    }
  }

  // ---- EPILOGUE ----
  // Straight from the registers (chapter 05): c0, c1 (and c2, c3, 8 rows down) are adjacent
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

// No padding copy: the kernel takes any row alignment.
template <typename Cfg>
void launch_unaligned_sync_cfg(int M, int N, int K, const bf16* A, const bf16* Bt, float* C,
                               int group) {
  auto kernel = unaligned_sync_kernel<Cfg>;
  // Above 48 KiB of dynamic shared memory a kernel must opt in: once per kernel, at its first
  // launch, which is never a timed one (every kernel is verified first). A GPU with less shared
  // memory per block than Cfg needs reports the kernel as skipped (KernelNotSupported).
  static const bool opted_in = [&] {
    require_smem_per_block(Cfg::kSmemBytes);
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
    return true;
  }();
  (void)opted_in;
  // A 1-D grid of tiles (grouped_tile maps it): C itself would outgrow the GPU's memory long
  // before the tile count reached gridDim.x's limit of 2^31 - 1.
  const dim3 grid(unsigned(ceil_div(M, Cfg::BM)) * unsigned(ceil_div(N, Cfg::BN)));
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes>>>(M, N, K, A, Bt, C, group);
  CUDA_CHECK_LAUNCH();
}

void launch_unaligned_sync(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_unaligned_sync_cfg<Pipe3>(M, N, K, A, Bt, C, kPipeGroup);
}
