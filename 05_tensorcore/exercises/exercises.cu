// Chapter 05's exercise: the file the reader fills in, or with -Dexercise_solutions=true the
// reference solution (exercises/solutions/). Its own translation unit, so that editing the
// exercise rebuilds only this file. Linked into the tensorcore program only (chapter 07 links
// tensorcore_lib, the step kernels, without it).
#ifdef EXERCISE_SOLUTIONS
#include "05_tensorcore/exercises/solutions/ldmatrix_fragments.cuh"
#else
#include "05_tensorcore/exercises/ldmatrix_fragments.cuh"
#endif
