// Chapter 10's exercise: the file the reader fills in, or with -Dexercise_solutions=true the
// reference solution (exercises/solutions/). Its own translation unit, compiled for sm_90a like
// kernels.cu, so that editing the exercise rebuilds only this file; it compiles step 2's kernel
// template with the reader's GELU (the step files hold templates only).
#define FP8_TEMPLATES_ONLY  // the step files' templates, not their launchers (kernels.cu has them)
#include "10_fp8_epilogue/chapter10.h"
#ifdef EXERCISE_SOLUTIONS
#include "10_fp8_epilogue/exercises/solutions/gelu_tail.cuh"
#else
#include "10_fp8_epilogue/exercises/gelu_tail.cuh"
#endif
