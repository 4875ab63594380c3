#include "cli.h"

#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <initializer_list>
#include <sstream>

namespace {

// Whole decimal number, no trailing junk, within [lo, hi].
bool parse_int(const std::string& flag, const std::string& text, int64_t lo, int64_t hi,
               int64_t* value, std::string* error) {
  if (text.empty()) {
    *error = flag + ": empty value";
    return false;
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || end == text.c_str()) {
    *error = flag + ": '" + text + "' is not a whole number";
    return false;
  }
  if (errno == ERANGE || v > hi) {
    *error = flag + ": " + text + " is too large (at most " + std::to_string(hi) + ")";
    return false;
  }
  if (v < lo) {
    *error = flag + ": " + text + " must be at least " + std::to_string(lo);
    return false;
  }
  *value = v;
  return true;
}

bool parse_size(const std::string& flag, const std::string& text, int64_t hi, int* value,
                std::string* error) {
  int64_t v = 0;
  if (!parse_int(flag, text, 1, hi, &v, error)) return false;
  *value = static_cast<int>(v);
  return true;
}

// "MxNxK" (or "RxC" when the chapter has no K).
bool parse_shape(const CliSpec& spec, const std::string& text, Shape* s, std::string* error) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, 'x')) parts.push_back(part);
  size_t want = spec.has_k ? 3 : 2;
  if (parts.size() != want || text.back() == 'x') {
    *error = "--shapes: '" + text + "' is not of the form " + (spec.has_k ? "MxNxK" : "ROWSxCOLS");
    return false;
  }
  if (!parse_size("--shapes", parts[0], kMaxDim, &s->M, error)) return false;
  if (!parse_size("--shapes", parts[1], kMaxDim, &s->N, error)) return false;
  if (spec.has_k && !parse_size("--shapes", parts[2], kMaxDim, &s->K, error)) return false;
  return true;
}

// Each matrix must have at most kMaxElements elements (products checked in 64 bits).
bool check_shape(const CliSpec& spec, const Shape& s, std::string* error) {
  auto too_big = [&](const char* what, int64_t a, int64_t b) {
    if (a * b <= kMaxElements) return false;
    *error = std::string("size too large: ") + what + " has " + std::to_string(a) + " x " +
             std::to_string(b) + " elements, more than the 2^31-1 that 32-bit indices reach";
    return true;
  };
  if (!spec.has_k) return !too_big("the matrix", s.M, s.N);
  return !(too_big("A (M x K)", s.M, s.K) || too_big("B (K x N)", s.K, s.N) ||
           too_big("C (M x N)", s.M, s.N));
}

bool is_sweep(const CliSpec& spec, const std::string& name) {
  for (const auto& s : spec.sweep)
    if (s == name) return true;
  return false;
}

bool is_exercise(const CliSpec& spec, const std::string& name) {
  for (const auto& s : spec.exercises)
    if (s == name) return true;
  return false;
}

}  // namespace

std::string usage_text(const CliSpec& spec) {
  std::ostringstream o;
  o << "usage: " << spec.program << " [options]\n" << spec.summary << "\n\n";
  if (spec.has_k) {
    o << "  --m M --n N --k K     problem size: C (M x N) = A (M x K) * B (K x N)\n"
      << "  --size S              square problem, M = N = K = S\n"
      << "  --shapes LIST         several sizes, e.g. 1x1x1,127x33x65\n";
  } else {
    o << "  --m ROWS --n COLS     matrix size\n"
      << "  --size S              square matrix, ROWS = COLS = S\n"
      << "  --shapes LIST         several sizes, e.g. 1x1,8191x33\n";
  }
  std::string kernel_head = "--kernel NAME|all";
  if (!spec.sweep.empty()) kernel_head += "|sweep";
  if (!spec.exercises.empty()) kernel_head += "|exercises";
  o << "  " << kernel_head
    << (kernel_head.size() < 22 ? std::string(22 - kernel_head.size(), ' ')
                                : "\n" + std::string(24, ' '))
    << "kernel(s) to run, NAME,NAME,... for several (default all):\n                       ";
  for (const auto& k : spec.kernels)
    if (!is_sweep(spec, k) && !is_exercise(spec, k)) o << " " << k;
  if (!spec.sweep.empty()) o << "\n                        sweep (tuning, not in all):";
  for (const auto& k : spec.sweep) o << " " << k;
  if (!spec.exercises.empty()) o << "\n                        exercises (yours to write):";
  for (const auto& k : spec.exercises) o << " " << k;
  o << "\n";
  for (const auto& x : spec.options) {
    std::string head = x.flag + " " + x.meta;
    o << "  " << head << std::string(head.size() < 22 ? 22 - head.size() : 1, ' ') << x.help
      << "\n";
  }
  o
    << "  --check               verify every kernel against the reference, no timing\n"
    << "  --bench               verify, then time (median of --reps runs, L2 flushed); the\n"
    << "                        kernels' runs are interleaved, each with its baseline's\n"
    << "  --sequential          with --bench: time each kernel's runs back to back instead\n"
    << "  --twice               run each verified kernel a second time on the same input; the\n"
    << "                        two outputs must be the same bits (determinism)\n"
    << "  --reps R              timed repetitions (default " << spec.default_reps
    << ", fewer for slow kernels)\n"
    << "  --seed S              seed of the random inputs (default 1234)\n"
    << "  --csv FILE            also write the result rows to FILE\n"
    << "  --list                print the kernels: name, role, baseline, precision, shape\n"
    << "  --help                this text\n"
    << "With no options: --check then --bench at the default size(s):";
  for (const auto& s : spec.default_shapes) {
    o << " " << s.M << "x" << s.N;
    if (spec.has_k) o << "x" << s.K;
  }
  o << "\nGive the size one way: --shapes, --size, or --m --n"
    << (spec.has_k ? " --k" : "") << "; each option at most once.\n"
    << "Exit status: 0 pass, 1 verification failure (a wrong element, or a write outside the\n"
    << "output), 2 bad usage, 77 no usable GPU or an exercise not written yet (skip).\n";
  return o.str();
}

