// Chapter 02's program: the copies and transposes of steps/ (kernels.cu) next to cudaMemcpy
// and cuBLAS's transpose (README.md).
#include "02_transpose_copy/copy_chapter.h"
#include "02_transpose_copy/transpose.cuh"

int main(int argc, char** argv) {
  CliSpec spec;
  spec.program = "02_transpose_copy/transpose";
  spec.summary =
      "Chapter 02: copy and transpose (FP32), memcpy and cuBLAS geam as baselines; "
      "shared-memory tiles with and without bank conflicts.";
  // A square power of two, and a shape that is no multiple of 32 (partial tiles on two
  // edges) nor of 4 elements in all (a scalar tail in copy_vec).
  spec.default_shapes = {{8192, 8192}, {8192, 4097}, {8191, 4097}};
  constexpr CopyOp kCopy = CopyOp::kCopy, kT = CopyOp::kTranspose;
  static const std::vector<CopyKernel> kernels = {
      {"memcpy", "", kCopy, launch_memcpy, Role::kBaseline},
      {"copy_tiled", "memcpy", kCopy, launch_copy_tiled},
      {"copy_vec", "memcpy", kCopy, launch_copy_vec},
      {"cublas_geam", "", kT, nullptr, Role::kBaseline},
      {"transpose_naive", "cublas_geam", kT, launch_transpose_naive},
      {"transpose_smem", "cublas_geam", kT, launch_transpose_smem},
      {"transpose_padded", "cublas_geam", kT, launch_transpose_padded},
      {"transpose_swizzled", "cublas_geam", kT, launch_transpose_swizzled},
      {"transpose_tall", "cublas_geam", kT, launch_transpose_tall},
      // Yours to write (exercises/padded_transpose.cuh): --kernel ex_padded_transpose.
      {"ex_padded_transpose", "cublas_geam", kT, launch_ex_padded_transpose, Role::kExercise},
  };
  return run_copy_chapter(spec, kernels, argc, argv);
}
