// Chapter 09's kernels: every step file, then the experiment, compiled once, for sm_90a only
// (09_every_shape/meson.build, as chapter 08's). The lesson is in the step files, in reading
// order; each starts from chapter 08's staged kernel (08_hopper/steps/4_staged.cuh):
//   steps/1_tile128.cuh       tile128: the tile's width a template argument, 128 x 128
//   steps/2_split_wave.cuh    split_wave, split_wave128: the last wave's tiles split along K
//                             among the idle blocks (plan_wave), a deterministic fixup
//   steps/3_menu.cuh          the tile's height a template argument too: a menu of tiles
//                             (m128x192, m128x144, m64x128, m64x64)
//   steps/4_two_acc.cuh       two accumulators, alternating by K tile, for the 64-row tiles
//                             (acc2_64x128, acc2_64x64)
//   steps/5_one_wg.cuh        one consumer warpgroup for the 64-row tiles (wg1_64x128,
//                             wg1_64x64)
//   steps/6_hopper.cuh        hopper, host code only: a tile and a schedule per shape, the
//                             shape rule's best few (hopper_candidates) timed on first call
//   experiments/stream_k.cuh  Stream-K: every K-tile dealt evenly (plan_stream_k; --kernel sweep)
// The schedules and the shape rule are in schedule.cuh (host-tested); chapter 08's pieces in
// shared/hopper/. Explanation and measurements: 09_every_shape/README.md
#include "09_every_shape/steps/1_tile128.cuh"
#include "09_every_shape/steps/2_split_wave.cuh"
#include "09_every_shape/steps/3_menu.cuh"
#include "09_every_shape/steps/4_two_acc.cuh"
#include "09_every_shape/steps/5_one_wg.cuh"
#include "09_every_shape/steps/6_hopper.cuh"
#include "09_every_shape/experiments/stream_k.cuh"
