// The reader's exercises (NN_chapter/exercises/): a kernel with its signature, launcher and
// everything around it written, and the lines the chapter taught left for the reader.
//
// An exercise file defines EXERCISE_NOT_WRITTEN_<NAME> until the reader deletes that line
// (the file says so at the top). Its launcher, which the reader does not edit, starts with
//
//   #ifdef EXERCISE_NOT_WRITTEN_FIX_THE_TRAP
//     exercise_not_written("04_coalesced/exercises/fix_the_trap.cuh");
//   #endif
//
// so an unwritten exercise never runs: the program says so in one line and exits 77, which
// Meson reports as SKIP, and a fresh clone stays green. Nothing else sets the macro, so a
// written exercise is always run and verified. With -Dexercise_solutions=true the build takes
// NN_chapter/exercises/solutions/ instead, where no such line exists.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "cli.h"

[[noreturn]] inline void exercise_not_written(const char* file) {
  std::fflush(stdout);
  std::fprintf(stderr, "exercise not written yet: edit %s\n", file);
  std::exit(kExitSkip);
}
