// Chapter 03's exercise with a deliberately wrong body, built into a test program of its own
// (tests/meson.build): it must fail verification through the chapter's own driver.
#include "03_tiled/exercises/wrong/register_tile.cuh"
