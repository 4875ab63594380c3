// Chapter 04's exercise: the file the reader fills in, or with -Dexercise_solutions=true the
// reference solution (exercises/solutions/). Its own translation unit, so that editing the
// exercise rebuilds only this file.
#ifdef EXERCISE_SOLUTIONS
#include "04_coalesced/exercises/solutions/fix_the_trap.cuh"
#else
#include "04_coalesced/exercises/fix_the_trap.cuh"
#endif
