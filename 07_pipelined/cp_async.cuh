// Chapter 07: the cp.async PTX (PTX ISA, "Data Movement and Conversion Instructions:
// cp.async"), device only. One copy, included by tile_copier.cuh and the step files.
#pragma once

#include <cstdint>

// 16 bytes global -> shared, bypassing L1 (.cg) and the registers (LDGSTS in SASS). The copy
// reads src_bytes (16 or 0) and zero-fills the rest: 0 gives a tile of zeros beyond the matrix
// edge.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
// Closes the group of this thread's copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
