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
// The program is main.cu (the kernel list) on copy_chapter.cu (buffers, exact check). The
// kernels, in order:
//   memcpy              cudaMemcpyAsync device to device: what a copy can reach
//   copy_tiled          a copy with the transposes' thread layout (32x32 tile, 32x8 threads)
//   copy_vec            the matrix as one flat array: float4 loads and stores, grid-stride loop
//   cublas_geam         cuBLAS's transpose
//   transpose_naive     coalesced reads, strided writes (a 32-byte sector per float written)
//   transpose_smem      through a shared tile[32][32]: coalesced both ways, 32-way bank conflicts
//   transpose_padded    tile[32][33]: no bank conflicts
//   transpose_swizzled  tile[32][32], column c of row r stored at c ^ r: no conflicts, no padding
//                       (these three are one kernel, transpose_tiled_kernel<Layout>)
//   transpose_tall      transpose_padded with (128, 32) tiles: longer output row segments, for
//                       outputs whose rows are not 128-byte aligned
//
// Build and run (from the repository root):
//   meson setup build && meson compile -C build
//   ./build/02_transpose_copy/transpose           # check, then benchmark at 8192x8192, 8192x4097, 8191x4097
//   ./build/02_transpose_copy/transpose --kernel transpose_padded --m 4096 --n 1000 --bench
//   meson test -C build --suite 02_transpose_copy # correctness at many shapes
//   02_transpose_copy/profile.sh build            # Nsight Compute: bank conflicts, throughput
// Explanation and measurements: 02_transpose_copy/README.md
#include <algorithm>
#include <cstdint>

#include "02_transpose_copy/transpose.cuh"
#include "common/device.h"

// ---------------------------------------------------------------------------------------------
// Kernels. All tiled kernels run 32 x 8 threads per 32 x 32 tile; thread (tx, ty) handles
// tile rows ty, ty + 8, ty + 16, ty + 24 of column tx (tile_cell). Tiles at the right and
// bottom edges may be partial, hence the bounds check on every global access.
// ---------------------------------------------------------------------------------------------

// A plain copy with the transposes' layout: whatever transpose_padded loses against it is
// the cost of transposing, not of this thread layout.
__global__ void copy_tiled_kernel(int rows, int cols, const float* __restrict__ in,
                                  float* __restrict__ out) {
  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell g = tile_cell(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    if (g.row < rows && g.col < cols)
      out[g.row * cols + g.col] = in[g.row * cols + g.col];  // a warp: 128 contiguous bytes
  }
}

// The matrix is one contiguous array of n = rows * cols floats, so a copy needs no 2D
// indexing: the first n_vec float4s move 16 bytes per thread (512 per warp instruction), then
// the last n - 4 * n_vec floats (0 to 3 of them, or all n if the launcher found the pointers
// not 16-byte aligned) one by one. The grid is sized to fill the GPU once, and each thread
// strides through the array.
__global__ void copy_vec_kernel(int64_t n, int64_t n_vec, const float* __restrict__ in,
                                float* __restrict__ out) {
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const float4* in4 = reinterpret_cast<const float4*>(in);
  float4* out4 = reinterpret_cast<float4*>(out);
  for (int64_t v = first; v < n_vec; v += stride) out4[v] = in4[v];  // floats 4v .. 4v + 3
  for (int64_t e = 4 * n_vec + first; e < n; e += stride) out[e] = in[e];  // the scalar tail
}

// Transpose without shared memory: out (cols x rows) at (c, r) = in at (r, c). A warp reads
// 32 consecutive floats of an input row (4 sectors) but writes them down an output column,
// `rows` floats apart: 32 sectors, each carrying 4 useful bytes of its 32.
__global__ void transpose_naive_kernel(int rows, int cols, const float* __restrict__ in,
                                       float* __restrict__ out) {
  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell g = tile_cell(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    if (g.row < rows && g.col < cols) out[g.col * rows + g.row] = in[g.row * cols + g.col];
  }
}

