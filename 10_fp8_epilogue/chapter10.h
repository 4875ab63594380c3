// Chapter 10's program: its kernels and cuBLASLt's, each on the operands of its form, verified
// against the exact product and timed against its library counterpart (chapter10.cu, the
// harness, which chapter 11's program shares: 11_block_scales/chapter11.h).
#pragma once

#include <vector>

#include "10_fp8_epilogue/fp8_gemm.h"
#include "common/cli.h"
#include "common/driver.h"

// The operands an entry multiplies (fp8_gemm.h, GemmProblem).
enum class Operands { kBf16, kFp8Tensor, kFp8Block };
// What its epilogue computes: alpha * acc + beta * C, or gelu(that + bias); kBiasGeluRounded:
// alpha * acc + beta * C is rounded to BF16 before the bias is added (the unfused pair, whose first
// kernel stores D; and cuBLASLt's GELU_BIAS, whose errors say it rounds so too: NOTES.md). Every
// GELU here, cuBLASLt's included, is the tanh form (fp8_gemm.h; the tail tests tell the forms apart).
enum class Epilogue { kAlphaBeta, kBiasGelu, kBiasGeluRounded };
// How it accumulates, which sets its bound (chapter10.cu, reference_kernel; docs/measuring.md):
//   kFp32      BF16 products summed in the tensor cores' FP32 (chapters 05-09)
//   kPromoted  e4m3 products summed by the tensor cores over 128 K, then in FP32 registers
//   kFp8Fast   e4m3 products summed by the tensor cores over all of K (no promotion); refused
//              above K = 65536, where its bound passes a sixth of the result
enum class Accum { kFp32, kPromoted, kFp8Fast };
// The cuBLASLt calls the entries time (chapter10.cu, Lt::matmul).
enum class LtCall { kNone, kBf16, kBf16BiasGelu, kFp8, kFp8Fast, kFp8Block };

struct Fp8Entry {
  const char* name;
  Operands operands;
  Epilogue epilogue;
  Accum accum;
  GemmLauncher10 launch;  // nullptr: cuBLASLt (lt)
  LtCall lt = LtCall::kNone;
  Role role = Role::kStep;
  const char* baseline = "";  // the entry its time is compared with
};

int run_fp8_chapter(const CliSpec& spec, const std::vector<Fp8Entry>& entries, int argc,
                    char** argv);

// The chapter's launchers (steps/, compiled for sm_90a by kernels.cu).
void launch_bf16_out(const GemmProblem& p);      // step 1
void launch_bias_gelu(const GemmProblem& p);     // step 2
void launch_unfused(const GemmProblem& p);       // step 2's comparison: step 1, then bias + GELU
void launch_fp8(const GemmProblem& p);           // step 3
void launch_fp8_128(const GemmProblem& p);       // step 3 at BN = 128 (sweep)
void launch_promoted(const GemmProblem& p);      // step 4
void launch_fp8_tuned(const GemmProblem& p);        // step 5: step 3 at the width timed fastest
void launch_bias_gelu_tuned(const GemmProblem& p);  // step 5: step 2 at the width timed fastest
void launch_fp8_64(const GemmProblem& p);           // step 5's menu alone (sweep): step 3 at
void launch_fp8_192(const GemmProblem& p);          //   BN = 64 and 192
void launch_bias_gelu_64(const GemmProblem& p);     // and step 2 at BN = 64, 128 and 192
void launch_bias_gelu_128(const GemmProblem& p);
void launch_bias_gelu_192(const GemmProblem& p);
void launch_fp8_straight(const GemmProblem& p);        // step 6: step 5's kernels with the
void launch_bias_gelu_straight(const GemmProblem& p);  //   straight epilogue (no branch per element)
void launch_fp8_straight_256(const GemmProblem& p);    // step 6's menus alone (sweep)
void launch_fp8_straight_192(const GemmProblem& p);
void launch_fp8_straight_128(const GemmProblem& p);
void launch_fp8_straight_64(const GemmProblem& p);
void launch_bias_gelu_straight_256(const GemmProblem& p);
void launch_bias_gelu_straight_192(const GemmProblem& p);
void launch_bias_gelu_straight_128(const GemmProblem& p);
void launch_bias_gelu_straight_64(const GemmProblem& p);
void launch_bias_gelu_wg(const GemmProblem& p);      // step 7: the epilogue in a warpgroup
void launch_bias_gelu_wg_128(const GemmProblem& p);  //   of its own (menu; entries alone)
void launch_bias_gelu_wg_64(const GemmProblem& p);
void launch_bias_gelu_wg2_128(const GemmProblem& p);  //   (BN 128, two epilogue warpgroups)
void launch_bias_gelu_stsm(const GemmProblem& p);          // step 8: step 7, the bands by
void launch_bias_gelu_stsm_256(const GemmProblem& p);      //   stmatrix (menu; entries alone)
void launch_bias_gelu_stsm_192(const GemmProblem& p);
void launch_bias_gelu_stsm_wg_128(const GemmProblem& p);
void launch_bias_gelu_stsm_wg_64(const GemmProblem& p);
void launch_bias_gelu_stsm_wg2_128(const GemmProblem& p);
void launch_bias_gelu_lean(const GemmProblem& p);          // step 9: step 8, the K loops'
void launch_bias_gelu_lean_256(const GemmProblem& p);      //   bookkeeping by addition (menu;
void launch_bias_gelu_lean_192(const GemmProblem& p);      //   its entries alone)
void launch_bias_gelu_lean_wg_128(const GemmProblem& p);
void launch_bias_gelu_lean_wg_64(const GemmProblem& p);
void launch_bias_gelu_lean_wg2_128(const GemmProblem& p);
void launch_bias_gelu_fill(const GemmProblem& p);          // step 10: step 9's menu with a
void launch_bias_gelu_fill_176(const GemmProblem& p);      //   128 x 176 entry (alone)
void launch_bias_gelu_pair(const GemmProblem& p);          // step 11: step 10, the bias
void launch_bias_gelu_pair_256(const GemmProblem& p);      //   pairs by one predicated load
void launch_bias_gelu_pair_192(const GemmProblem& p);      //   (menu; its entries alone)
void launch_bias_gelu_pair_176(const GemmProblem& p);
void launch_bias_gelu_pair_wg_128(const GemmProblem& p);
void launch_bias_gelu_pair_wg_64(const GemmProblem& p);
void launch_bias_gelu_pair_wg2_128(const GemmProblem& p);
void launch_tr_straight_128_s4(const GemmProblem& p);  // experiment: steps 6 (4, 6 stages)
void launch_tr_straight_128_s6(const GemmProblem& p);  //   and 7 (8) at BN 128, clock64 stamps
void launch_tr_wg_128(const GemmProblem& p);
void launch_tr_wg2_128(const GemmProblem& p);       //   (two epilogue warpgroups;
void launch_tr_wg2_stsm_128(const GemmProblem& p);  //   and with step 8's store)
void launch_ex_gelu_tail(const GemmProblem& p);  // the exercise (exercises/gelu_tail.cuh)
