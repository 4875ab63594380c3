// Chapter 06's exercise: the file the reader fills in, or with -Dexercise_solutions=true the
// reference solution (exercises/solutions/). Its own translation unit, so that editing the
// exercise rebuilds only this file.
#ifdef EXERCISE_SOLUTIONS
#include "06_splitk/exercises/solutions/deterministic_reduction.cuh"
#else
#include "06_splitk/exercises/deterministic_reduction.cuh"
#endif
