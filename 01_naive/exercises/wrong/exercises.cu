// Chapter 01's exercise with a deliberately wrong body, built into test programs of their own
// (tests/meson.build): it must fail through the chapter's own driver and tests/exercise.py.
// With EXERCISE_WRONG_SLOW the body is correct but uncoalesced: it must fail on its verdict.
#ifdef EXERCISE_WRONG_SLOW
#include "01_naive/exercises/wrong/coalesced_mapping_slow.cuh"
#else
#include "01_naive/exercises/wrong/coalesced_mapping.cuh"
#endif
