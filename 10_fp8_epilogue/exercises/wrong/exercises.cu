// Chapter 10's exercise with a deliberately wrong body (tests/meson.build: its check must fail):
// the textbook GELU, which cancels in the left tail.
#define FP8_TEMPLATES_ONLY  // the step files' templates, not their launchers (kernels.cu has them)
#include "10_fp8_epilogue/chapter10.h"
#include "10_fp8_epilogue/exercises/wrong/gelu_tail.cuh"
