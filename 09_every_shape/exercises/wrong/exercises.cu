// Chapter 09's exercise with a deliberately wrong body (tests/meson.build links it into
// every_shape_wrong_exercise, whose check must fail). With EXERCISE_WRONG_SLOW the body is
// correct but leaves a last wave after full ones unsplit: it must fail on its verdict.
#ifdef EXERCISE_WRONG_SLOW
#include "09_every_shape/exercises/wrong/split_plan_slow.cuh"
#else
#include "09_every_shape/exercises/wrong/split_plan.cuh"
#endif
