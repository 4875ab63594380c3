// Chapter 02 — copy and transpose: kernels that do no arithmetic, only move bytes. They show
// how fast DRAM can be read and written (the ceiling every later chapter is held against),
// and bring in shared memory, where the layout of a tile decides between 32-way bank
// conflicts and none.
//
// New since chapter 01: the rate is bytes moved (read + written) per second, in GB/s;
// __shared__ memory and __syncthreads(); bank conflicts and two cures, padding and an XOR
// swizzle; float4 (16-byte) loads and stores; the baselines are cudaMemcpy for the copies and
// cuBLAS (cublasSgeam) for the transposes. `in` is rows x cols, row-major FP32; every output
// is checked bit-exact (a copy or a transpose does no rounding).
//
// Every step file, compiled once (the tests' wrong transpose links them too). The lesson is
// in the step files, in reading order:
//   steps/1_copy_tiled.cuh       copy_tiled: a copy with the transposes' thread layout
//   steps/2_copy_vec.cuh         copy_vec: the matrix as one flat array, float4, grid-stride
//   steps/3_transpose_naive.cuh  transpose_naive: coalesced reads, strided writes
//   steps/4_transpose_tiled.cuh  transpose_smem, transpose_padded, transpose_swizzled: through
//                                a shared tile, one kernel over its layout (32-way bank
//                                conflicts; padding; an XOR swizzle)
//   steps/5_transpose_tall.cuh   transpose_tall: (128, 32) tiles, longer output row segments
//
//   meson setup build && meson compile -C build
//   ./build/02_transpose_copy/transpose           # check, then bench: 8192x8192, 8192x4097, 8191x4097
//   ./build/02_transpose_copy/transpose --kernel transpose_padded --m 4096 --n 1000 --bench
//   meson test -C build --suite 02_transpose_copy # correctness at many shapes
//   02_transpose_copy/profile.sh build            # Nsight Compute: bank conflicts, L2 writes
// Explanation and measurements: 02_transpose_copy/README.md
#include "02_transpose_copy/steps/1_copy_tiled.cuh"
#include "02_transpose_copy/steps/2_copy_vec.cuh"
#include "02_transpose_copy/steps/3_transpose_naive.cuh"
#include "02_transpose_copy/steps/4_transpose_tiled.cuh"
#include "02_transpose_copy/steps/5_transpose_tall.cuh"

// The copies' baseline: what a copy can reach (a driver copy, not a kernel of ours).
void launch_memcpy(int rows, int cols, const float* in, float* out) {
  CUDA_CHECK(cudaMemcpyAsync(out, in, sizeof(float) * size_t(rows) * cols,
                             cudaMemcpyDeviceToDevice, /*stream=*/0));
}
