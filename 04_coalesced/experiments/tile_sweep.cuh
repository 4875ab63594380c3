// Chapter 04, experiment: the tile-shape sweep behind SimtBest (128 x 256 x 16, 8 x 16 per
// thread), run with Bᵀ on step 5's double-buffered kernel. NOTES.md has its table.
// SimtConfig<BM, BN, BK, WM, WN, TM, TN, MinBlocks>; "r" (registers): MinBlocks = 1, up to 255
// registers a thread, one block of 256 per SM. Two configurations of that table, 128 x 128 x 16
// with 2 blocks/SM and 256 x 128 x 16, spilled registers and are no longer built: the build
// refuses any kernel that spills (ptxas -warn-spills -Werror; the host test "spill is a build
// error", tests/spill/check_spill.py, checks that it does).
//
//   ./build/04_coalesced/coalesced --kernel sweep --size 4096 --bench
//
// Included once, by 04_coalesced/kernels.cu, after the steps.
#pragma once

#include "04_coalesced/steps/5_simt.cuh"

using Sweep128x128x8 = SimtConfig<128, 128, 8, 64, 32, 8, 8, 2>;
using Sweep128x128x8r = SimtConfig<128, 128, 8, 64, 32, 8, 8, 1>;
using Sweep128x128x32r = SimtConfig<128, 128, 32, 64, 32, 8, 8, 1>;
using Sweep128x64x16 = SimtConfig<128, 64, 16, 64, 32, 8, 8, 2>;
using Sweep64x128x16 = SimtConfig<64, 128, 16, 32, 64, 8, 8, 2>;
using Sweep128x256x8 = SimtConfig<128, 256, 8, 64, 64, 8, 16, 1>;
using Sweep128x128x16w = SimtConfig<128, 128, 16, 32, 64, 8, 8, 1>;  // 32 x 64 warp tiles

const SimtNamedLauncher kSimtSweep[] = {
    {"sweep_128x128x8", true, launch_simt_cfg<Sweep128x128x8, true>},
    {"sweep_128x128x8r", true, launch_simt_cfg<Sweep128x128x8r, true>},
    {"sweep_128x128x16r", true, launch_simt_cfg<Simt128x128, true>},
    {"sweep_128x128x32r", true, launch_simt_cfg<Sweep128x128x32r, true>},
    {"sweep_128x64x16", true, launch_simt_cfg<Sweep128x64x16, true>},
    {"sweep_64x128x16", true, launch_simt_cfg<Sweep64x128x16, true>},
    {"sweep_128x256x16", true, launch_simt_cfg<SimtBest, true>},
    {"sweep_128x256x8", true, launch_simt_cfg<Sweep128x256x8, true>},
    {"sweep_128x128x16_w32x64", true, launch_simt_cfg<Sweep128x128x16w, true>},
};
const int kSimtSweepSize = sizeof(kSimtSweep) / sizeof(kSimtSweep[0]);
