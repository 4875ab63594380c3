// Chapter 07's exercise: the file the reader fills in, or with -Dexercise_solutions=true the
// reference solution (exercises/solutions/). Its own translation unit, so that editing the
// exercise rebuilds only this file. Linked into the pipelined program only (chapter 08 links
// pipelined_lib, the step kernels, without it).
#ifdef EXERCISE_SOLUTIONS
#include "07_pipelined/exercises/solutions/cp_async_pipeline.cuh"
#else
#include "07_pipelined/exercises/cp_async_pipeline.cuh"
#endif
