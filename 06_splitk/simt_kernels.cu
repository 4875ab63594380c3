// Chapter 06's FP32 kernels, compiled once (the programs splitk and splitk_parts link them):
//   steps/1_simt_splitk.cuh   chapter 04's double-buffered SIMT kernel with split-K:
//                             splitk_simt_atomic, splitk_simt, and simt_bt (S = 1)
// The split itself (the slices, the plan, the workspace and its reduction) is splitk.cuh and
// splitk.cu. Explanation and measurements: 06_splitk/README.md; the lab notebook: NOTES.md.
#include "shared/tensorcore/splitk.cuh"
#include "06_splitk/steps/1_simt_splitk.cuh"
