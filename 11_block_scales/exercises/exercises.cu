// Chapter 11's exercise: the file the reader fills in, or with -Dexercise_solutions=true the
// reference solution (exercises/solutions/). Its own translation unit, compiled for sm_90a like
// kernels.cu, so that editing the exercise rebuilds only this file; it compiles step 1's kernel
// template with the reader's promotion (the step files hold templates only).
#define FP8_TEMPLATES_ONLY  // the step files' templates, not their launchers (kernels.cu has them)
#include "11_block_scales/chapter11.h"
#ifdef EXERCISE_SOLUTIONS
#include "11_block_scales/exercises/solutions/block_promote.cuh"
#else
#include "11_block_scales/exercises/block_promote.cuh"
#endif
