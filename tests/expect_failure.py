#!/usr/bin/env python3
"""Runs PROGRAM ARGS... and passes only if it fails verification (exit 1) with a line on stderr
that contains FRAGMENT: a `should_fail` test passes on any non-zero exit (bad usage, a crash),
this one only on the failure it is written for. Exit 77 (skip) where the program finds no GPU.

usage: expect_failure.py FRAGMENT PROGRAM ARGS...
"""
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    fragment, cmd = sys.argv[1], sys.argv[2:]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode == 77:
        return 77
    hit = [l for l in p.stderr.splitlines() if fragment in l]
    if p.returncode == 1 and hit:
        print(f"ok: exit 1, and stderr says: {hit[0]}")
        return 0
    print(f"FAIL: wanted exit 1 and a line containing '{fragment}'; got exit {p.returncode}"
          f"{'' if hit else ', no such line'}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
