// Chapter 04, step 1: tiled_bt_trap, tiled_bt_padded, tiled_bt_swizzled. Chapter 03's
// tiled_smem reading B stored transposed (Bᵀ, N x K, "K-major"): the tile of Bᵀ is loaded
// along its rows, like A's (coalesced), kept as loaded, and read down its columns. In the plain
// layout a column lies in one bank: 32-way conflicts (the trap). One kernel, templated over the
// layout of that tile (BtTile<L>, coalesced.cuh): padding or an XOR swizzle fixes it. Every
// layout runs 2 blocks of 1024 threads per SM, so the layout is the only difference.
//
//   ./build/04_coalesced/coalesced --kernel tiled_bt_trap,tiled_bt_padded --size 4096 --bench
//   tools/steps.py diff tiled_bt_trap         # against 03_tiled/steps/1_tiled_smem.cuh
//
// Included once, by 04_coalesced/kernels.cu. The registers left to ptxas instead:
// experiments/free_occupancy.cuh.
#pragma once

#include "04_coalesced/coalesced.cuh"

// changed: equal occupancy (kBtThreads, kBtMinBlocks: coalesced.cuh). Blocks of 1024 threads,
// 2 of them per SM, so ptxas holds every layout to 32 registers a thread and each runs 64 warps
// per SM, the most an SM holds (one block on sm_86 and sm_89).

template <BtLayout L>
__global__ void __launch_bounds__(kBtThreads, kBtMinBlocks)
    tiled_bt_kernel(int M, int N, int K, const float* __restrict__ A,
                    const float* __restrict__ Bt, float* __restrict__ C) {
  constexpr int T = kBtTile;
  using Tile = BtTile<L>;
  __shared__ float As[T][T];           // (T, T) tile of A: rows of C's tile, a K-slab
  __shared__ float Bts[Tile::kWords];  // changed: (T, T) tile of Bᵀ as loaded: element (n, k)

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T + ty;  // as in 01's coalesced kernel: threadIdx.x walks a row
  const int col = blockIdx.x * T + tx;
  const int n_load = blockIdx.x * T + ty;  // changed: thread (tx, ty) loads Bᵀ[n0 + ty][k0 + tx]
  float acc = 0.0f;

  for (int k0 = 0; k0 < K; k0 += T) {
    // Each thread loads one element of each tile; a warp reads 32 consecutive floats of a row
    // of A and (changed) of Bᵀ: coalesced. Outside the matrix: 0, which adds nothing to the sum.
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bts[Tile::offset(ty, tx)] = (n_load < N && k0 + tx < K) ? Bt[n_load * K + k0 + tx] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them

    // changed: unrolled 16 steps at a time, not all 32. Fully unrolled, ptxas keeps the
    // swizzled layout's 32 offsets (k ^ tx) in registers across the k0 loop and, held to 32
    // registers, spills them; 16 at a time no layout spills.
#pragma unroll 16
    for (int k = 0; k < T; ++k)
      // changed: B(k0 + k, col) = Bᵀ(col, k0 + k) is tile element (tx, k): the 32 lanes read
      // down a column of the tile. Plain layout: words 32 apart, one bank, 32 wavefronts.
      acc += As[ty][k] * Bts[Tile::offset(tx, k)];
    __syncthreads();  // everyone is done reading before the next iteration overwrites the tiles
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

template <BtLayout L>
static void launch_tiled_bt(int M, int N, int K, const float* A, const float* Bt, float* C) {
  dim3 block(kBtTile, kBtTile);
  dim3 grid(ceil_div(N, kBtTile), ceil_div(M, kBtTile));
  tiled_bt_kernel<L><<<grid, block>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}

// The trap: the tile as loaded, [32][32].
void launch_tiled_bt_trap(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_tiled_bt<BtLayout::kPlain>(M, N, K, A, Bt, C);
}
// The fixes: [32][33], and [32][32] with column k of row n at k ^ n.
void launch_tiled_bt_padded(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_tiled_bt<BtLayout::kPadded>(M, N, K, A, Bt, C);
}
void launch_tiled_bt_swizzled(int M, int N, int K, const float* A, const float* Bt, float* C) {
  launch_tiled_bt<BtLayout::kSwizzled>(M, N, K, A, Bt, C);
}
