#!/usr/bin/env python3
"""Bad --splits values: one line on stderr naming the problem, exit 2, with or without a GPU.

usage: bad_splits.py PROGRAM
"""
import subprocess
import sys


def main():
    program = sys.argv[1]
    failures = 0
    cases = [
        (["--splits", "0"], "at least 1"),
        (["--splits", "-3"], "at least 1"),
        (["--splits", "four"], "not a whole number"),
        (["--splits", "2x"], "not a whole number"),
        (["--splits", ""], "empty value"),
        (["--splits"], "needs a value"),
        (["--splits", "9", "--m", "64", "--n", "64", "--k", "8"], "more than K = 8"),
        (["--splits", "2", "--shapes", "4x4x4,4x4x1"], "more than K = 1"),
        (["--splits", "99999999999"], "too large"),
    ]
    for args, fragment in cases:
        p = subprocess.run([program] + args, capture_output=True, text=True, timeout=60)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        ok = p.returncode == 2 and len(lines) == 1 and fragment in lines[0] and "--splits" in lines[0]
        print(("ok   " if ok else "FAIL ") + " ".join(args) + f"  -> exit {p.returncode}: "
              + p.stderr.strip())
        failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
