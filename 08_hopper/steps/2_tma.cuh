// Chapter 08, step 2: tma and tma_pipe. The Tensor Memory Accelerator: one thread copies each
// whole tile with cp.async.bulk.tensor (the tensor maps of tma_host.cuh give the shape, the box
// and the 128-byte swizzle), and the copy completes on an mbarrier that counts its bytes; the
// other threads wait on the barrier instead of loading. tma_kernel<S, kInFlight>:
//   tma       S = 1 stage: copy, wait, compute, release, copy the next tile
//   tma_pipe  S = 4 stages (a ring of "full" and "empty" barriers), kInFlight = 1: one tile's
//             wgmma stay in flight while the next tile is awaited (wgmma.wait_group 1)
//
//   ./build/08_hopper/hopper --kernel tma,tma_pipe --size 4096 --bench
//   tools/steps.py diff tma               # against steps/1_wgmma_sync.cuh
//
// Included once, by 08_hopper/kernels.cu (experiments/tma_ring.cuh instantiates the ring
// without a tile in flight).
#pragma once

#include "shared/tensorcore/pad.cuh"
#include "shared/hopper/hopper_device.cuh"
#include "shared/hopper/tma_host.cuh"  // opt_in, tensor_map

// Stages of (A tile, Bᵀ tile), then the barriers: full[s] (TMA's bytes have landed) and
// empty[s] (every warp is done with stage s). One warpgroup computes; thread 0 also issues
// the copies. kInFlight = 0: each tile's wgmma are waited for before the next tile starts;
// 1: the wgmma of tile t run while the warpgroup waits for tile t + 1, and tile t - 1's stage
// is released once they have been issued (wgmma.wait_group 1).
template <int S, int kInFlight>
__global__ void __launch_bounds__(kWarpgroup, 1)
    tma_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
               int M, int N, int K, float* __restrict__ C) {
  static_assert(kInFlight == 0 || S >= 2, "a tile in flight needs a second stage");
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  auto a_tile = [&](int s) { return base + s * 2 * kTileBytes128; };
  auto b_tile = [&](int s) { return base + s * 2 * kTileBytes128 + kTileBytes128; };
  const uint32_t full0 = base + S * 2 * kTileBytes128, empty0 = full0 + 8 * S;
  const int t = threadIdx.x;
  const int m0 = blockIdx.y * kSyncBM, n0 = blockIdx.x * kSyncBN;
  const int tiles = (K + BK - 1) / BK;
  constexpr uint32_t kStageBytes = 2 * kTileBytes128;

  if (t == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);   // the producer's arrive.expect_tx
      mbar_init(empty0 + 8 * s, 4);  // one arrival per warp
    }
    fence_barrier_init();
  }
  __syncthreads();  // the barriers exist before anyone uses them

  auto issue = [&](int tile, int s) {  // thread 0: tile `tile` of K into stage s
    mbar_arrive_expect_tx(full0 + 8 * s, kStageBytes);
    tma_load_2d(a_tile(s), &tm_a, tile * BK, m0, full0 + 8 * s);
    tma_load_2d(b_tile(s), &tm_b, tile * BK, n0, full0 + 8 * s);
  };
  // Tile u is done with its stage: every warp says so, and thread 0 refills the stage with
  // tile u + S once all four have.
  auto release = [&](int u) {
    const int s = u % S;
    if (t % 32 == 0) mbar_arrive(empty0 + 8 * s);
    if (t == 0 && u + S < tiles) {
      mbar_wait(empty0 + 8 * s, (u / S) & 1);
      issue(u + S, s);
    }
  };
  if (t == 0)
    for (int s = 0; s < S && s < tiles; ++s) issue(s, s);

  float acc[2][64] = {};
  for (int tile = 0; tile < tiles; ++tile) {
    const int s = tile % S;
    mbar_wait(full0 + 8 * s, (tile / S) & 1);  // the copies of this tile have landed
    pin(acc[0]);
    pin(acc[1]);
    wgmma_fence();
    wgmma_stage<128>(acc[0], a_tile(s), b_tile(s));
    wgmma_stage<128>(acc[1], a_tile(s) + 64 * kSwizzleBytes, b_tile(s));
    wgmma_commit();
    wgmma_wait<kInFlight>();  // all but the last kInFlight groups have finished
    pin(acc[0]);
    pin(acc[1]);
    if (kInFlight == 0) release(tile);
    else if (tile > 0) release(tile - 1);
  }
  wgmma_wait<0>();
  pin(acc[0]);
  pin(acc[1]);
  store_acc<128>(acc[0], C, M, N, m0, n0, t);
  store_acc<128>(acc[1], C, M, N, m0 + 64, n0, t);
}

template <int S, int kInFlight>
void launch_tma_stages(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  constexpr int kSmem = S * 2 * kTileBytes128 + 16 * S + 1024;  // + barriers, alignment slack
  static const bool once = (opt_in(tma_kernel<S, kInFlight>, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kSyncBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, kSyncBN);
  const dim3 grid((N + kSyncBN - 1) / kSyncBN, (M + kSyncBM - 1) / kSyncBM);
  tma_kernel<S, kInFlight><<<grid, kWarpgroup, kSmem>>>(*ta, *tb, M, N, K, C);
  CUDA_CHECK_LAUNCH();
}

void launch_tma(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_tma_stages<1, 0>(M, N, K, A, Bt, C);
}
void launch_tma_pipe(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_tma_stages<4, 1>(M, N, K, A, Bt, C);
}
