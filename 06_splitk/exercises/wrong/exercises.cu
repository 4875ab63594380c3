// Chapter 06's exercise with a deliberately wrong body, built into test programs of their own
// (tests/meson.build): it must fail through the chapter's own driver and tests/exercise.py.
// With EXERCISE_WRONG_ORDER the body adds in another order on every launch: it passes
// verification and must fail the bit comparison of --twice.
#ifdef EXERCISE_WRONG_ORDER
#include "06_splitk/exercises/wrong/deterministic_reduction_order.cuh"
#else
#include "06_splitk/exercises/wrong/deterministic_reduction.cuh"
#endif
