// Chapter 08, step 1: wgmma_sync. Hopper's warpgroup MMA: one wgmma.mma_async.m64n128k16 for
// the 4 warps of a warpgroup reads A and Bᵀ straight from shared memory, through 64-bit matrix
// descriptors (SmemDesc) over tiles in the 128-byte swizzle (swizzle128_offset), and runs
// asynchronously (commit, wait_group). A (128, 128) tile, BK = 64, one warpgroup; the threads
// still load the tiles themselves (16-byte loads, swizzled shared stores), then a proxy fence
// and a barrier hand them to wgmma.
//
//   ./build/08_hopper/hopper --kernel wgmma_sync --size 4096 --bench
//
// Included once, by 08_hopper/kernels.cu. The PTX wrappers are in hopper_ptx.cuh; the tile
// constants, wgmma_stage and store_acc in hopper_device.cuh; the layouts in hopper.cuh.
#pragma once

#include "shared/tensorcore/pad.cuh"
#include "shared/hopper/hopper_device.cuh"
#include "shared/hopper/tma_host.cuh"  // opt_in

// (128, 128) tile (kSyncBM, kSyncBN), one warpgroup: two m64n128 accumulators (rows 0-63 and
// 64-127), 128 floats a thread. Shared memory: the A tile and the Bᵀ tile, 16 KiB each.
__global__ void __launch_bounds__(kWarpgroup, 1)
    wgmma_sync_kernel(int M, int N, int K, const bf16* __restrict__ A,
                      const bf16* __restrict__ Bt, float* __restrict__ C) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t a_tile = smem_base_1024(smem_raw), b_tile = a_tile + kTileBytes128;
  const int t = threadIdx.x;
  const int m0 = blockIdx.y * kSyncBM, n0 = blockIdx.x * kSyncBN;
  float acc[2][64] = {};

  for (int k0 = 0; k0 < K; k0 += BK) {
    // 128 rows x 8 chunks of 16 bytes per operand: chunk f = t + 128 i is row f / 8, chunk f % 8.
    // K is a multiple of 8 (the launcher pads), so a chunk is all inside K or all outside.
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int f = t + kWarpgroup * i, row = f / 8, k = k0 + (f % 8) * 8;
      uint4 va = make_uint4(0, 0, 0, 0), vb = va;
      if (m0 + row < M && k < K)
        va = *reinterpret_cast<const uint4*>(A + int64_t(m0 + row) * K + k);
      if (n0 + row < N && k < K)
        vb = *reinterpret_cast<const uint4*>(Bt + int64_t(n0 + row) * K + k);
      const uint32_t off = swizzle128_offset(row, (f % 8) * 8);
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(a_tile + off), "r"(va.x),
                   "r"(va.y), "r"(va.z), "r"(va.w) : "memory");
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(b_tile + off), "r"(vb.x),
                   "r"(vb.y), "r"(vb.z), "r"(vb.w) : "memory");
    }
    fence_proxy_async();  // this thread's stores are visible to wgmma (the async proxy)
    __syncthreads();      // ... and everyone's
    pin(acc[0]);
    pin(acc[1]);
    wgmma_fence();
    wgmma_stage<128>(acc[0], a_tile, b_tile);
    wgmma_stage<128>(acc[1], a_tile + 64 * kSwizzleBytes, b_tile);
    wgmma_commit();
    wgmma_wait<0>();
    pin(acc[0]);
    pin(acc[1]);
    __syncthreads();  // every wgmma has read the tiles before they are overwritten
  }
  store_acc<128>(acc[0], C, M, N, m0, n0, t);
  store_acc<128>(acc[1], C, M, N, m0 + 64, n0, t);
}

void launch_wgmma_sync(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  constexpr int kSmem = 2 * kTileBytes128 + 1024;  // + the alignment slack
  static const bool once = (opt_in(wgmma_sync_kernel, kSmem), true);
  (void)once;
  const dim3 grid((N + kSyncBN - 1) / kSyncBN, (M + kSyncBM - 1) / kSyncBM);
  wgmma_sync_kernel<<<grid, kWarpgroup, kSmem>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}
