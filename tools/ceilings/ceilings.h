// tools/ceilings: what ceilings.cu (host code, the FMA and mma.sync kernels, every
// architecture) and wgmma.cu (the wgmma kernel, sm_90a only) share. ceilings.cu says what is
// measured and why; this header holds the operand values and the wgmma launcher's interface.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "common/matrix.h"  // random_uniform

// Two BF16 operand values in one 32-bit register (low half first): random_uniform values in
// [-1, 1) rounded to BF16, never zero (a 0 becomes 1): tensor cores multiply operands that are
// all zero faster than real data, so a ceiling measured on zeros would be too high.
__host__ __device__ inline uint32_t random_bf16x2(uint64_t seed, uint64_t i) {
  float lo = random_uniform(seed, 2 * i), hi = random_uniform(seed, 2 * i + 1);
  lo = lo != 0.0f ? lo : 1.0f;
  hi = hi != 0.0f ? hi : 1.0f;
  return uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(lo))) |
         uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(hi))) << 16;
}

// --- wgmma (wgmma.cu, compiled for sm_90a alone) ----------------------------------------------
// One block per SM of `consumers` warpgroups (2 or 3), each with one m64n256 FP32 accumulator
// (128 registers a thread), issuing wgmma.mma_async m64n256k16 back to back from shared memory:
// chapter 08's consumer loop (steps/3_warp_spec.cuh) without the producer. Per iteration each
// warpgroup issues one K tile of BK = 64 (four k16 steps) as one commit group and waits until
// at most one group (the one just issued) is pending.
constexpr int kWgmmaKSteps = 4;  // wgmma per iteration and warpgroup (BK = 64)
constexpr double kWgmmaFlop = 2.0 * 64 * 256 * 16;  // one m64n256k16 (BF16)
constexpr double kWgmmaFp8Flop = 2.0 * 64 * 256 * 32;  // one m64n256k32 (e4m3, chapter 10)
// Threads and dynamic shared memory of one block with `consumers` warpgroups.
int wgmma_threads(int consumers);
int wgmma_smem_bytes(int consumers);
// Enqueues `blocks` blocks of `iters` iterations on the default stream; each thread writes one
// float of its accumulator's sum to sink[blockIdx.x * wgmma_threads(consumers) + threadIdx.x].
// fp8: e4m3 operands and m64n256k32, a K tile of 128. Runs on compute capability 9.0 only
// (sm_90a code).
void launch_wgmma(int consumers, bool fp8, int blocks, int iters, uint64_t seed, float* sink);
