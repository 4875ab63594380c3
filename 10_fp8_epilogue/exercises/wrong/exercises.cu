// Chapter 10's exercise with a deliberately wrong body (tests/meson.build links it into
// fp8_wrong_exercise, whose check must fail).
#define FP8_TEMPLATES_ONLY  // the step files' templates, not their launchers (kernels.cu has them)
#include "10_fp8_epilogue/chapter10.h"
#include "10_fp8_epilogue/exercises/wrong/block_promote.cuh"
