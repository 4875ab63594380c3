// Chapter 08, experiment: tma_ring, the ring of steps/2_tma.cuh (4 stages) without a tile in
// flight: each tile's wgmma are waited for (wgmma.wait_group 0) before the next tile is
// awaited, so the one warpgroup idles while they drain. It shows what tma_pipe's kInFlight = 1
// is worth (README, "Why"; its runs are in NOTES.md).
//
//   ./build/08_hopper/hopper --kernel tma_ring,tma_pipe --size 4096 --bench
//
// Included once, by 08_hopper/kernels.cu, after the step it instantiates.
#pragma once

#include "08_hopper/steps/2_tma.cuh"

void launch_tma_ring(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_tma_stages<4, 0>(M, N, K, A, Bt, C);
}
