// Chapter 01's exercises: the files the reader fills in, or with -Dexercise_solutions=true the
// reference solutions (exercises/solutions/). Its own translation unit, so that editing an
// exercise rebuilds only this file.
#ifdef EXERCISE_SOLUTIONS
#include "01_naive/exercises/solutions/coalesced_mapping.cuh"
#else
#include "01_naive/exercises/coalesced_mapping.cuh"
#endif
