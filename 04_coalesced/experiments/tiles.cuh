// Chapter 04, experiment: every block tile of the shape heuristic by name, for both B layouts,
// so that one tile can be timed at any shape (--kernel simt_64x128 overrides simt_auto's
// choice), and the 96 x 192 tile with one group of 6 warps (_w6), the version the two warp
// groups of steps/6_simt_auto.cuh replaced. NOTES.md has their measurements.
//
//   ./build/04_coalesced/coalesced --kernel simt_bt_96x192,simt_bt_96x192_w6 --size 1536 --bench
//
// Included once, by 04_coalesced/kernels.cu, after the steps.
#pragma once

#include "04_coalesced/steps/5_simt.cuh"
#include "04_coalesced/steps/6_simt_auto.cuh"

const SimtNamedLauncher kSimtTiles[] = {
    {"simt_128x256", false, launch_simt_cfg<SimtBest, false>},
    {"simt_bt_128x256", true, launch_simt_cfg<SimtBest, true>},
    {"simt_128x128", false, launch_simt_cfg<Simt128x128, false>},
    {"simt_bt_128x128", true, launch_simt_cfg<Simt128x128, true>},
    {"simt_64x128", false, launch_simt_cfg<Simt64x128, false>},
    {"simt_bt_64x128", true, launch_simt_cfg<Simt64x128, true>},
    {"simt_96x192", false, launch_simt_groups_cfg<Simt96x192, false>},
    {"simt_bt_96x192", true, launch_simt_groups_cfg<Simt96x192, true>},
    // The 96 x 192 tile with one group of 6 warps (README: why two groups).
    {"simt_96x192_w6", false, launch_simt_cfg<Simt96x192w6, false>},
    {"simt_bt_96x192_w6", true, launch_simt_cfg<Simt96x192w6, true>},
    {"simt_64x64", false, launch_simt_cfg<Simt64x64, false>},
    {"simt_bt_64x64", true, launch_simt_cfg<Simt64x64, true>},
    {"simt_32x64", false, launch_simt_cfg<Simt32x64, false>},
    {"simt_bt_32x64", true, launch_simt_cfg<Simt32x64, true>},
};
const int kSimtTilesSize = sizeof(kSimtTiles) / sizeof(kSimtTiles[0]);
