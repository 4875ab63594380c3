// Chapter 01's exercise with a deliberately wrong body, built into a test program of its own
// (tests/meson.build): it must fail verification through the chapter's own driver.
#include "01_naive/exercises/wrong/coalesced_mapping.cuh"
