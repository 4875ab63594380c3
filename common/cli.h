// The command line shared by every chapter program (host only; no GPU needed to parse).
//
//   --m M --n N --k K | --size S    one problem size (S sets all three; --m/--n/--k override)
//   --shapes MxNxK,MxNxK,...        several sizes (the GPU tests use this)
//   --kernel NAME|all               which kernel(s); default all
//   --check / --bench               verify only / verify then time; default both
//   --reps R  --seed S  --csv FILE  --list  --help
//
// Exit codes used by every program: 0 pass, 1 verification failure, 2 bad usage, 77 no GPU.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

enum ExitCode { kExitPass = 0, kExitFail = 1, kExitUsage = 2, kExitSkip = 77 };

struct Shape {
  int M = 0, N = 0, K = 1;  // for the copy/transpose chapter: rows = M, cols = N, K unused
};

// A chapter's own integer option (e.g. --splits S). parse_cli stores the value in *value and
// leaves it alone when the option is absent. check, if set, may refuse a value for a shape:
// it returns "" or the reason.
struct IntOption {
  std::string flag, meta, help;
  int64_t lo = 1, hi = INT32_MAX;
  int* value = nullptr;
  std::function<std::string(int64_t value, const Shape& s)> check;
};

struct CliSpec {
  std::string program;               // e.g. "01_naive/naive"
  std::string summary;               // one line printed by --help
  std::vector<std::string> kernels;  // names --kernel accepts
  std::vector<std::string> sweep;    // those of them that `all` leaves out and `sweep` selects
  std::vector<IntOption> options;    // the chapter's own options
  std::vector<Shape> default_shapes;
  bool has_k = true;   // false: sizes are rows x cols (--m rows, --n cols), --k is refused
  int default_reps = 30;
  int min_cc = 0;      // e.g. 80: on an older GPU the program says so in one line, exits 77
  std::string min_cc_why;  // what needs it, e.g. "mma.sync with BF16"
};

struct Options {
  std::vector<Shape> shapes;
  std::vector<std::string> kernels;  // selected kernels, in the chapter's order
  bool check = true;
  bool bench = true;
  int reps = 0;
  bool reps_given = false;
  uint64_t seed = 1234;
  std::string csv;
};

enum class CliStatus { kOk, kHelp, kList, kError };

// Parses argv. On kError, *error holds one line saying what is wrong.
CliStatus parse_cli(const CliSpec& spec, int argc, const char* const* argv, Options* out,
                    std::string* error);

std::string usage_text(const CliSpec& spec);

// Limits on sizes, checked by parse_cli. Kernels index with 32-bit ints, so no matrix may
// have more than 2^31 - 1 elements; M and N are at most 2^20 so that every grid (32-row
// blocks at the smallest) stays within CUDA's limit of 65,535 blocks in y.
constexpr int64_t kMaxElements = 2147483647;
constexpr int64_t kMaxDim = 1 << 20;
