// Chapter 10, experiment: multicast, steps 3 and 2 (per-tensor FP8, and BF16 with bias and GELU)
// in clusters of two blocks sharing each Bᵀ tile. Where K is short every tile reads its operands
// once and reuses them little: at 4096x32768x512 a (128, 256) FP8 tile takes 48 KiB a K tile
// from L2 for 4 K tiles, then stores. The two blocks of a cluster compute vertically adjacent
// tiles (tile rows 2p and 2p + 1 of one tile column), which need the same Bᵀ tile: each block's
// producer copies its own A tile and one half (128 rows) of the Bᵀ tile with TMA multicast into
// both blocks, so a block's K tile takes 32 KiB from L2, not 48. A stage is refilled only when
// the consumers of both blocks are done with it: its empty barrier counts 16 arrivals, every
// consumer warp arriving on its own block's barrier and on the other block's. The mechanism is
// experiments/cluster.cuh's (step 6's block scales in clusters), here on steps 3 and 2's kernel.
// Counterparts: cuBLASLt's FP8 kernels run in clusters of two (NOTES.md names them); CUTLASS:
// ClusterShape 2x1x1 with SM90_TMA_LOAD_MULTICAST.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel fp8_tuned,fp8_multicast --shapes 4096x32768x512 --bench
//
// Included once, by 10_fp8_epilogue/kernels.cu, after the steps.
#pragma once

#include <algorithm>

#include "10_fp8_epilogue/steps/3_fp8.cuh"

constexpr int kMcBN = 256;  // the tile: (128, 256), steps 2 and 3's

template <bool kFp8, class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    multicast_kernel(const __grid_constant__ CUtensorMap tm_a,
                     const __grid_constant__ CUtensorMap tm_b_half,  // boxes of 128 rows of Bᵀ
                     const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                     const float* __restrict__ a_dq, const float* __restrict__ b_dq,
                     __nv_bfloat16* D, Epi epi, int group) {
  constexpr int BN = kMcBN, S = kEpiStages<BN>, kStage = kEpiStageBytes<BN>;
  constexpr int kBK = kFp8 ? kFp8BK : BK;  // a K tile: one 128-byte row either way
  constexpr int kBHalfBytes = BN / 2 * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const uint32_t rank = cluster_rank(), peer = rank ^ 1;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int pairs_m = (tiles_m + 1) / 2;  // a tile row past M is all zeros and never stored
  const int pair_tiles = pairs_m * tiles_n;
  const int k_tiles = (K + kBK - 1) / kBK;
  const int cluster = blockIdx.x / 2, clusters = gridDim.x / 2;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);    // this block's arrive.expect_tx (bytes from both blocks)
      mbar_init(empty0 + 8 * s, 16);  // every consumer warp of both blocks
    }
    fence_barrier_init();
  }
  cluster_sync();  // both blocks' barriers exist before either block uses the other's

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0;
      for (int p = cluster; p < pair_tiles; p += clusters) {
        const TileCoord pc = grouped_tile(p, pairs_m, tiles_n, group);
        const int m0 = (2 * pc.m + int(rank)) * kWsBM;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // both blocks are done with stage s
          mbar_arrive_expect_tx(full0 + 8 * s, kStage);    // half of Bᵀ comes from the peer
          const uint32_t stage = base + s * kStage;
          tma_load_2d(stage, &tm_a, kt * kBK, m0, full0 + 8 * s);
          tma_load_2d_multicast(stage + kWsABytes + rank * kBHalfBytes, &tm_b_half, kt * kBK,
                                pc.n * BN + int(rank) * (BN / 2), full0 + 8 * s, 0x3);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    const float dq = kFp8 ? *a_dq * *b_dq : 1.0f;
    // This warp is done with stage it % S, in both blocks' eyes: the peer's arrive lets the
    // peer's producer multicast into this block's stage.
    auto release = [&](int it) {
      if (t % 32 == 0) {
        const uint32_t bar = empty0 + 8 * (it % S);
        mbar_arrive(bar);                           // this block's barrier
        mbar_arrive_cluster(peer_addr(bar, peer));  // the other block's
      }
    };
    int it = 0;
    for (int p = cluster; p < pair_tiles; p += clusters) {
      const TileCoord pc = grouped_tile(p, pairs_m, tiles_n, group);
      const int m0 = (2 * pc.m + int(rank)) * kWsBM;
      float acc[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // A and both halves of Bᵀ have landed
        pin(acc);
        wgmma_fence();
        const uint32_t a_tile = base + s * kStage + row0 * kSwizzleBytes;
        const uint32_t b_tile = base + s * kStage + kWsABytes;
        if constexpr (kFp8)
          wgmma_stage_e4m3<BN>(acc, a_tile, b_tile);
        else
          wgmma_stage<BN>(acc, a_tile, b_tile);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] *= dq;
      store_tile_bf16<BN>(acc, epi, m0 + row0, pc.n * BN, M, N, tma, &tm_d, D, bands, next_band);
    }
    store_drain(tma);
  }
  cluster_sync();  // neither block exits while the other may still arrive on its barriers
}

// Clusters of 2, persistent: as many clusters as can be resident at once
// (cudaOccupancyMaxActiveClusters), at most one per pair of tiles.
template <bool kFp8, class Epi>
void launch_multicast_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const CUtensorMap *ta, *tb;
  if constexpr (kFp8) {
    const uint8_t *A = p.qA, *Bt = p.qBt;
    pad_e4m3_if_unaligned(p.M, p.N, K, A, Bt);
    ta = e4m3_map(A, p.M, K, kWsBM);
    tb = e4m3_map(Bt, p.N, K, kMcBN / 2);
  } else {
    const __nv_bfloat16 *A = p.A, *Bt = p.Bt;
    pad_operands_if_unaligned(p.M, p.N, K, A, Bt);
    ta = tensor_map(A, p.M, K, kWsBM);
    tb = tensor_map(Bt, p.N, K, kMcBN / 2);
  }
  auto kernel = multicast_kernel<kFp8, Epi>;
  constexpr int kSmem = kEpiSmem<kMcBN>;
  static const bool once = (opt_in(kernel, kSmem), true);
  (void)once;
  const CUtensorMap* td = output_map(p);
  const int tiles_m = (p.M + kWsBM - 1) / kWsBM, tiles_n = (p.N + kMcBN - 1) / kMcBN;
  const int pairs = (tiles_m + 1) / 2 * tiles_n;
  cudaLaunchConfig_t cfg = {};
  cfg.blockDim = dim3(3 * kWarpgroup);
  cfg.dynamicSmemBytes = kSmem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  static const int resident = [&] {
    cudaLaunchConfig_t q = cfg;
    q.gridDim = dim3(2 * device_sm_count());
    int n = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel, &q));
    return std::max(n, 1);
  }();
  cfg.gridDim = dim3(2 * std::min(pairs, resident));
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, *ta, *tb, td ? *td : *ta, td != nullptr, p.M, p.N,
                                K, p.a_dq, p.b_dq, p.D, epi, 8));
  CUDA_CHECK_LAUNCH();
}

void launch_fp8_multicast(const GemmProblem& p) {
  launch_multicast_with<true>(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
void launch_bias_gelu_multicast(const GemmProblem& p) {
  launch_multicast_with<false>(p, BiasGelu{{p.alpha, p.beta, p.C, p.M, p.N}, p.bias});
}
