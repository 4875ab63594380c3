// Chapter 08: Hopper's warpgroup MMA (wgmma) and Tensor Memory Accelerator (TMA), sm_90a.
// BF16 A (M x K) and Bᵀ (N x K), both row-major ("K-major"), FP32 accumulation, FP32 C = A * B,
// as in chapters 05-07. The layout functions the kernels use (the 128-byte swizzle, the
// shared-memory matrix descriptor, the accumulator map) are here, __host__ __device__, so that
// the host tests check the very functions the kernels call against the PTX ISA's rules.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

using bf16 = __nv_bfloat16;

// --- The 128-byte swizzle ---------------------------------------------------------------------
// A K-major tile with BK = 64 BF16 has rows of exactly 128 bytes. TMA (CU_TENSOR_MAP_SWIZZLE_128B)
// writes, and wgmma (swizzle mode "128B" in the descriptor) reads, such a tile with the 16-byte
// chunks of each row permuted: chunk c of row r sits at chunk position c ^ (r % 8). The pattern
// repeats every 8 rows (1024 bytes, the "swizzle atom"), and is applied to address bits, so a
// tile must start on a 1024-byte boundary. (PTX ISA, "Shared Memory Matrix Layout": the 128B
// swizzle is Swizzle<3, 4, 3>; chapter 05's swizzle_chunk is the same permutation at BK = 64.)
constexpr int kSwizzleBytes = 128, kSwizzleAtomBytes = 1024;
__host__ __device__ constexpr uint32_t swizzle128_offset(int row, int k) {  // bytes, BF16 (row, k)
  return uint32_t(row) * 128 + ((uint32_t(k) / 8) ^ (uint32_t(row) % 8)) * 16 +
         (uint32_t(k) % 8) * 2;
}

// --- The shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") ----------------
// 64 bits: start address >> 4 in bits 0-13, leading-dimension byte offset >> 4 in bits 16-29,
// stride-dimension byte offset >> 4 in bits 32-45, base offset in bits 49-51 (0: the atoms are
// 1024-byte aligned), swizzle mode in bits 62-63 (1 = 128-byte swizzle).
// For a K-major operand with the 128-byte swizzle: the stride byte offset is the distance
// between consecutive 8-row atoms (1024 bytes); the leading byte offset is not used (one
// wgmma's 16 k, 32 bytes, lie inside one 128-byte row) and is set to 1 (16 bytes) by convention.
// The k16 step s of a BK = 64 tile starts 32 s bytes into the row: the descriptor's start
// address moves by 32 s bytes, and the hardware applies the swizzle to the full address.
struct SmemDesc {
  __host__ __device__ static constexpr uint64_t make(uint32_t smem_addr, uint32_t lbo_bytes,
                                                     uint32_t sbo_bytes, uint32_t swizzle_mode) {
    return uint64_t((smem_addr & 0x3FFFF) >> 4) | uint64_t((lbo_bytes >> 4) & 0x3FFF) << 16 |
           uint64_t((sbo_bytes >> 4) & 0x3FFF) << 32 | uint64_t(swizzle_mode & 3) << 62;
  }
  __host__ __device__ static constexpr uint64_t k_major_sw128(uint32_t smem_addr) {
    return make(smem_addr, 16, kSwizzleAtomBytes, 1);
  }
  __host__ __device__ static constexpr uint32_t start(uint64_t d) {
    return uint32_t(d & 0x3FFF) << 4;
  }
  __host__ __device__ static constexpr uint32_t lbo(uint64_t d) {
    return uint32_t(d >> 16 & 0x3FFF) << 4;
  }
  __host__ __device__ static constexpr uint32_t sbo(uint64_t d) {
    return uint32_t(d >> 32 & 0x3FFF) << 4;
  }
  __host__ __device__ static constexpr uint32_t swizzle(uint64_t d) { return uint32_t(d >> 62); }
};
// A K-major, 128-byte-swizzled descriptor's high word (SBO, swizzle), the same for every
// address: the descriptor is this or-ed with a low word (start >> 4, LBO) that can be advanced by
// adding (chapter 10's step 9, chapter 11's step 10).
constexpr uint64_t kSw128DescHi = SmemDesc::k_major_sw128(0) & 0xFFFFFFFF00000000ull;

// --- The wgmma accumulator (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts" for
// wgmma .m64nNk16 with .f32 D) ----------------------------------------------------------------
// A warpgroup (4 warps, 128 threads) holds the (64, N) tile D, N / 2 floats a thread. Warp w of
// the group owns rows 16 w .. 16 w + 15; within them the layout is mma.sync's C fragment, once
// per 8 columns: register 4 j + i of lane l holds row 16 w + l / 4 + 8 (i / 2), column
// 8 j + 2 (l % 4) + i % 2.
struct WgmmaAcc {
  __host__ __device__ static constexpr int row(int thread, int reg) {
    return 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((reg % 4) / 2);
  }
  __host__ __device__ static constexpr int col(int thread, int reg) {
    return 8 * (reg / 4) + 2 * (thread % 4) + reg % 2;
  }
};

// --- The staged epilogue's band (store_acc_staged) --------------------------------------------
// Each consumer warp stages 16 rows x kBandCols columns of its accumulator at a time, in rows of
// kBandRow floats (padded by 8).
constexpr int kBandCols = 32, kBandRow = kBandCols + 8;
constexpr int kBandBytes = 16 * kBandRow * 4;  // one warp's band

// --- Launchers -----------------------------------------------------------------------------------
// Defined in the step files (08_hopper/steps/, in reading order) and the experiments (08_hopper/experiments/), all
// compiled once by kernels.cu. Every launcher copies rows that are not 16-byte aligned into
// padded operands first (chapter 07's pad_rows): TMA's row stride must be a multiple of 16 bytes.
void launch_wgmma_sync(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 1
void launch_tma(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);            // 2
void launch_tma_pipe(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);       // 2
void launch_warp_spec(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);      // 3
void launch_hopper_raster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);  // 3
void launch_persistent(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);     // 3
void launch_group16(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);        // 3
void launch_staged(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);         // 4
// The experiments (--kernel sweep): the ring without a tile's wgmma in flight; clusters of two
// blocks with the Bᵀ tile multicast.
void launch_tma_ring(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
void launch_cluster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
// warp_spec's kernel at a (128, 128) tile: warp specialization without step 3's wider tile.
void launch_warp_spec_128(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
// The exercise (08_hopper/exercises/consumer_barriers.cuh, or its solution): group16 with the consumers'
// barrier operations written by the reader.
void launch_ex_consumer_barriers(int M, int N, int K, const bf16* A, const bf16* Bt, float* C);
