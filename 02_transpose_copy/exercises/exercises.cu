// Chapter 02's exercise: the file the reader fills in, or with -Dexercise_solutions=true the
// reference solution (exercises/solutions/). Its own translation unit, so that editing the
// exercise rebuilds only this file.
#ifdef EXERCISE_SOLUTIONS
#include "02_transpose_copy/exercises/solutions/padded_transpose.cuh"
#else
#include "02_transpose_copy/exercises/padded_transpose.cuh"
#endif
