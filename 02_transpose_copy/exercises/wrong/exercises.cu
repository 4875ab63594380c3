// Chapter 02's exercise with a deliberately wrong body, built into a test program of its own
// (tests/meson.build): it must fail verification through the chapter's own driver.
#include "02_transpose_copy/exercises/wrong/padded_transpose.cuh"
