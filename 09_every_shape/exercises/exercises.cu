// Chapter 09's exercise: the file the reader fills in, or with -Dexercise_solutions=true the
// reference solution (exercises/solutions/). Its own translation unit, so that editing the
// exercise rebuilds only this file. Host code only: the kernel is step 5's, compiled once in
// kernels.cu (launch_wg1_64x128_on_plan).
#ifdef EXERCISE_SOLUTIONS
#include "09_every_shape/exercises/solutions/split_plan.cuh"
#else
#include "09_every_shape/exercises/split_plan.cuh"
#endif
