// Chapter 05's exercise with a deliberately wrong body, built into a test program of its own
// (tests/meson.build): it must fail verification through the chapter's own driver.
#include "05_tensorcore/exercises/wrong/ldmatrix_fragments.cuh"
