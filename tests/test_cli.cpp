// The shared command line: good input parses, every kind of bad input is refused with a message.
#include <initializer_list>
#include <string>
#include <vector>

#include "common/cli.h"
#include "harness.h"

namespace {
CliSpec gemm_spec() {
  CliSpec s;
  s.program = "test";
  s.kernels = {"cublas", "fast"};
  s.default_shapes = {{64, 32, 16}};
  return s;
}

CliStatus parse(const CliSpec& spec, std::initializer_list<const char*> args, Options* o,
                std::string* err) {
  std::vector<const char*> argv = {"prog"};
  argv.insert(argv.end(), args);
  return parse_cli(spec, static_cast<int>(argv.size()), argv.data(), o, err);
}

bool refused(std::initializer_list<const char*> args, const std::string& expect_in_message) {
  Options o;
  std::string err;
  bool ok = parse(gemm_spec(), args, &o, &err) == CliStatus::kError &&
            err.find(expect_in_message) != std::string::npos && err.find('\n') == std::string::npos;
  if (!ok) std::printf("  message was: '%s'\n", err.c_str());
  return ok;
}
}  // namespace

TEST(cli, no_arguments_means_check_and_bench_at_defaults) {
  Options o;
  std::string err;
  CHECK(parse(gemm_spec(), {}, &o, &err) == CliStatus::kOk);
  CHECK(o.check && o.bench);
  CHECK(o.shapes.size() == 1 && o.shapes[0].M == 64 && o.shapes[0].N == 32 && o.shapes[0].K == 16);
  CHECK(o.kernels.size() == 2);
}

TEST(cli, sizes_kernel_and_modes) {
  Options o;
  std::string err;
  CHECK(parse(gemm_spec(), {"--m", "100", "--n=7", "--k", "100", "--kernel", "fast", "--check",
                            "--seed", "9", "--reps", "5"},
              &o, &err) == CliStatus::kOk);
  CHECK(o.shapes.size() == 1 && o.shapes[0].M == 100 && o.shapes[0].N == 7 && o.shapes[0].K == 100);
  CHECK(o.kernels.size() == 1 && o.kernels[0] == "fast");
  CHECK(o.check && !o.bench);
  CHECK(o.seed == 9 && o.reps == 5 && o.reps_given);
  CHECK(parse(gemm_spec(), {"--shapes", "1x2x3,4x5x6"}, &o, &err) == CliStatus::kOk);
  CHECK(o.shapes.size() == 2 && o.shapes[1].M == 4 && o.shapes[1].N == 5 && o.shapes[1].K == 6);
  CHECK(parse(gemm_spec(), {"--help"}, &o, &err) == CliStatus::kHelp);
  CHECK(!o.sequential);
  CHECK(parse(gemm_spec(), {"--bench", "--sequential"}, &o, &err) == CliStatus::kOk);
  CHECK(o.sequential && o.bench && !o.check);
  CHECK(!o.twice);
  CHECK(parse(gemm_spec(), {"--check", "--twice"}, &o, &err) == CliStatus::kOk);
  CHECK(o.twice && o.check && !o.bench);
}

// Several kernels by name: each once, in the chapter's order (the order they are timed in).
TEST(cli, kernel_lists) {
  Options o;
  std::string err;
  CliSpec s = gemm_spec();
  s.kernels = {"cublas", "fast", "faster"};
  CHECK(parse(s, {"--kernel", "faster,cublas,faster"}, &o, &err) == CliStatus::kOk);
  CHECK(o.kernels.size() == 2 && o.kernels[0] == "cublas" && o.kernels[1] == "faster");
  CHECK(parse(s, {"--kernel=fast"}, &o, &err) == CliStatus::kOk);
  CHECK(o.kernels.size() == 1 && o.kernels[0] == "fast");
}

// `all` leaves out the sweep and the exercises; `sweep` and `exercises` select them; a program
// without exercises refuses `--kernel exercises` with one line.
TEST(cli, sweep_and_exercises_are_not_in_all) {
  Options o;
  std::string err;
  CliSpec s = gemm_spec();
  s.kernels = {"cublas", "fast", "tune_a", "ex_mine"};
  s.sweep = {"tune_a"};
  s.exercises = {"ex_mine"};
  CHECK(parse(s, {"--kernel", "all"}, &o, &err) == CliStatus::kOk);
  CHECK(o.kernels.size() == 2 && o.kernels[1] == "fast");
  CHECK(parse(s, {"--kernel", "sweep"}, &o, &err) == CliStatus::kOk);
  CHECK(o.kernels.size() == 1 && o.kernels[0] == "tune_a");
  CHECK(parse(s, {"--kernel", "exercises"}, &o, &err) == CliStatus::kOk);
  CHECK(o.kernels.size() == 1 && o.kernels[0] == "ex_mine");
  CHECK(parse(s, {"--kernel", "ex_mine,fast"}, &o, &err) == CliStatus::kOk);
  CHECK(o.kernels.size() == 2 && o.kernels[0] == "fast" && o.kernels[1] == "ex_mine");
  CHECK(refused({"--kernel", "exercises"}, "this program has no exercises"));
}

