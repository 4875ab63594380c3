// The flow every chapter program shares: parse the command line, find the GPU, then for each
// size verify every selected kernel and (with --bench) time it next to its baseline.
//
// A chapter describes itself with a Chapter: its kernels and how to build a Case (the
// buffers for one size). GEMM chapters get both from gemm.h; chapter 02 writes its own.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "verify.h"

// What a kernel is to its chapter. `--kernel all` runs every role but kSweep and kExercise;
// `--kernel sweep` runs the sweep, `--kernel exercises` the exercises; `--list` prints the
// registry (the tools read it).
enum class Role {
  kStep,      // a step of this chapter's lesson
  kBaseline,  // the library it is measured against (cuBLAS, cudaMemcpy)
  kPrevious,  // an earlier chapter's kernel, timed alongside for comparison
  kSweep,     // a tuning configuration: only with --kernel sweep or by name
  kBest,      // a step, and the chapter's answer (the progression's size sweep times it)
  kExercise,  // a kernel the reader writes (NN_chapter/exercises/): by name or --kernel exercises
};
const char* role_name(Role r);

struct KernelEntry {
  std::string name;
  std::string baseline;  // name of the kernel it is compared with; "" for none
  Role role = Role::kStep;
  std::string precision;  // its inputs where they differ from the chapter's (chapter 10), or ""
  // Above this K the kernel's result is not worth checking (chapter 10: unpromoted FP8, whose
  // error bound passes the result): asked for by name, the program refuses the shape (exit 2,
  // max_k_why); in `all`, it leaves the kernel out at that shape and says so. 0: no limit.
  int max_k = 0;
  std::string max_k_why;
};

// Buffers and reference for one problem size.
class Case {
 public:
  virtual ~Case() = default;
  virtual void launch(size_t kernel) = 0;  // enqueue kernel `kernel` (index into kernels)
  // NaN into the output(s), and the guard pattern into the guard zones around them (matrix.h),
  // so that each verified run is judged on its own.
  virtual void poison_output() = 0;
  // Checks the output of the kernel just run. nullopt: this kernel is the reference itself
  // and nothing independent is available at this size to compare it with.
  virtual std::optional<VerifyResult> verify_output(size_t kernel) = 0;
  // After every verified run: "" while the guard zones around every output are untouched, else
  // one line saying which guard of which output, where, and what was found
  // (describe_guard_touch). A touched guard fails the kernel like a wrong element.
  virtual std::string check_guards() = 0;
  // The output's bytes as they are now (--twice compares two runs' outputs with them).
  virtual std::vector<unsigned char> output_bytes() = 0;
  virtual double work() const = 0;  // FLOPs (GEMM) or bytes moved (copies), for the rate column
};

struct Chapter {
  CliSpec cli;                       // cli.kernels is filled from `kernels`
  std::vector<KernelEntry> kernels;
  const char* precision = "fp32";   // inputs: "fp32" or "bf16" (--list, CSV)
  const char* rate_unit = "TFLOP/s";
  double rate_scale = 1e-12;         // rate = work / seconds * rate_scale
  std::function<size_t(const Shape&)> device_bytes;  // GPU memory one Case needs
  std::function<std::unique_ptr<Case>(const Shape&, uint64_t seed)> make_case;
};

// The whole program: returns the exit code (0, 1, 2 or 77; see cli.h).
int run_chapter(Chapter chapter, int argc, char** argv);
