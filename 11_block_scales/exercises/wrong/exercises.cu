// Chapter 11's exercise with a deliberately wrong body (tests/meson.build links it into
// block_wrong_exercise, whose check must fail).
#define FP8_TEMPLATES_ONLY  // the step files' templates, not their launchers (kernels.cu has them)
#include "11_block_scales/chapter11.h"
#include "11_block_scales/exercises/wrong/block_promote.cuh"
