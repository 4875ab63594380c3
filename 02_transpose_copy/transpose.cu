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
// The kernels, in order:
//   memcpy              cudaMemcpyAsync device to device: what a copy can reach
//   copy_tiled          a copy with the transposes' thread layout (32x32 tile, 32x8 threads)
//   copy_vec            the matrix as one flat array: float4 loads and stores, grid-stride loop
//   cublas_geam         cuBLAS's transpose
//   transpose_naive     coalesced reads, strided writes (a 32-byte sector per float written)
//   transpose_smem      through a shared tile[32][32]: coalesced both ways, 32-way bank conflicts
//   transpose_padded    tile[32][33]: no bank conflicts
//   transpose_swizzled  tile[32][32], column c of row r stored at c ^ r: no conflicts, no padding
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
#include <memory>
#include <optional>
#include <vector>

#include "02_transpose_copy/transpose.cuh"
#include "common/driver.h"
#include "common/matrix.h"
#include "common/reference.h"

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

// Transpose through shared memory. The block loads its input tile row by row (coalesced
// reads), then writes the mirrored tile, output block (by, bx), row by row (coalesced writes).
// The turn happens in shared memory: output row j of the tile is input column j, so in the
// second phase each warp reads a COLUMN of the tile.
//
//   phase 1: warp ty reads in[tile row r][0..31]  -> tile[r][0..31]    (r = ty + 8 i)
//   phase 2: warp ty reads tile[0..31][r]         -> out[tile row r][0..31]
//
// Unpadded, the 32 floats of a tile column are 32 floats apart: all in one bank, so the read
// in phase 2 is a 32-way bank conflict (32 wavefronts instead of 1).
__global__ void transpose_smem_kernel(int rows, int cols, const float* __restrict__ in,
                                      float* __restrict__ out) {
  __shared__ float tile[kSmemUnpadded];  // (32, 32), row-major; tile row = input row

  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell g = tile_cell(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);  // in `in`
    const Cell t = tile_cell(0, 0, threadIdx.x, threadIdx.y, i);  // the same cell in the tile
    if (g.row < rows && g.col < cols)
      tile[smem_offset_unpadded(t.row, t.col)] = in[g.row * cols + g.col];  // writes a tile row
  }
  __syncthreads();  // phase 2 reads elements that other warps stored in phase 1

  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell o = tile_cell(blockIdx.y, blockIdx.x, threadIdx.x, threadIdx.y, i);  // in `out`
    const Cell t = tile_cell(0, 0, threadIdx.x, threadIdx.y, i);
    // out(o.row, o.col) = in(o.col, o.row), which phase 1 stored at tile (t.col, t.row).
    if (o.row < cols && o.col < rows)
      out[o.row * rows + o.col] = tile[smem_offset_unpadded(t.col, t.row)];  // reads a column
  }
}

// transpose_smem with one unused float after each tile row: element (r, c) moves to bank
// (r + c) % 32, so the 32 floats of a column are in 32 different banks. 1 wavefront.
__global__ void transpose_padded_kernel(int rows, int cols, const float* __restrict__ in,
                                        float* __restrict__ out) {
  __shared__ float tile[kSmemPadded];  // (32, 33), row-major; column 32 is never used

  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell g = tile_cell(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    const Cell t = tile_cell(0, 0, threadIdx.x, threadIdx.y, i);
    if (g.row < rows && g.col < cols)
      tile[smem_offset_padded(t.row, t.col)] = in[g.row * cols + g.col];
  }
  __syncthreads();  // phase 2 reads elements that other warps stored in phase 1

  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell o = tile_cell(blockIdx.y, blockIdx.x, threadIdx.x, threadIdx.y, i);
    const Cell t = tile_cell(0, 0, threadIdx.x, threadIdx.y, i);
    if (o.row < cols && o.col < rows)
      out[o.row * rows + o.col] = tile[smem_offset_padded(t.col, t.row)];
  }
}

