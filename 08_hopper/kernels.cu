// Chapter 08's kernels: every step file, then the experiments, compiled once, for sm_90a only
// (08_hopper/meson.build: wgmma and setmaxnreg exist nowhere else). The lesson is in the step
// files, in reading order:
//   steps/1_wgmma_sync.cuh    wgmma.mma_async m64n128k16 on a (128, 128) tile, one warpgroup,
//                             BK 64; the threads load the tiles (16-byte loads, swizzled stores)
//   steps/2_tma.cuh           tma: the tiles copied by TMA onto an mbarrier; tma_pipe: a ring of
//                             4 stages, "full" and "empty" barriers, one tile's wgmma in flight
//   steps/3_warp_spec.cuh     warp_spec: a producer warpgroup (setmaxnreg 40) and two consumer
//                             warpgroups (setmaxnreg 232), m64n256k16 on a (128, 256) tile;
//                             raster (G = 8), persistent (one block per SM), group16 (G = 16)
//   steps/4_staged.cuh        staged: the persistent group16 kernel with the epilogue through
//                             shared memory (store_acc_staged)
//   experiments/tma_ring.cuh  the ring without a tile in flight (--kernel sweep)
//   experiments/cluster.cuh   clusters of 2 blocks, the Bᵀ tile multicast (--kernel sweep)
//   experiments/warp_spec_128.cuh  warp_spec at a (128, 128) tile: step 3's two changes apart
// BF16 A (M x K) and Bᵀ (N x K), FP32 C = A * B. Every M, N, K >= 1: TMA zero-fills the parts
// of a box outside the matrix; rows that are not 16-byte aligned (K % 8 != 0) are copied once
// into padded operands (chapter 07's pad_operands_if_unaligned). Pieces chapter 09 compiles
// too are in shared/hopper/: hopper.cuh (layouts, host-tested), hopper_ptx.cuh (PTX wrappers),
// hopper_device.cuh (tiles, wgmma_stage, store_acc), tma_host.cuh (tensor maps). Explanation
// and measurements: 08_hopper/README.md
#include "08_hopper/steps/1_wgmma_sync.cuh"
#include "08_hopper/steps/2_tma.cuh"
#include "08_hopper/steps/3_warp_spec.cuh"
#include "08_hopper/steps/4_staged.cuh"
#include "08_hopper/experiments/tma_ring.cuh"
#include "08_hopper/experiments/cluster.cuh"
#include "08_hopper/experiments/warp_spec_128.cuh"
