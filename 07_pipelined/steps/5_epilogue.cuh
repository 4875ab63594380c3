// Chapter 07, step 5: epilogue. C leaves through shared memory: each warp writes one 16-row band
// of its tile with the fragments' 8-byte stores into the stages (free by then), reads it back
// row-wise and stores whole rows, 16 bytes a lane, where a warp's 8-byte stores straight from
// the registers covered 8 rows in 32-byte pieces. Step 4's kernel otherwise (G = 16).
//
//   ./build/07_pipelined/pipelined --kernel raster,epilogue --size 4096 --bench
//   tools/steps.py diff epilogue             # what this step adds
//
// Included once, by 07_pipelined/kernels.cu (experiments/epilogue_g8.cuh launches this kernel
// with G = 8).
#pragma once

#include "shared/tensorcore/mma_ptx.cuh"
#include "shared/tensorcore/pad.cuh"
#include "shared/tensorcore/pipelined.cuh"
#include "07_pipelined/tile_copier.cuh"
#include "common/device.h"

template <typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    epilogue_kernel(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ Bt,
                    float* __restrict__ C, int group) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  constexpr int S = Cfg::kStages, KS = BK / 16;  // stages; k16 steps per tile
  using ATile = typename Cfg::ATile;
  using BTile = typename Cfg::BTile;
  static_assert(S >= 2, "fragment double buffering runs on the stage ring");
  static_assert(Cfg::kEpiElems * 4 <= Cfg::kSmemBytes, "the C bands fit in the stages");

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
  // The launcher guarantees 16-byte aligned rows (pad_operands_if_unaligned).
  using ACopier = TileCopier<BM, BK, Cfg::kThreads>;
  using BCopier = TileCopier<BN, BK, Cfg::kThreads>;
  const ACopier a_cp(A, M, K, m0, 0);
  const BCopier b_cp(Bt, N, K, n0, 0);
  // K tile t into a stage: all of it, or part `part` of `parts`, a share of each operand's
  // pieces. Where t is past the last tile the pieces are zero-filled copies that read nothing:
  // the group is still committed, and no branch is needed.
  auto copy_tile = [&](int t, int stage, int part = 0, int parts = 1) {
    const bool ok = t < tiles && a_cp.k + t * BK < K;  // a_cp.k == b_cp.k: the same k
    constexpr int PA = ACopier::kPieces, PB = BCopier::kPieces;
    a_cp.copy(a_stage(stage), t * BK, ok, part * PA / parts, (part + 1) * PA / parts);
    b_cp.copy(b_stage(stage), t * BK, ok, part * PB / parts, (part + 1) * PB / parts);
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
  // Through shared memory: each warp writes one 16-row band of its tile with the fragments'
  // 8-byte stores, then reads it back row-wise, 16 bytes a lane, and stores whole rows.
  cp_async_wait<0>();  // only empty groups can be left; the stages are about to be reused
  __syncthreads();     // every warp is done with the stages
  float* band = reinterpret_cast<float*>(smem_raw) + warp * 16 * Cfg::kEpiRow;  // (16, WN + 8)
  const bool c_vec = N % 4 == 0 && aligned(C, 16);
#pragma unroll
  for (int i = 0; i < MI; ++i) {
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        *reinterpret_cast<float2*>(
            &band[Mma16816::c_row(lane, 2 * h) * Cfg::kEpiRow + 8 * j + Mma16816::c_col(lane, 0)]) =
            make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
    __syncwarp();  // the band is written before lanes read other lanes' values
    constexpr int kVecPerRow = Cfg::WN / 4;
#pragma unroll
    for (int q = lane; q < 16 * kVecPerRow; q += 32) {
      const int r = q / kVecPerRow, c = 4 * (q % kVecPerRow);
      const int m = m0 + wm + 16 * i + r, n = n0 + wn + c;
      if (m >= M) continue;
      const float4 v = *reinterpret_cast<const float4*>(&band[r * Cfg::kEpiRow + c]);
      float* dst = C + int64_t(m) * N + n;
      if (c_vec && n + 3 < N) {
        *reinterpret_cast<float4*>(dst) = v;
      } else {
        const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int u = 0; u < 4; ++u)
          if (n + u < N) dst[u] = e[u];
      }
    }
    __syncwarp();  // everyone has read the band before the next one overwrites it
  }
}

// Every launch of this kernel: rows that are not 16-byte aligned are first copied into padded
// operands (rows of round_up(K, 8), zeros after K; pad.cu), counted in the time like any other
// part of the GEMM.
template <typename Cfg>
void launch_epilogue_cfg(int M, int N, int K, const bf16* A, const bf16* Bt, float* C, int group) {
  auto kernel = epilogue_kernel<Cfg>;
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
  pad_operands_if_unaligned(M, N, K, A, Bt);  // pad.cu
  // A 1-D grid of tiles (grouped_tile maps it): C itself would outgrow the GPU's memory long
  // before the tile count reached gridDim.x's limit of 2^31 - 1.
  const dim3 grid(unsigned(ceil_div(M, Cfg::BM)) * unsigned(ceil_div(N, Cfg::BN)));
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes>>>(M, N, K, A, Bt, C, group);
  CUDA_CHECK_LAUNCH();
}

void launch_epilogue(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_epilogue_cfg<Pipe3>(M, N, K, A, Bt, C, kPipeGroup);
}