CliStatus parse_cli(const CliSpec& spec, int argc, const char* const* argv, Options* out,
                    std::string* error) {
  Options o;
  o.reps = spec.default_reps;
  bool want_check = false, want_bench = false;
  int size = 0, m = 0, n = 0, k = 0;
  std::vector<Shape> shapes;
  std::string kernel = "all";
  std::vector<std::pair<const IntOption*, int64_t>> own_values;  // stored once all is valid
  std::vector<std::string> seen;  // the options given so far: each may be given once
  std::vector<std::string> size_flags;  // --shapes, --size, --m, --n, --k as given, in order

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    // Accept both "--flag value" and "--flag=value".
    auto eq = arg.find('=');
    bool has_inline = arg.rfind("--", 0) == 0 && eq != std::string::npos;
    if (has_inline) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto take_value = [&]() -> bool {
      if (has_inline) return true;
      if (i + 1 >= argc) {
        *error = arg + " needs a value";
        return false;
      }
      value = argv[++i];
      return true;
    };
    auto no_value = [&]() -> bool {
      if (has_inline) *error = arg + " takes no value";
      return !has_inline;
    };

    const IntOption* own = nullptr;
    for (const auto& x : spec.options)
      if (arg == x.flag) own = &x;

    // Given twice, an option would silently take one of its two values: refuse it.
    const std::string name = arg == "-h" ? "--help" : arg;
    for (const auto& prev : seen)
      if (prev == name) {
        *error = name + " given twice";
        return CliStatus::kError;
      }
    seen.push_back(name);
    if (name == "--shapes" || name == "--size" || name == "--m" || name == "--n" ||
        name == "--k")
      size_flags.push_back(name);

    if (arg == "--help" || arg == "-h") {
      if (!no_value()) return CliStatus::kError;
      return CliStatus::kHelp;
    } else if (arg == "--list") {
      if (!no_value()) return CliStatus::kError;
      return CliStatus::kList;
    } else if (own) {
      if (!take_value()) return CliStatus::kError;
      int64_t v = 0;
      if (!parse_int(arg, value, own->lo, own->hi, &v, error)) return CliStatus::kError;
      own_values.push_back({own, v});
    } else if (arg == "--check") {
      if (!no_value()) return CliStatus::kError;
      want_check = true;
    } else if (arg == "--bench") {
      if (!no_value()) return CliStatus::kError;
      want_bench = true;
    } else if (arg == "--sequential") {
      if (!no_value()) return CliStatus::kError;
      o.sequential = true;
    } else if (arg == "--twice") {
      if (!no_value()) return CliStatus::kError;
      o.twice = true;
    } else if (arg == "--m" || arg == "--n" || arg == "--k" || arg == "--size") {
      if (arg == "--k" && !spec.has_k) {
        *error = "--k: this program's sizes are rows x cols (--m, --n); it has no K";
        return CliStatus::kError;
      }
      if (!take_value()) return CliStatus::kError;
      int* dst = arg == "--m" ? &m : arg == "--n" ? &n : arg == "--k" ? &k : &size;
      if (!parse_size(arg, value, kMaxDim, dst, error)) return CliStatus::kError;
    } else if (arg == "--shapes") {
      if (!take_value()) return CliStatus::kError;
      std::stringstream ss(value);
      std::string item;
      while (std::getline(ss, item, ',')) {
        Shape s;
        if (!parse_shape(spec, item, &s, error)) return CliStatus::kError;
        shapes.push_back(s);
      }
      if (shapes.empty() || value.back() == ',') {
        *error = "--shapes: '" + value + "' is not a comma-separated list of sizes";
        return CliStatus::kError;
      }
    } else if (arg == "--kernel") {
      if (!take_value()) return CliStatus::kError;
      kernel = value;
    } else if (arg == "--reps") {
      if (!take_value()) return CliStatus::kError;
      int64_t r = 0;
      if (!parse_int(arg, value, 1, 100000, &r, error)) return CliStatus::kError;
      o.reps = static_cast<int>(r);
      o.reps_given = true;
    } else if (arg == "--seed") {
      if (!take_value()) return CliStatus::kError;
      int64_t s = 0;
      if (!parse_int(arg, value, 0, INT64_MAX, &s, error)) return CliStatus::kError;
      o.seed = static_cast<uint64_t>(s);
    } else if (arg == "--csv") {
      if (!take_value()) return CliStatus::kError;
      if (value.empty()) {
        *error = "--csv: empty file name";
        return CliStatus::kError;
      }
      o.csv = value;
    } else {
      *error = "unknown option '" + arg + "' (see --help)";
      return CliStatus::kError;
    }
  }

  // Sizes: --shapes, or --size, or --m/--n/--k, or the chapter's defaults; never two of the
  // three ways (which would win is a guess).
  auto first_of = [&](std::initializer_list<const char*> names) -> std::string {
    for (const auto& f : size_flags)
      for (const char* x : names)
        if (f == x) return f;
    return "";
  };
  const std::string by_shapes = first_of({"--shapes"}), by_size = first_of({"--size"}),
                    by_mnk = first_of({"--m", "--n", "--k"});
  if (!by_shapes.empty() && (!by_size.empty() || !by_mnk.empty())) {
    *error = by_shapes + " and " + (by_size.empty() ? by_mnk : by_size) +
             " both give the problem size: use one";
    return CliStatus::kError;
  }
  if (!by_size.empty() && !by_mnk.empty()) {
    *error = by_size + " and " + by_mnk + " both give the problem size: use one";
    return CliStatus::kError;
  }
  bool any_size = size || m || n || k;
  if (any_size) {
    Shape s;  // --size S, or all of --m, --n (and --k)
    s.M = size ? size : m;
    s.N = size ? size : n;
    s.K = spec.has_k ? (size ? size : k) : 1;
    if (!s.M || !s.N || !s.K) {
      *error = spec.has_k ? "give all of --m, --n and --k, or --size"
                          : "give both --m and --n, or --size";
      return CliStatus::kError;
    }
    shapes.push_back(s);
  }
  if (shapes.empty()) shapes = spec.default_shapes;
  for (const auto& s : shapes)
    if (!check_shape(spec, s, error)) return CliStatus::kError;
  o.shapes = shapes;

  for (const auto& [x, v] : own_values)
    if (x->check)
      for (const auto& s : shapes)
        if (std::string why = x->check(v, s); !why.empty()) {
          *error = x->flag + ": " + why;
          return CliStatus::kError;
        }

  if (kernel == "all") {
    for (const auto& name : spec.kernels)
      if (!is_sweep(spec, name) && !is_exercise(spec, name)) o.kernels.push_back(name);
  } else if (kernel == "exercises") {
    if (spec.exercises.empty()) {
      *error = "--kernel exercises: this program has no exercises";
      return CliStatus::kError;
    }
    o.kernels = spec.exercises;
  } else if (kernel == "sweep") {
    if (spec.sweep.empty()) {
      *error = "--kernel sweep: this program has no sweep";
      return CliStatus::kError;
    }
    o.kernels = spec.sweep;
  } else {  // one name, or several separated by commas
    std::vector<std::string> names;
    std::stringstream ss(kernel);
    std::string item;
    while (std::getline(ss, item, ',')) names.push_back(item);
    if (names.empty() || kernel.back() == ',') names.push_back("");
    for (const auto& want : names) {
      bool known = false;
      for (const auto& name : spec.kernels) known = known || name == want;
      if (!known) {
        *error = "unknown kernel '" + want + "'; known:";
        for (const auto& name : spec.kernels) *error += " " + name;
        return CliStatus::kError;
      }
    }
    o.kernels_named = true;
    for (const auto& name : spec.kernels)  // the chapter's order, each once
      for (const auto& want : names)
        if (name == want) {
          o.kernels.push_back(name);
          break;
        }
  }

  if (want_check || want_bench) {
    o.check = want_check;
    o.bench = want_bench;
  }
  for (const auto& [x, v] : own_values)
    if (x->value) *x->value = static_cast<int>(v);
  *out = o;
  return CliStatus::kOk;
}
