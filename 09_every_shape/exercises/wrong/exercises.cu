// Chapter 09's exercise with a deliberately wrong body (tests/meson.build links it into
// every_shape_wrong_exercise, whose check must fail).
#include "09_every_shape/exercises/wrong/split_plan.cuh"
