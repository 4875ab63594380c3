// tools/ceilings: the wgmma ceiling's kernel, compiled for sm_90a alone (tools/ceilings/
// meson.build, as 08_hopper/meson.build compiles chapter 08): wgmma.mma_async m64n256k16 BF16
// -> FP32, operands in shared memory through chapter 08's descriptors and wrappers
// (shared/hopper/hopper_device.cuh: wgmma_stage, smem_base_1024; hopper_ptx.cuh: fence, commit,
// wait, pin), issued back to back by two or three consumer warpgroups per SM. ceilings.cu says
// why this is a ceiling and runs it:
//
//   ./build/tools/ceilings/ceilings --csv docs/results/<gpu>/ceilings.csv
#include "shared/hopper/hopper_device.cuh"
#include "common/check.h"
#include "tools/ceilings/ceilings.h"

// The operands: kWgmmaStages stages, each the A rows of every consumer (64 each) and one
// (256, BK) Bᵀ tile, 1024-byte aligned, in the 128-byte swizzle the descriptors name. The data
// are random (only the rate matters); the loop walks the stages so that successive K tiles read
// different values, as in a GEMM.
constexpr int kWgmmaStages = 2;
template <int C>
constexpr int kWgmmaABytes = C * 64 * kSwizzleBytes;  // 8 KiB a consumer
template <int C>
constexpr int kWgmmaStageBytes = kWgmmaABytes<C> + kWsBBytes;  // + the 32 KiB Bᵀ tile
template <int C>
constexpr int kWgmmaSmemBytes = kWgmmaStages * kWgmmaStageBytes<C> + kSwizzleAtomBytes;  // slack
static_assert(kWgmmaStageBytes<2> % kSwizzleAtomBytes == 0 &&
                  kWgmmaStageBytes<3> % kSwizzleAtomBytes == 0,
              "every stage starts on a swizzle atom");
static_assert(kWgmmaSmemBytes<3> <= 227 * 1024, "fits the H100's opt-in shared memory");
static_assert(kWgmmaKSteps == kKSteps, "one wgmma_stage is one iteration");

// kFp8: the operands are e4m3 and each of the four wgmma is m64n256k32 (a row's 128 bytes hold
// 128 FP8 values, a K tile of 128): the same tiles, descriptors and swizzle as BF16.
template <int C, bool kFp8>
__global__ void __launch_bounds__(C * kWarpgroup, 1)
    wgmma_kernel(int iters, uint64_t seed, float* __restrict__ sink) {
  static_assert(C == 2 || C == 3, "two or three consumer warpgroups (128 + 40 registers each)");
  // FP8 operands: the random BF16 words' bytes with bit 6 cleared, so that no e4m3 exponent is
  // all ones (0x7F and 0xFF are e4m3's NaN) and none is large: finite values below 2.
  constexpr uint32_t kMask = kFp8 ? 0xBFBFBFBFu : 0xFFFFFFFFu;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  constexpr int kChunks = kWgmmaStages * kWgmmaStageBytes<C> / 16;  // 16-byte chunks
  for (int f = threadIdx.x; f < kChunks; f += C * kWarpgroup) {
    const uint64_t i = (uint64_t(blockIdx.x) * kChunks + f) * 4;  // four words a chunk
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(base + 16 * f),
                 "r"(random_bf16x2(seed, i) & kMask), "r"(random_bf16x2(seed, i + 1) & kMask),
                 "r"(random_bf16x2(seed, i + 2) & kMask), "r"(random_bf16x2(seed, i + 3) & kMask)
                 : "memory");
  }
  fence_proxy_async();  // this thread's stores are visible to wgmma (the async proxy)
  __syncthreads();      // ... and everyone's

  const int wg = threadIdx.x / kWarpgroup;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  for (int it = 0; it < iters; ++it) {
    const uint32_t stage = base + (it % kWgmmaStages) * kWgmmaStageBytes<C>;
    pin(acc);
    wgmma_fence();
    const uint32_t a = stage + wg * 64 * kSwizzleBytes, b = stage + kWgmmaABytes<C>;
    if constexpr (kFp8) {
#pragma unroll
      for (int s = 0; s < kWgmmaKSteps; ++s)  // k32 step s: 32 bytes into each row
        wgmma_m64n256k32_e4m3(acc, SmemDesc::k_major_sw128(a + 32 * s),
                              SmemDesc::k_major_sw128(b + 32 * s), 1);
    } else {
      wgmma_stage<256>(acc, a, b);
    }
    wgmma_commit();
    wgmma_wait<1>();  // the previous iteration's wgmma have finished (this one's may run)
    pin(acc);
  }
  wgmma_wait<0>();
  pin(acc);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 128; ++i) s += acc[i];
  sink[blockIdx.x * (C * kWarpgroup) + threadIdx.x] = s;
}

int wgmma_threads(int consumers) { return consumers * kWarpgroup; }

int wgmma_smem_bytes(int consumers) {
  return consumers == 2 ? kWgmmaSmemBytes<2> : kWgmmaSmemBytes<3>;
}

template <int C, bool kFp8>
static void launch_wgmma_c(int blocks, int iters, uint64_t seed, float* sink) {
  static const bool opted_in = [] {  // once, outside the timed launches
    CUDA_CHECK(cudaFuncSetAttribute(wgmma_kernel<C, kFp8>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kWgmmaSmemBytes<C>));
    return true;
  }();
  (void)opted_in;
  constexpr int smem = kWgmmaSmemBytes<C>;
  wgmma_kernel<C, kFp8><<<blocks, C * kWarpgroup, smem>>>(iters, seed, sink);
  CUDA_CHECK_LAUNCH();
}

void launch_wgmma(int consumers, bool fp8, int blocks, int iters, uint64_t seed, float* sink) {
  if (fp8) {
    if (consumers == 2) launch_wgmma_c<2, true>(blocks, iters, seed, sink);
    else launch_wgmma_c<3, true>(blocks, iters, seed, sink);
  } else {
    if (consumers == 2) launch_wgmma_c<2, false>(blocks, iters, seed, sink);
    else launch_wgmma_c<3, false>(blocks, iters, seed, sink);
  }
}
