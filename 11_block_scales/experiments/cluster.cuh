// Chapter 11, experiment: cluster, a side step from step 2 that was slower. Step 2's kernel in clusters of two blocks that compute vertically
// adjacent tiles (tile rows 2p and 2p + 1 of one tile column), which need the same Bᵀ tile: each
// block's producer copies its own A tile and scales, and one half (64 rows) of the Bᵀ tile with
// TMA multicast into both blocks, so every Bᵀ byte leaves L2 once per cluster: a block's K tile takes
// 24 KiB from L2, not 32 (chapter 08's experiments/cluster.cuh did the same for BF16, whose
// 128 x 256 tile moves half the bytes per FLOP, and gained nothing). A stage is refilled only when the
// consumers of both blocks are done with it: its empty barrier counts 16 arrivals, every consumer
// warp arriving on its own block's barrier and on the other block's. cuBLASLt's FP8 kernels run
// in such clusters (..._128x128_128x6_2x1_...: NOTES.md); CUTLASS: ClusterShape 2x1x1 with
// its multicast TMA loads (SM90_TMA_LOAD_MULTICAST).
//
// It halves the Bᵀ bytes a block takes from L2 and ran at 82.3 % of lt_fp8_block at 4096³
// against step 2's 87.0 % in the same process (NOTES.md, "Block scales at library speed"): at
// this tile L2 is not what limits the kernel.
//
//   ./build/11_block_scales/block_scales --kernel cluster,scales_tma --size 4096 --bench
//
// Included once, by 11_block_scales/kernels.cu, after the steps.
#pragma once

#include <algorithm>

#include "11_block_scales/steps/2_scales_tma.cuh"

template <class Epi>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    cluster_kernel(const __grid_constant__ CUtensorMap tm_a,
                   const __grid_constant__ CUtensorMap tm_b_half,  // boxes of 64 rows of Bᵀ
                   const __grid_constant__ CUtensorMap tm_sa,
                   const __grid_constant__ CUtensorMap tm_sb,
                   const __grid_constant__ CUtensorMap tm_d, bool tma, int M, int N, int K,
                   __nv_bfloat16* D, Epi epi, int group) {
  constexpr int BN = kPromBN, S = kTsStages, kStage = kFp8StageBytes<BN>;
  constexpr int kABytes = kWsBM * kSwizzleBytes, kBHalfBytes = BN / 2 * kSwizzleBytes;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kStage, empty0 = full0 + 8 * S;
  const uint32_t bands0 = full0 + 1024;
  const uint32_t scales0 = bands0 + kEpiBytes;  // stage s's scales at scales0 + s * kTsScaleBytes
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const uint32_t rank = cluster_rank(), peer = rank ^ 1;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + BN - 1) / BN;
  const int pairs_m = (tiles_m + 1) / 2;  // a tile row past M is all zeros and never stored
  const int pair_tiles = pairs_m * tiles_n;
  const int k_tiles = (K + kFp8BK - 1) / kFp8BK;
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
          mbar_arrive_expect_tx(full0 + 8 * s, kTsTxBytes);  // half of Bᵀ comes from the peer
          const uint32_t stage = base + s * kStage, sc = scales0 + s * kTsScaleBytes;
          tma_load_2d(stage, &tm_a, kt * kFp8BK, m0, full0 + 8 * s);
          tma_load_2d_multicast(stage + kABytes + rank * kBHalfBytes, &tm_b_half, kt * kFp8BK,
                                pc.n * BN + int(rank) * (BN / 2), full0 + 8 * s, 0x3);
          tma_load_2d(sc, &tm_sa, m0, kt, full0 + 8 * s);
          tma_load_2d(sc + 4 * kWsBM, &tm_sb, kt & ~3, pc.n, full0 + 8 * s);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    const uint32_t bands = bands0 + (threadIdx.x / 32 - 4) * kEpiBandsPerWarp * kBandBf16Bytes;
    int next_band = 0;
    const int row_lo = row0 + WgmmaAcc::row(t, 0);  // the thread's rows in the tile: row_lo, +8
    // This warp is done with stage it % S, in both blocks' eyes: its lanes' reads of the scales
    // come before lane 0's arrives (__syncwarp); the peer's arrive lets the peer's producer
    // multicast into this block's stage.
    auto release = [&](int it) {
      __syncwarp();
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
      float acc[BN / 2], part[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // A, both halves of Bᵀ and the scales landed
        const uint32_t sc_at = scales0 + s * kTsScaleBytes;  // as step 2
        float sa_lo, sa_hi, sb;
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sa_lo) : "r"(sc_at + 4 * row_lo));
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sa_hi) : "r"(sc_at + 4 * (row_lo + 8)));
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(sb) : "r"(sc_at + 4 * (kWsBM + kt % 4)));
        const float2 sc = make_float2(sa_lo * sb, sa_hi * sb);
        wgmma_fence();  // the promotion read `part`: done before wgmma writes it again
        const uint32_t a_tile = base + s * kStage + row0 * kSwizzleBytes;
        const uint32_t b_tile = base + s * kStage + kABytes;