TEST(cli, bad_numbers_are_refused) {
  CHECK(refused({"--size", "abc"}, "not a whole number"));
  CHECK(refused({"--size", "12abc"}, "not a whole number"));
  CHECK(refused({"--size", "1.5"}, "not a whole number"));
  CHECK(refused({"--m", ""}, "empty"));
  CHECK(refused({"--size", "0"}, "at least 1"));
  CHECK(refused({"--k", "-5", "--m", "2", "--n", "2"}, "at least 1"));
  CHECK(refused({"--size", "99999999999999999999999"}, "too large"));
  CHECK(refused({"--m", "2000000", "--n", "2", "--k", "2"}, "too large"));
  CHECK(refused({"--reps", "0"}, "at least 1"));
  CHECK(refused({"--seed", "-1"}, "at least 0"));
}

TEST(cli, sizes_that_overflow_32_bit_indices_are_refused) {
  // 65536 x 65536 = 2^32 elements.
  CHECK(refused({"--m", "65536", "--n", "65536", "--k", "1"}, "size too large"));
  CHECK(refused({"--m", "1", "--n", "65536", "--k", "65536"}, "B (K x N)"));
  CHECK(refused({"--shapes", "1x1x1,65536x1x65536"}, "A (M x K)"));
}

// The edges of what is accepted (cli.h says why these limits): every dimension up to 2^20,
// every matrix up to 2^31 - 1 elements; one past either is refused.
TEST(cli, largest_accepted_sizes) {
  Options o;
  std::string err;
  CHECK(parse(gemm_spec(), {"--m", "1", "--n", "1", "--k", "1048576"}, &o, &err) == CliStatus::kOk);
  CHECK(o.shapes.size() == 1 && o.shapes[0].K == kMaxDim);
  CHECK(parse(gemm_spec(), {"--shapes", "1x1x1048576,1048576x1x1,1x1048576x1"}, &o, &err) ==
        CliStatus::kOk);
  CHECK(o.shapes.size() == 3 && o.shapes[1].M == kMaxDim && o.shapes[2].N == kMaxDim);
  // 2^20 x 2047 = 2^31 - 2^20 elements: accepted; x 2048 = 2^31: refused.
  CHECK(parse(gemm_spec(), {"--m", "1048576", "--n", "1", "--k", "2047"}, &o, &err) ==
        CliStatus::kOk);
  CHECK(parse(gemm_spec(), {"--m", "2047", "--n", "1048576", "--k", "1"}, &o, &err) ==
        CliStatus::kOk);
  CHECK(refused({"--m", "1048576", "--n", "1", "--k", "2048"}, "A (M x K)"));
  CHECK(refused({"--m", "1", "--n", "1048576", "--k", "2048"}, "B (K x N)"));
  CHECK(refused({"--m", "2048", "--n", "1048576", "--k", "1"}, "C (M x N)"));
  // One past the dimension limit, for every way of giving a size.
  CHECK(refused({"--m", "1", "--n", "1", "--k", "1048577"}, "at most 1048576"));
  CHECK(refused({"--m", "1048577", "--n", "1", "--k", "1"}, "at most 1048576"));
  CHECK(refused({"--size", "1048577"}, "at most 1048576"));
  CHECK(refused({"--shapes", "1x1x1048577"}, "at most 1048576"));
  CHECK(refused({"--shapes", "1x1048577x1"}, "at most 1048576"));
  CHECK(refused({"--k", "2147483647", "--m", "1", "--n", "1"}, "too large"));
  CHECK(refused({"--k", "2147483648", "--m", "1", "--n", "1"}, "too large"));
}

TEST(cli, usage_mistakes_are_refused) {
  CHECK(refused({"--frobnicate"}, "unknown option '--frobnicate'"));
  CHECK(refused({"--kernel", "fastest"}, "unknown kernel 'fastest'"));
  CHECK(refused({"--kernel", "fast,fastest"}, "unknown kernel 'fastest'"));
  CHECK(refused({"--kernel", "fast,"}, "unknown kernel ''"));
  CHECK(refused({"--kernel", ""}, "unknown kernel ''"));
  CHECK(refused({"--sequential=yes"}, "takes no value"));
  CHECK(refused({"--twice=1"}, "takes no value"));
  CHECK(refused({"--size"}, "needs a value"));
  CHECK(refused({"--m", "4", "--n", "4"}, "give all of --m, --n and --k"));
  CHECK(refused({"--shapes", "4x4"}, "not of the form MxNxK"));
  CHECK(refused({"--shapes", "4x4x4,"}, "comma-separated"));
  CHECK(refused({"--shapes", "4x4x4", "--size", "8"},
                "--shapes and --size both give the problem size: use one"));
  CHECK(refused({"--check=yes"}, "takes no value"));
}

