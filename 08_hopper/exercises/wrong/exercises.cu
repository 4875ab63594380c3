// Chapter 08's exercise with a deliberately wrong body, built into a test program of its own
// (tests/meson.build; compiled for sm_90a by 08_hopper/meson.build, hopper_wrong_exercise_obj):
// it must fail verification through the chapter's own driver.
#include "08_hopper/exercises/wrong/consumer_barriers.cuh"
