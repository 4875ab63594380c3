// The command line shared by every chapter program (host only; no GPU needed to parse).
//
//   --m M --n N --k K | --size S    one problem size (S sets all three)
//   --shapes MxNxK,MxNxK,...        several sizes (the GPU tests use this)
//   (one way of giving the size, each option at most once: anything else is refused)
//   --kernel NAME[,NAME...]|all|sweep|exercises   which kernel(s); default all
//   --check / --bench               verify only / verify then time; default both
//   --twice                         run each verified kernel again on the same input: same bits
//   --sequential                    time each kernel's runs back to back (default: interleaved)
//   --reps R  --seed S  --csv FILE  --list  --help
//   and a chapter's own options (CliSpec::options, e.g. chapter 06's --splits S)
//
// Exit codes used by every program: 0 pass, 1 verification failure (a wrong element, or a
// write into the guard zones around an output: matrix.h), 2 bad usage, 77 no usable GPU or an
// exercise not written yet (exercise.h).
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
  std::vector<std::string> exercises;  // the reader's exercises: not in `all`; `exercises` selects
  std::vector<IntOption> options;    // the chapter's own options
  std::vector<Shape> default_shapes;
  bool has_k = true;   // false: sizes are rows x cols (--m rows, --n cols), --k is refused
  int default_reps = 30;
  int min_cc = 0;      // e.g. 80: on an older GPU the program says so in one line, exits 77
  std::string min_cc_why;  // what needs it, e.g. "mma.sync with BF16"
  bool exact_cc = false;    // only min_cc itself (arch-specific code such as sm_90a)
};

struct Options {
  std::vector<Shape> shapes;
  std::vector<std::string> kernels;  // selected kernels, in the chapter's order
  bool kernels_named = false;        // --kernel gave names (not all, sweep or exercises)
  bool check = true;
  bool bench = true;
  bool sequential = false;  // time kernel after kernel instead of interleaving their runs
  bool twice = false;       // verify, then run again and compare the two outputs bit for bit
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

// Limits on sizes, checked by parse_cli, and why every accepted size is computed correctly.
//
// 1. M, N, K <= 2^20 (1,048,576). Grids: a kernel's grid.y counts blocks of at least 32 rows,
//    so grid.y <= 2^15, within CUDA's limit of 65,535 (the FP64 reference, whose blocks are 16
//    rows, loops over them: reference.cu). The tests run M = 2^20 in every program. Loops:
//    `for (int k0 = 0; k0 < K; k0 += T)` and ceil_div(K, T) stay below K + T <= 2^20 + 256,
//    far from INT_MAX.
// 2. No matrix has more than 2^31 - 1 elements. The kernels index with 32-bit ints: an
//    element (r, c) of an R x C matrix is at r * C + c <= R * C - 1 < 2^31. Every such
//    product is formed only for an element inside the matrix: the tiled kernels compute the
//    address inside the bounds test (`row < M && k < K ? A[row * K + k] : 0`), so a masked-out
//    row past M never forms (M + 31) * K. The 128-bit kernels of chapter 04 form their row
//    offsets in 64 bits (size_t(x) * K) because they compute a pointer before testing it.
// 3. Verification power (common/verify.cpp): with inputs uniform in [-1, 1), a product term
//    a * b has rms 1/3, so rms(C) = sqrt(K) / 3 and the elementwise tolerance is
//    atol = 8 u sqrt(K) rms(C) = (8/3) u K, u = 2^-24. One dropped (or doubled) term of size
//    |a b| is caught while |a b| > (8/3) u K. At K = 2^20, atol = 1/6: a term of typical size
//    (mean |a b| = 1/4) is still out of tolerance; it sinks in above K = 3 * 2^19 = 1,572,864,
//    and even the largest term (|a b| -> 1) above K = 3 * 2^21 = 6,291,456. At K = 2^20 a
//    random term is out of tolerance with probability about 0.53 (P(|a b| > t) = 1 - t + t ln t
//    for t = 1/6); a kernel that skips a k step drops a term in every element of C, so it
//    fails with certainty once C has more than a few dozen elements. K <= 2^20 keeps every
//    check able to see one wrong term, and is above the 10^6 that split-K (chapter 06) needs.
constexpr int64_t kMaxElements = 2147483647;
constexpr int64_t kMaxDim = 1 << 20;  // M, N and K (rows and cols in chapter 02)
