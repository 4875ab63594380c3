// Chapter 02's driver: what a copy/transpose program needs on top of common/driver.h. A
// program lists its kernels and calls run_copy_chapter; the tests' deliberately wrong
// transpose (tests/wrong_kernels.cu) goes through this same function.
#pragma once

#include <vector>

#include "common/cli.h"
#include "common/driver.h"

enum class CopyOp { kCopy, kTranspose };  // out is rows x cols, or cols x rows

// Enqueues on the default stream; in and out are distinct device buffers of rows * cols floats.
using CopyLauncher = void (*)(int rows, int cols, const float* in, float* out);

struct CopyKernel {
  const char* name;
  const char* baseline;  // the kernel it is timed against; "" for a baseline itself
  CopyOp op;
  CopyLauncher launch;   // nullptr: cuBLAS's transpose (cublasSgeam)
  Role role = Role::kStep;
};

// Random input from the seed, output poisoned with NaN before every run and held between two
// guard zones (a write outside it fails, common/matrix.h), every output checked bit-exact
// against the input (copies) or its transpose computed on the host. Rates in GB/s of bytes
// read + written. Returns the exit code (cli.h).
int run_copy_chapter(const CliSpec& spec, const std::vector<CopyKernel>& kernels, int argc,
                     char** argv);