TEST(cli, chapters_without_k_refuse_it) {
  CliSpec s = gemm_spec();
  s.has_k = false;
  Options o;
  std::string err;
  CHECK(parse(s, {"--k", "4"}, &o, &err) == CliStatus::kError);
  CHECK(parse(s, {"--shapes", "3x5"}, &o, &err) == CliStatus::kOk);
  CHECK(o.shapes[0].M == 3 && o.shapes[0].N == 5);
  CHECK(parse(s, {"--shapes", "3x5x7"}, &o, &err) == CliStatus::kError);
}

// Two ways of giving the size, or one option given twice: refused in one line, never resolved
// silently (which of the two would a reader expect to win?).
TEST(cli, conflicting_options_are_refused) {
  CHECK(refused({"--size", "8", "--m", "5"}, "--size and --m both give the problem size: use one"));
  CHECK(refused({"--m", "5", "--size", "8"}, "--size and --m both give the problem size: use one"));
  CHECK(refused({"--size", "8", "--n", "5", "--k", "3"}, "--size and --n both give"));
  CHECK(refused({"--size", "8", "--k", "3"}, "--size and --k both give"));
  CHECK(refused({"--shapes", "4x4x4", "--m", "4", "--n", "4", "--k", "4"},
                "--shapes and --m both give the problem size: use one"));
  CHECK(refused({"--m", "5", "--n", "5", "--k", "5", "--m", "6"}, "--m given twice"));
  CHECK(refused({"--m=5", "--n", "5", "--k", "5", "--m", "5"}, "--m given twice"));
  CHECK(refused({"--size", "8", "--size", "8"}, "--size given twice"));
  CHECK(refused({"--shapes", "1x1x1", "--shapes", "2x2x2"}, "--shapes given twice"));
  CHECK(refused({"--kernel", "fast", "--kernel", "cublas"}, "--kernel given twice"));
  CHECK(refused({"--seed", "1", "--seed", "2"}, "--seed given twice"));
  CHECK(refused({"--reps", "3", "--reps=3"}, "--reps given twice"));
  CHECK(refused({"--csv", "a.csv", "--csv", "b.csv"}, "--csv given twice"));
  CHECK(refused({"--check", "--check"}, "--check given twice"));
  CHECK(refused({"--bench", "--bench"}, "--bench given twice"));
  CHECK(refused({"--twice", "--twice"}, "--twice given twice"));
  CHECK(refused({"--bench", "--sequential", "--sequential"}, "--sequential given twice"));
  // --check and --bench together are no conflict: verify, then time (the default).
  Options o;
  std::string err;
  CHECK(parse(gemm_spec(), {"--check", "--bench"}, &o, &err) == CliStatus::kOk);
  CHECK(o.check && o.bench);
}

// A chapter's own option (chapter 06's --splits) given twice is refused like the shared ones.
TEST(cli, own_option_given_twice_is_refused) {
  int splits = 0;
  CliSpec s = gemm_spec();
  s.options.push_back({"--splits", "S", "number of K slices", 1, 64, &splits, nullptr});
  Options o;
  std::string err;
  CHECK(parse(s, {"--splits", "4"}, &o, &err) == CliStatus::kOk);
  CHECK(splits == 4);
  splits = 0;
  CHECK(parse(s, {"--splits", "4", "--splits", "8"}, &o, &err) == CliStatus::kError);
  CHECK(err == "--splits given twice");
  CHECK(splits == 0);  // nothing stored from a refused command line
}

// --help names every option parse_cli accepts (the shared ones and the chapter's own) and every
// exit status, 77 for an exercise not written yet included.
TEST(cli, help_lists_every_option_and_exit_status) {
  int splits = 0;
  CliSpec s = gemm_spec();
  s.exercises = {"ex_mine"};
  s.kernels.push_back("ex_mine");
  s.options.push_back({"--splits", "S", "number of K slices", 1, 64, &splits, nullptr});
  const std::string u = usage_text(s);
  for (const char* flag : {"--m", "--n", "--k", "--size", "--shapes", "--kernel", "--splits",
                           "--check", "--bench", "--sequential", "--twice", "--reps", "--seed",
                           "--csv", "--list", "--help"})
    if (u.find(std::string(flag) + " ") == std::string::npos) {
      std::printf("  --help does not list %s\n", flag);
      CHECK(false);
    }
  CHECK(u.find("0 pass") != std::string::npos);
  CHECK(u.find("1 verification failure") != std::string::npos);
  CHECK(u.find("2 bad usage") != std::string::npos);
  CHECK(u.find("77 no usable GPU") != std::string::npos);
  CHECK(u.find("exercise not written yet") != std::string::npos);
}
