#!/usr/bin/env python3
"""Runs a chapter program with bad arguments: each must print one line naming the problem on
stderr and exit 2, before touching the GPU (so this passes on machines without one).

usage: bad_usage.py PROGRAM [--no-k] [--gpu]
  --no-k   the program's sizes are rows x cols (chapter 02)
  --gpu    instead run the cases that need a GPU to judge (memory that does not fit); exits 77
           (skip) when the program finds no GPU
"""
import os
import subprocess
import sys


def run(program, args, env=None):
    p = subprocess.run([program] + args, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def main():
    program = sys.argv[1]
    no_k = "--no-k" in sys.argv
    gpu = "--gpu" in sys.argv
    failures = 0

    def expect(args, code, fragment, env=None):
        nonlocal failures
        rc, out, err = run(program, args, env)
        lines = [l for l in err.splitlines() if l.strip()]
        ok = rc == code and len(lines) == 1 and fragment in lines[0]
        print(("ok   " if ok else "FAIL ") + " ".join(args) + f"  -> exit {rc}: {err.strip()}")
        failures += not ok

    if gpu:
        # Whether there is a GPU: the program's first kernel (its baseline) at 1 x 1 (x 1), not
        # every kernel, which under a busy `meson test` can take longer than the test's timeout.
        first = run(program, ["--list"])[1].split()[0]
        rc, _, _ = run(program, ["--check", "--size", "1", "--kernel", first])
        if rc == 77:
            print("no CUDA device: skipped")
            return 77
        # 2048^3 needs ~64 MiB; pretend only 16 MiB are free.
        expect(["--size", "2048"], 2, "needs", env={"GEMM_TUTORIAL_FREE_MIB": "16"})
        return 1 if failures else 0

    size3 = ["--m", "3", "--n", "3"] + ([] if no_k else ["--k", "3"])
    expect(["--size", "abc"], 2, "not a whole number")
    expect(["--size", "0"], 2, "at least 1")
    expect(["--m", "-4", "--n", "4"] + ([] if no_k else ["--k", "4"]), 2, "at least 1")
    expect(["--size", "12x"], 2, "not a whole number")
    expect(["--size", "3000000"], 2, "too large")
    expect(["--m", "65536", "--n", "65536"] + ([] if no_k else ["--k", "1"]), 2, "size too large")
    expect(["--size", "99999999999999999999"], 2, "too large")
    expect(["--kernel", "no_such_kernel"] + size3, 2, "unknown kernel 'no_such_kernel'")
    expect(["--kernel", "all,no_such_kernel"] + size3, 2, "unknown kernel 'all'")
    expect(["--bogus"], 2, "unknown option '--bogus'")
    expect(["--size"], 2, "needs a value")
    expect(["--reps", "zero"], 2, "not a whole number")
    expect(["--csv", "/nonexistent-dir/x.csv", "--size", "8"], 2, "cannot write")
    # Two ways of giving the size, or an option given twice: refused, never resolved silently.
    expect(["--size", "8", "--m", "5"], 2, "--size and --m both give the problem size: use one")
    expect(["--shapes", "4x4" if no_k else "4x4x4", "--size", "8"], 2,
           "--shapes and --size both give the problem size: use one")
    expect(["--m", "5", "--m", "6", "--n", "3"] + ([] if no_k else ["--k", "3"]), 2,
           "--m given twice")
    expect(["--kernel", "all", "--kernel=all"] + size3, 2, "--kernel given twice")
    expect(["--check", "--check"] + size3, 2, "--check given twice")
    expect(["--seed", "1", "--seed", "1"] + size3, 2, "--seed given twice")
    if no_k:
        expect(["--k", "5"], 2, "no K")
    rc, out, _ = run(program, ["--help"])
    if "--splits " in out:  # a chapter's own option (06) is refused twice like the others
        expect(["--splits", "2", "--splits", "2"] + size3, 2, "--splits given twice")
    if "--gelu-tail " in out:  # chapters 10 and 11 (chapter 10's harness)
        kernels = [l.split()[0] for l in run(program, ["--list"])[1].splitlines() if l.split()]
        if "fp8" in kernels:  # chapter 10: unpromoted FP8 named at a K where its bound is useless
            expect(["--kernel", "fp8", "--shapes", "1x1x131072"], 2,
                   "fp8 is refused at K = 131072 (above 65536)")
        expect(["--gelu-tail", "2"] + size3, 2, "--gelu-tail")
    ok = rc == 0 and "usage:" in out and "77 no usable GPU or an exercise not written yet" in out
    print(("ok   " if ok else "FAIL ") + "--help -> exit 0 with usage and every exit status")
    failures += not ok
    print(f"{'FAILED' if failures else 'PASSED'}: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