#pragma unroll
        for (int k32 = 0; k32 < kFp8BK / 32; ++k32)  // a fresh `part`: scale-d 0 on the first
          wgmma_m64n128k32_e4m3(part, SmemDesc::k_major_sw128(a_tile + 32 * k32),
                                SmemDesc::k_major_sw128(b_tile + 32 * k32), k32 > 0);
        wgmma_commit();
        wgmma_wait<0>();
        pin(part);
        release(it);
        BlockScales{}.promote(acc, part, sc);
      }
      store_tile_bf16<BN>(acc, epi, m0 + row0, pc.n * BN, M, N, tma, &tm_d, D, bands, next_band);
    }
    store_drain(tma);
  }
  cluster_sync();  // neither block exits while the other may still arrive on its barriers
}

// Clusters of 2 (cudaLaunchKernelEx with a cluster dimension), persistent: as many clusters as
// can be resident at once (cudaOccupancyMaxActiveClusters: the SMs of a GPC pair up, and a GPC
// with an odd count leaves one out), at most one per pair of tiles.
template <class Epi>
void launch_cluster_with(const GemmProblem& p, const Epi& epi) {
  int K = p.K;
  const uint8_t *qA = p.qA_blk, *qBt = p.qBt_blk;
  pad_e4m3_if_unaligned(p.M, p.N, K, qA, qBt);
  auto kernel = cluster_kernel<Epi>;
  static const bool once = (opt_in(kernel, kTsSmem), true);
  (void)once;
  const CUtensorMap* ta = e4m3_map(qA, p.M, K, kWsBM);
  const CUtensorMap* tb = e4m3_map(qBt, p.N, K, kPromBN / 2);
  const CUtensorMap* tsa = a_scale_map(p.a_dq_blk, p.M, p.K);
  const CUtensorMap* tsb = b_scale_map(p.b_dq_blk, p.N, p.K);
  const CUtensorMap* td = output_map(p);
  const int tiles_m = (p.M + kWsBM - 1) / kWsBM, tiles_n = (p.N + kPromBN - 1) / kPromBN;
  const int pairs = (tiles_m + 1) / 2 * tiles_n;
  cudaLaunchConfig_t cfg = {};
  cfg.blockDim = dim3(3 * kWarpgroup);
  cfg.dynamicSmemBytes = kTsSmem;
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
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, *ta, *tb, *tsa, *tsb, td ? *td : *ta,
                                td != nullptr, p.M, p.N, p.K, p.D, epi, 8));
  CUDA_CHECK_LAUNCH();
}

void launch_cluster(const GemmProblem& p) {
  launch_cluster_with(p, AlphaBeta{p.alpha, p.beta, p.C, p.M, p.N});
}
