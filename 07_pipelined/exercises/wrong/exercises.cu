// Chapter 07's exercise with a deliberately wrong body, built into a test program of its own
// (tests/meson.build): it must fail verification through the chapter's own driver.
#include "07_pipelined/exercises/wrong/cp_async_pipeline.cuh"
