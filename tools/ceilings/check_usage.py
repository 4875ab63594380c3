#!/usr/bin/env python3
"""Runs the ceilings program with ARGS and checks how it exits: with CODE 0, FRAGMENT must be in
stdout; with any other CODE, stderr must be exactly one line that contains FRAGMENT (bad usage:
one line saying what is wrong, before any GPU work, so the check passes without a GPU).

usage: check_usage.py PROGRAM CODE FRAGMENT [ARGS...]
"""
import subprocess
import sys


def main():
    program, code, fragment, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    p = subprocess.run([program] + args, capture_output=True, text=True, timeout=60)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if code == 0:
        ok = p.returncode == 0 and fragment in p.stdout
    else:
        ok = p.returncode == code and len(lines) == 1 and fragment in lines[0]
    print(("ok   " if ok else "FAIL ") + " ".join(args) +
          f"  -> exit {p.returncode} (expected {code} with '{fragment}'): {p.stderr.strip()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