// transpose_smem with the columns of each tile row permuted: row r stores column c at
// position c ^ r. A row still occupies its own 32 floats (1 wavefront to write), and column c
// of rows 0..31 sits at positions c ^ 0, c ^ 1, ..., c ^ 31: 32 different banks. 1 wavefront,
// no memory wasted. (The same idea, on 16-byte chunks, is how CUTLASS lays out GEMM tiles.)
__global__ void transpose_swizzled_kernel(int rows, int cols, const float* __restrict__ in,
                                          float* __restrict__ out) {
  __shared__ float tile[kSmemSwizzled];  // (32, 32); row r holds column c at c ^ r

  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell g = tile_cell(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, i);
    const Cell t = tile_cell(0, 0, threadIdx.x, threadIdx.y, i);
    if (g.row < rows && g.col < cols)
      tile[smem_offset_swizzled(t.row, t.col)] = in[g.row * cols + g.col];
  }
  __syncthreads();  // phase 2 reads elements that other warps stored in phase 1

  for (int i = 0; i < kRowsPerThread; ++i) {
    const Cell o = tile_cell(blockIdx.y, blockIdx.x, threadIdx.x, threadIdx.y, i);
    const Cell t = tile_cell(0, 0, threadIdx.x, threadIdx.y, i);
    if (o.row < cols && o.col < rows)
      out[o.row * rows + o.col] = tile[smem_offset_swizzled(t.col, t.row)];
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
      tile[smem_offset_padded(t.row, t.col)] = in[(r0 + t.row) * cols + c0 + t.col];
  }
  __syncthreads();  // phase 2 reads elements that other warps stored in phase 1

  for (int i = 0; i < kTallSteps; ++i) {
    const Cell t = tall_out_cell(threadIdx.x, threadIdx.y, i);  // (input column, input row)
    if (c0 + t.row < cols && r0 + t.col < rows)
      out[(c0 + t.row) * rows + r0 + t.col] = tile[smem_offset_padded(t.col, t.row)];
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

int sm_count() {
  static const int n = [] {
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return sms;
  }();
  return n;
}
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
                                                          int64_t(8) * sm_count()));
  copy_vec_kernel<<<blocks, kThreads>>>(n, n_vec, in, out);
  CUDA_CHECK_LAUNCH();
}

