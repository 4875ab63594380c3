// Chapter 08's host side of TMA: the tensor-map encoder (a driver function, reached through the
// runtime), the tensor maps (encoded once per operand and cached: chapter 08's BF16 operands,
// chapter 10's e4m3 operands and BF16 output), and the opt-in to more than 48 KiB of dynamic
// shared memory. Included by the step files, experiments and exercises of
// chapters 08-10.
#pragma once

#include <cuda.h>          // CUtensorMap and the encoder's argument types
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled: the encoder comes through the runtime

#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

#include "shared/hopper/hopper_device.cuh"  // BK, the box's extent along k
#include "common/check.h"

// The tensor-map encoder, from the driver through the runtime (common/check.h,
// driver_function: no link against libcuda).
inline PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const auto fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(
      driver_function("cuTensorMapEncodeTiled", 12000));
  return fn;
}

// A row-major 2-D tensor of rows x cols elements of elem_bytes (the row stride a multiple of 16
// bytes) as TMA sees it: dimension 0 is the column, dimension 1 the row; boxes of (box_cols,
// box_rows) with the 128-byte swizzle (box_cols * elem_bytes == 128); outside the tensor, zeros
// when loading, nothing written when storing. Kept per argument list, so that a timed call
// encodes nothing. `promotion`: how much the L2 fetches from DRAM around each request, 256 bytes
// unless a caller asks otherwise (chapter 09's split kernels ask for none: NOTES.md, "L2
// promotion"). Chapter 10's scales ask for more: `swizzle` none (boxes of any multiple of 16
// bytes) and `ld`, the row stride in elements where the rows are padded (0: cols).
inline const CUtensorMap* tensor_map_2d(
    const void* base, CUtensorMapDataType type, int elem_bytes, int rows, int cols, int box_cols,
    int box_rows, CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
    CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B, int ld = 0) {
  static std::map<std::tuple<const void*, int, int, int, int, int, int, int, int>, CUtensorMap>
      cache;
  if (ld == 0) ld = cols;
  const auto key = std::make_tuple(base, int(type), rows, cols, box_cols, box_rows, int(promotion),
                                   int(swizzle), ld);
  auto it = cache.find(key);
  if (it != cache.end()) return &it->second;
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(ld) * elem_bytes};  // bytes, a multiple of 16
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encoder()(&map, type, 2, const_cast<void*>(base), dims, strides, box,
                               elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "error: cuTensorMapEncodeTiled failed (%d)\n", int(r));
    std::exit(1);
  }
  return &cache.emplace(key, map).first->second;
}

// A K-major BF16 matrix X (rows x K, K % 8 == 0): boxes of (64, box_rows), one 128-byte row of
// the K tile each.
inline const CUtensorMap* tensor_map(
    const bf16* X, int rows, int K, int box_rows,
    CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  return tensor_map_2d(X, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, sizeof(bf16), rows, K, BK, box_rows,
                       promotion);
}

// Above 48 KiB a kernel must opt in to dynamic shared memory: once per kernel.
template <typename Kernel>
void opt_in(Kernel kernel, int bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}
