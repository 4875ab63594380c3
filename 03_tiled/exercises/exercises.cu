// Chapter 03's exercise: the file the reader fills in, or with -Dexercise_solutions=true the
// reference solution (exercises/solutions/). Its own translation unit, so that editing the
// exercise rebuilds only this file.
#ifdef EXERCISE_SOLUTIONS
#include "03_tiled/exercises/solutions/register_tile.cuh"
#else
#include "03_tiled/exercises/register_tile.cuh"
#endif
