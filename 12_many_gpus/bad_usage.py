#!/usr/bin/env python3
"""Chapter 12's own options, given wrong: each must print one line naming the problem on stderr
and exit 2 before any GPU work (tests/bad_usage.py checks the options every program shares).
More GPUs than the machine has is bad usage too, but only a GPU can tell: without one the
program exits 77 there, which passes.

usage: bad_usage.py PROGRAM
"""
import os
import subprocess
import sys


def main():
    program = sys.argv[1]
    failures = 0

    def expect(args, fragment, codes=(2,), env=None):
        nonlocal failures
        e = dict(os.environ)
        e.pop("MANY_GPUS_SKIP_FEWER", None)
        e.update(env or {})
        p = subprocess.run([program] + args, capture_output=True, text=True, timeout=120, env=e)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        ok = p.returncode in codes and (p.returncode in (0, 77) or
                                        (len(lines) == 1 and fragment in lines[0]))
        print(("ok   " if ok else "FAIL ") + " ".join(args) +
              f"  -> exit {p.returncode}: {p.stderr.strip()}")
        failures += not ok

    expect(["--gpus", "0"], "--gpus")
    expect(["--gpus", "9"], "--gpus")
    expect(["--gpus", "two"], "not a whole number")
    expect(["--gpus", "-1"], "--gpus")
    expect(["--chunks", "0"], "--chunks")
    expect(["--chunks", "65"], "--chunks")
    expect(["--timeout", "0"], "--timeout")
    expect(["--kernel", "ag_fused"], "unknown kernel 'ag_fused'")
    expect(["--reps", "1001"], "--reps")
    expect(["--gpus", "2", "--gpus", "2"], "given twice")
    expect(["--shapes", "64x0x64"], "at least 1")
    # Eight GPUs on a machine with fewer: bad usage; without any GPU a skip; with eight, a run.
    expect(["--gpus", "8", "--check", "--shapes", "64x64x64"], "this machine has",
           codes=(0, 2, 77))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
