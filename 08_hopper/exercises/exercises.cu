// Chapter 08's exercise: the file the reader fills in, or with -Dexercise_solutions=true the
// reference solution (exercises/solutions/). Its own translation unit, so that editing the
// exercise rebuilds only this file; compiled like kernels.cu, for sm_90a alone
// (08_hopper/meson.build: wgmma and setmaxnreg exist nowhere else). Its barrier waits are
// bounded (HOPPER_BOUNDED_WAITS: hopper_ptx.cuh, exercises/bounded_wait.cuh): a wait for a
// phase that never completes ends in one line naming the barrier, the stage and the parity,
// instead of a hang.
#define HOPPER_BOUNDED_WAITS 1
#ifdef EXERCISE_SOLUTIONS
#include "08_hopper/exercises/solutions/consumer_barriers.cuh"
#else
#include "08_hopper/exercises/consumer_barriers.cuh"
#endif
