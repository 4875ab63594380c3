// Chapter 04's kernels: every step file, then the experiments, compiled once. The lesson is in
// the step files, in reading order:
//   steps/1_tiled_bt.cuh       tiled_bt_trap, _padded, _swizzled: 03's tiled_smem reading Bᵀ,
//                              the bank-conflict trap and its two fixes, at equal occupancy
//   steps/2_simt_lds128.cuh    from 03's tiled_2d: A transposed in shared memory, float4
//                              micro-tile pieces: every shared load an LDS.128
//   steps/3_simt_vec.cuh       128-bit global loads
//   steps/4_simt_swizzle.cuh   the XOR swizzle on the transposing store (and, by configuration
//                              only, simt_warps: warp tiling; simt_bigtile: a 128 x 256 tile)
//   steps/5_simt.cuh           double buffering: simt (B), simt_bt (Bᵀ)
//   steps/6_simt_auto.cuh      a tile for every size, two warp groups for 96 x 192: simt_auto,
//                              simt_bt_auto
//   experiments/free_occupancy.cuh  step 1 with registers left to ptxas (--kernel sweep)
//   experiments/tiles.cuh           every tile of the heuristic by name (--kernel sweep)
//   experiments/tile_sweep.cuh      the tile sweep behind SimtBest (--kernel sweep)
// C = A * B (or A * (Bᵀ)ᵀ), FP32; every M, N, K >= 1 (partial tiles zero-filled on load,
// masked on store; 128-bit accesses only where the row length keeps them aligned).
// Explanation and measurements: 04_coalesced/README.md; the lab notebook: NOTES.md.
#include "04_coalesced/steps/1_tiled_bt.cuh"
#include "04_coalesced/steps/2_simt_lds128.cuh"
#include "04_coalesced/steps/3_simt_vec.cuh"
#include "04_coalesced/steps/4_simt_swizzle.cuh"
#include "04_coalesced/steps/5_simt.cuh"
#include "04_coalesced/steps/6_simt_auto.cuh"
#include "04_coalesced/experiments/free_occupancy.cuh"
#include "04_coalesced/experiments/tiles.cuh"
#include "04_coalesced/experiments/tile_sweep.cuh"
