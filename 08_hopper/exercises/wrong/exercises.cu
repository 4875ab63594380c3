// Chapter 08's exercise with a deliberately wrong body, built into a test program of its own
// (tests/meson.build; compiled for sm_90a by 08_hopper/meson.build, hopper_wrong_exercise_obj):
// it must fail through the chapter's own driver, and end in the bounded wait's one line
// rather than hang (HOPPER_BOUNDED_WAITS: hopper_ptx.cuh, exercises/bounded_wait.cuh).
#define HOPPER_BOUNDED_WAITS 1
#include "08_hopper/exercises/wrong/consumer_barriers.cuh"
