// Chapter 10, step 8: bias_gelu_stsm. The bands written by stmatrix. In steps 1-7 a consumer (or
// epilogue) warp writes its BF16 pairs into a band one 4-byte st.shared a pair, 16 a band, each
// at a swizzled address computed in the loop; with two epilogue warpgroups that store is what
// sets the pace at K = 512 (NOTES.md, "Step 7 one change apart"). stmatrix.m8n8.x4 writes four
// 8 x 8 BF16 matrices from a warp in one instruction, lane l giving register q as the pair
// (row l / 4, columns 2 (l % 4), +1) of matrix q: the accumulator's layout (WgmmaAcc). So a band
// takes four stmatrix, and the lanes' row addresses, the same for every band, are computed once
// a tile (epilogue.cuh, store_bands_stsm). cuBLASLt's GELU-bias kernel writes its bands so
// (STSM in its SASS; NOTES.md, "What cuBLASLt's GELU epilogue issues"); CUTLASS's sm90 epilogue
// names the copy SM90_U32x4_STSM_N (cute/arch/copy_sm90.hpp).
// The functor asks for it (Stsm<...>: kStsm), so every kernel and menu entry is step 7's, and
// every other functor's code is unchanged.
//
//   ./build/10_fp8_epilogue/fp8_epilogue --kernel bias_gelu_wg2_128,bias_gelu_stsm_wg2_128 --shapes 4096x32768x512 --bench
//   tools/steps.py diff bias_gelu_stsm    # reads alone: this file and epilogue.cuh's section
//
// Included once, by 10_fp8_epilogue/kernels.cu.
#pragma once

#include "10_fp8_epilogue/steps/7_epilogue_wg.cuh"

// A straight functor whose bands are written by stmatrix (store_tile_bf16 takes
// store_bands_stsm where step 6 takes its plain loop).
template <class Epi>
struct Stsm : Epi {
  static_assert(IsStraight<Epi>::value, "stmatrix writes the plain form's values");
  static constexpr bool kStsm = true;
};

#ifndef FP8_TEMPLATES_ONLY
inline Stsm<Straight<BiasGelu>> stsm_bias_gelu(const GemmProblem& p) {
  return {straight_bias_gelu(p)};
}

// Step 7's menu, each entry with the stmatrix functor.
void launch_bias_gelu_stsm_menu(int entry, const GemmProblem& p) {
  const auto epi = stsm_bias_gelu(p);
  if (entry == kEpiWg + 128) return launch_epilogue_wg_with<128, 1>(p, epi);
  if (entry == kEpiWg + 64) return launch_epilogue_wg_with<64, 1>(p, epi);
  if (entry == kEpiWg2 + 128) return launch_epilogue_wg_with<128, 2>(p, epi);
  if (entry == 192) return launch_bf16_out_with<192>(p, epi);
  launch_bf16_out_with<256>(p, epi);  // the menu's first entry, 128 x 256
}
void launch_bias_gelu_stsm(const GemmProblem& p) {
  static WidthChoices chosen;
  launch_bias_gelu_stsm_menu(tuned_width("bias_gelu_stsm", launch_bias_gelu_stsm_menu, chosen, p,
                                         kEpiWgMenu, kEpiWgMenuCount, kEpiWgMenuLabels),
                             p);
}
// Every entry alone (--kernel sweep), verified at every shape.
void launch_bias_gelu_stsm_256(const GemmProblem& p) { launch_bias_gelu_stsm_menu(256, p); }
void launch_bias_gelu_stsm_192(const GemmProblem& p) { launch_bias_gelu_stsm_menu(192, p); }
void launch_bias_gelu_stsm_wg_128(const GemmProblem& p) {
  launch_bias_gelu_stsm_menu(kEpiWg + 128, p);
}
void launch_bias_gelu_stsm_wg_64(const GemmProblem& p) {
  launch_bias_gelu_stsm_menu(kEpiWg + 64, p);
}
void launch_bias_gelu_stsm_wg2_128(const GemmProblem& p) {
  launch_bias_gelu_stsm_menu(kEpiWg2 + 128, p);
}
#endif  // FP8_TEMPLATES_ONLY