void launch_transpose_naive(int rows, int cols, const float* in, float* out) {
  transpose_naive_kernel<<<tile_grid(rows, cols), kTileBlock>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

void launch_transpose_smem(int rows, int cols, const float* in, float* out) {
  transpose_smem_kernel<<<tile_grid(rows, cols), kTileBlock>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

void launch_transpose_padded(int rows, int cols, const float* in, float* out) {
  transpose_padded_kernel<<<tile_grid(rows, cols), kTileBlock>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

void launch_transpose_swizzled(int rows, int cols, const float* in, float* out) {
  transpose_swizzled_kernel<<<tile_grid(rows, cols), kTileBlock>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

void launch_transpose_tall(int rows, int cols, const float* in, float* out) {
  dim3 grid(ceil_div(cols, kTile), ceil_div(rows, kTallRows));
  transpose_tall_kernel<<<grid, kTileBlock>>>(rows, cols, in, out);
  CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------------
// Program
// ---------------------------------------------------------------------------------------------

namespace {

enum class Op { kCopy, kTranspose };
using Launcher = void (*)(int rows, int cols, const float* in, float* out);

struct Kernel {
  const char* name;
  const char* baseline;  // "" for a baseline itself
  Op op;
  Launcher launch;       // nullptr: cuBLAS (cublasSgeam)
};

const Kernel kKernels[] = {
    {"memcpy", "", Op::kCopy, launch_memcpy},
    {"copy_tiled", "memcpy", Op::kCopy, launch_copy_tiled},
    {"copy_vec", "memcpy", Op::kCopy, launch_copy_vec},
    {"cublas_geam", "", Op::kTranspose, nullptr},
    {"transpose_naive", "cublas_geam", Op::kTranspose, launch_transpose_naive},
    {"transpose_smem", "cublas_geam", Op::kTranspose, launch_transpose_smem},
    {"transpose_padded", "cublas_geam", Op::kTranspose, launch_transpose_padded},
    {"transpose_swizzled", "cublas_geam", Op::kTranspose, launch_transpose_swizzled},
    {"transpose_tall", "cublas_geam", Op::kTranspose, launch_transpose_tall},
};

// One size: the input (random, from the seed), one output buffer shared by all kernels, and
// the input on the host, against which every output is compared exactly.
class TransposeCase : public Case {
 public:
  TransposeCase(const Shape& s, uint64_t seed)
      : rows_(s.M), cols_(s.N), n_(size_t(s.M) * s.N), in_(n_), out_(n_) {
    fill_random(in_.get(), rows_, cols_, seed);
    in_host_.resize(n_);
    out_host_.resize(n_);
    CUDA_CHECK(cudaMemcpy(in_host_.data(), in_.get(), in_.bytes(), cudaMemcpyDeviceToHost));
  }

  void launch(size_t i) override {
    const Kernel& k = kKernels[i];
    if (k.launch) {
      k.launch(rows_, cols_, in_.get(), out_.get());
    } else {
      if (!cublas_) cublas_ = std::make_unique<Cublas>();  // only when a cuBLAS row runs
      cublas_->transpose(rows_, cols_, in_.get(), out_.get());
    }
  }

  void poison_output() override { poison(out_.get(), out_.bytes()); }

  std::optional<VerifyResult> verify_output(size_t i) override {
    CUDA_CHECK(cudaMemcpy(out_host_.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
    const Tolerance exact{};  // all zero: every element must be bit-identical
    if (kKernels[i].op == Op::kCopy)
      return verify(out_host_.data(), in_host_.data(), rows_, cols_, exact);
    return verify(out_host_.data(), transposed_input().data(), cols_, rows_, exact);
  }

  double work() const override { return 2.0 * sizeof(float) * rows_ * cols_; }  // read + write

 private:
  // The expected transpose (cols x rows), computed on the host the first time it is needed.
  const std::vector<float>& transposed_input() {
    if (ref_t_.empty()) {
      ref_t_.resize(n_);
      constexpr int kB = 64;  // in blocks, so that both sides stay in the CPU's cache
      for (int r0 = 0; r0 < rows_; r0 += kB)
        for (int c0 = 0; c0 < cols_; c0 += kB)
          for (int r = r0; r < std::min(r0 + kB, rows_); ++r)
            for (int c = c0; c < std::min(c0 + kB, cols_); ++c)
              ref_t_[size_t(c) * rows_ + r] = in_host_[size_t(r) * cols_ + c];
    }
    return ref_t_;
  }

  int rows_, cols_;
  size_t n_;
  DeviceBuffer<float> in_, out_;
  std::unique_ptr<Cublas> cublas_;
  std::vector<float> in_host_, out_host_, ref_t_;
};

}  // namespace

int main(int argc, char** argv) {
  Chapter ch;
  ch.cli.program = "02_transpose_copy/transpose";
  ch.cli.summary =
      "Chapter 02: copy and transpose (FP32), memcpy and cuBLAS geam as baselines; "
      "shared-memory tiles with and without bank conflicts.";
  ch.cli.has_k = false;  // sizes are rows x cols: --m rows, --n cols
  // A square power of two, and a shape that is no multiple of 32 (partial tiles on two
  // edges) nor of 4 elements in all (a scalar tail in copy_vec).
  ch.cli.default_shapes = {{8192, 8192}, {8192, 4097}, {8191, 4097}};
  for (const Kernel& k : kKernels) ch.kernels.push_back({k.name, k.baseline});
  ch.rate_unit = "GB/s";
  ch.rate_scale = 1e-9;
  ch.device_bytes = [](const Shape& s) { return 2 * sizeof(float) * size_t(s.M) * s.N; };
  ch.make_case = [](const Shape& s, uint64_t seed) -> std::unique_ptr<Case> {
    return std::make_unique<TransposeCase>(s, seed);
  };
  return run_chapter(ch, argc, argv);
}
