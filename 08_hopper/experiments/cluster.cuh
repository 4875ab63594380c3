// Chapter 08, experiment: cluster, a side step from group16 that was no faster. Thread-block
// clusters of two blocks (on one GPC, each able to reach the other's shared memory) compute
// vertically adjacent tiles, which need the same Bᵀ tile: each block's producer copies its own A
// tile and one half of the Bᵀ tile with TMA multicast into both blocks, so every Bᵀ byte leaves
// L2 once per cluster. It cut the L2 reads and left the time where it was (NOTES.md, "Clusters",
// has the measurements and the .release.cluster finding).
//
//   ./build/08_hopper/hopper --kernel cluster,group16 --size 4096 --bench
//
// Included once, by 08_hopper/kernels.cu, after the steps (a copy of steps/3_warp_spec.cuh's
// kernel with the cluster added; the cluster PTX wrappers are in hopper_ptx.cuh).
#pragma once

#include <algorithm>

#include "shared/tensorcore/pad.cuh"
#include "shared/tensorcore/pipelined.cuh"  // grouped_tile
#include "shared/hopper/hopper_device.cuh"
#include "shared/hopper/tma_host.cuh"  // opt_in, tensor_map
#include "common/device.h"         // device_sm_count

// The two blocks of a cluster compute tile rows 2p and 2p + 1 of the same tile column: the same
// (256, 64) Bᵀ tile. Each block's producer copies its own A tile and one half (128 rows) of the
// Bᵀ tile, multicast into both blocks: every Bᵀ byte leaves L2 once per cluster instead of once
// per block. A stage may be refilled only when the consumers of both blocks are done with it, so
// empty[s] counts 16 arrivals: every consumer warp arrives on its own block's barrier and on the
// other block's.
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    cluster_kernel(const __grid_constant__ CUtensorMap tm_a,
                   const __grid_constant__ CUtensorMap tm_b_half, int M, int N, int K,
                   float* __restrict__ C, int group) {
  constexpr int S = kWsStages;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kWsStageBytes, empty0 = full0 + 8 * S;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const uint32_t rank = cluster_rank(), peer = rank ^ 1;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + kWsBN - 1) / kWsBN;
  const int pairs_m = (tiles_m + 1) / 2;  // a tile row past M is all zeros and never stored
  const int pair_tiles = pairs_m * tiles_n;
  const int k_tiles = (K + BK - 1) / BK;
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
        const int m0 = (2 * pc.m + int(rank)) * kWsBM, n0 = pc.n * kWsBN;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // both blocks are done with stage s
          mbar_arrive_expect_tx(full0 + 8 * s, kWsStageBytes);
          const uint32_t stage = base + s * kWsStageBytes;
          tma_load_2d(stage, &tm_a, kt * BK, m0, full0 + 8 * s);
          tma_load_2d_multicast(stage + kWsABytes + rank * (kWsBBytes / 2), &tm_b_half, kt * BK,
                                n0 + int(rank) * (kWsBN / 2), full0 + 8 * s, 0x3);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    auto release = [&](int it) {  // this warp is done with stage it % S, in both blocks' eyes
      if (t % 32 == 0) {
        const uint32_t bar = empty0 + 8 * (it % S);
        mbar_arrive(bar);                            // this block's barrier
        mbar_arrive_cluster(peer_addr(bar, peer));   // the other block's
      }
    };
    int it = 0;
    for (int p = cluster; p < pair_tiles; p += clusters) {
      const TileCoord pc = grouped_tile(p, pairs_m, tiles_n, group);
      const int m0 = (2 * pc.m + int(rank)) * kWsBM, n0 = pc.n * kWsBN;
      float acc[128];
#pragma unroll
      for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // A and both halves of Bᵀ have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage<256>(acc, base + s * kWsStageBytes + row0 * kSwizzleBytes,
                         base + s * kWsStageBytes + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();
        pin(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
      store_acc<256>(acc, C, M, N, m0 + row0, n0, t);
    }
  }
  cluster_sync();  // neither block exits while the other may still arrive on its barriers
}

// Clusters of 2 (cudaLaunchKernelEx with a cluster dimension), persistent: an even number of
// blocks, at most one per SM.
static void launch_cluster_g(int M, int N, int K, const bf16* A, const bf16* Bt, float* C,
                             int group) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  constexpr int kSmem = kWsStages * kWsStageBytes + 16 * kWsStages + 1024;
  static const bool once = (opt_in(cluster_kernel, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, kWsBN / 2);
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + kWsBN - 1) / kWsBN;
  const int pairs = (tiles_m + 1) / 2 * tiles_n;
  const int blocks = 2 * std::min(pairs, device_sm_count() / 2);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(3 * kWarpgroup);
  cfg.dynamicSmemBytes = kSmem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, cluster_kernel, *ta, *tb, M, N, K, C, group));
  CUDA_CHECK_LAUNCH();
}
void launch_cluster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_cluster_g(M, N, K, A, Bt, C, 8);  // groups of 8 tile pairs: 16 tile rows, as group16
}