// Transpose through shared memory, one kernel for the three tile layouts (transpose.cuh:
// SmemUnpadded, SmemPadded, SmemSwizzled; Layout::offset is the only difference). The block
// loads its input tile row by row (coalesced reads), then writes the mirrored tile, output
// block (by, bx), row by row (coalesced writes). The turn happens in shared memory: output row
// j of the tile is input column j, so in the second phase each warp reads a COLUMN of the tile.
//
//   phase 1: warp ty reads in[tile row r][0..31]  -> tile[r][0..31]    (r = ty + 8 i)
//   phase 2: warp ty reads tile[0..31][r]         -> out[tile row r][0..31]
//
// SmemUnpadded: the 32 floats of a tile column are 32 floats apart, all in one bank, so the
// read in phase 2 is a 32-way bank conflict (32 wavefronts instead of 1). SmemPadded and
// SmemSwizzled spread a column over the 32 banks: 1 wavefront.
template <class Layout>
__global__ void transpose_tiled_kernel(int rows, int cols, const float* __restrict__ in,
                                       float* __restrict__ out) {
  __shared__ float tile[Layout::kWords];  // (32, 32) tile, tile row = input row, at Layout::offset

  for (int i = 0; i < kRowsPerThread; ++i) {
    const TransposeStep s =
        transpose_step<Layout>(rows, cols, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    if (s.in_index >= 0) tile[s.smem_store] = in[s.in_index];  // a warp writes a tile row
  }
  __syncthreads();  // phase 2 reads elements that other warps stored in phase 1

  for (int i = 0; i < kRowsPerThread; ++i) {
    const TransposeStep s =
        transpose_step<Layout>(rows, cols, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    if (s.out_index >= 0) out[s.out_index] = tile[s.smem_load];  // a warp reads a tile column
  }
}

// transpose_padded with tall (128, 32) input tiles: each output row segment a block writes is
// 128 floats (512 bytes) instead of 32. When `rows` is not a multiple of 32, output rows do not
// start on 128-byte boundaries and every segment begins and ends inside a 32-byte sector;
// longer segments mean fewer such partial sectors per byte.
__global__ void transpose_tall_kernel(int rows, int cols, const float* __restrict__ in,
                                      float* __restrict__ out) {
  __shared__ float tile[kTallRows * kPaddedStride];  // (128, 33), row-major; tile row = input row
  const int r0 = blockIdx.y * kTallRows, c0 = blockIdx.x * kTile;  // the tile's input corner

  for (int i = 0; i < kTallSteps; ++i) {
    const Cell t = tall_in_cell(threadIdx.x, threadIdx.y, i);
    if (r0 + t.row < rows && c0 + t.col < cols)
      tile[SmemPadded::offset(t.row, t.col)] = in[(r0 + t.row) * cols + c0 + t.col];
  }
  __syncthreads();  // phase 2 reads elements that other warps stored in phase 1

  for (int i = 0; i < kTallSteps; ++i) {
    const Cell t = tall_out_cell(threadIdx.x, threadIdx.y, i);  // (input column, input row)
    if (c0 + t.row < cols && r0 + t.col < rows)
      out[(c0 + t.row) * rows + r0 + t.col] = tile[SmemPadded::offset(t.col, t.row)];
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers (default stream)
// ---------------------------------------------------------------------------------------------

namespace {
const dim3 kTileBlock(kTile, kBlockRows);  // 32 x 8 = 256 threads, one 32 x 32 tile

// One block per input tile, rounded up; x runs over columns. rows <= 2^20 (cli.h), so
// grid.y <= 32768, within CUDA's 65,535.
dim3 tile_grid(int rows, int cols) { return dim3(ceil_div(cols, kTile), ceil_div(rows, kTile)); }

}  // namespace

void launch_memcpy(int rows, int cols, const float* in, float* out) {
  CUDA_CHECK(cudaMemcpyAsync(out, in, sizeof(float) * size_t(rows) * cols,
                             cudaMemcpyDeviceToDevice, /*stream=*/0));
}

void launch_copy_tiled(int rows, int cols, const float* in, float* out) {
  copy_tiled_kernel<<<tile_grid(rows, cols), kTileBlock>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

void launch_copy_vec(int rows, int cols, const float* in, float* out) {
  constexpr int kThreads = 256;
  const int64_t n = int64_t(rows) * cols;
  // float4 accesses need 16-byte aligned addresses. cudaMalloc returns 256-byte aligned
  // pointers, so with this chapter's buffers the whole array but its last n % 4 floats goes
  // through the float4 loop; any other pointer is copied float by float.
  const bool aligned = (reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) %
                           alignof(float4) == 0;
  const int64_t n_vec = aligned ? n / 4 : 0;
  // Enough blocks to fill every SM (8 x 256 = 2048 resident threads each), fewer if the
  // array is small; each thread then loops over the array with a stride of the whole grid.
  const int64_t items = std::max<int64_t>(n_vec, n - 4 * n_vec);
  const int blocks = static_cast<int>(std::clamp<int64_t>((items + kThreads - 1) / kThreads, 1,
                                                          int64_t(8) * device_sm_count()));
  copy_vec_kernel<<<blocks, kThreads>>>(n, n_vec, in, out);
  CUDA_CHECK_LAUNCH();
}

void launch_transpose_naive(int rows, int cols, const float* in, float* out) {
  transpose_naive_kernel<<<tile_grid(rows, cols), kTileBlock>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

template <class Layout>
static void launch_transpose_tiled(int rows, int cols, const float* in, float* out) {
  transpose_tiled_kernel<Layout><<<tile_grid(rows, cols), kTileBlock>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

void launch_transpose_smem(int rows, int cols, const float* in, float* out) {
  launch_transpose_tiled<SmemUnpadded>(rows, cols, in, out);
}
void launch_transpose_padded(int rows, int cols, const float* in, float* out) {
  launch_transpose_tiled<SmemPadded>(rows, cols, in, out);
}
void launch_transpose_swizzled(int rows, int cols, const float* in, float* out) {
  launch_transpose_tiled<SmemSwizzled>(rows, cols, in, out);
}

void launch_transpose_tall(int rows, int cols, const float* in, float* out) {
  dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTallRows));
  transpose_tall_kernel<<<grid, kTileBlock>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

