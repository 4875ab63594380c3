// Chapter 06's BF16 kernels, compiled once (the programs splitk_bf16 and splitk_parts link
// them):
//   steps/2_mma_splitk.cuh    chapter 05's mma.sync kernel with split-K: splitk_mma_atomic,
//                             splitk_mma, and mma (S = 1)
// The split itself is splitk.cuh and splitk.cu, shared with the FP32 kernel. Explanation and
// measurements: 06_splitk/README.md; the lab notebook: NOTES.md.
#include "shared/tensorcore/splitk.cuh"
#include "06_splitk/steps/2_mma_splitk.cuh"
