// Chapter 01's kernels: every step file, compiled once (chapter 03 and the tests link them).
// The lesson is in the step files, in reading order:
//   steps/1_uncoalesced.cuh   naive_uncoalesced: a warp walks DOWN a column of C
//   steps/2_coalesced.cuh     naive_coalesced:   a warp walks ALONG a row of C
// Explanation and measurements: 01_naive/README.md
#include "01_naive/steps/1_uncoalesced.cuh"
#include "01_naive/steps/2_coalesced.cuh"
