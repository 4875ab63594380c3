#!/usr/bin/env python3
"""One exercise through its chapter's own path: verified at the chapter's test shapes, then
timed next to the chapter's step kernel and cuBLAS.

usage: exercise.py PROGRAM KERNEL STEP_KERNEL SHAPES BENCH_SHAPE

Exit 77 (Meson: SKIP) with one line while the exercise is not written; 1 when it fails
verification (the program names the first wrong elements: row, column, expected, got); 0 when
it passes, after printing its time next to STEP_KERNEL and the baseline.
"""
import subprocess
import sys


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    program, kernel, step, shapes, bench_shape = sys.argv[1:]
    check = subprocess.run([program, "--check", "--kernel", kernel, "--shapes", shapes],
                           capture_output=True, text=True)
    if check.returncode == 77:
        print((check.stderr.strip().splitlines() or ["skipped"])[-1])
        return 77
    if check.returncode != 0:
        sys.stdout.write(check.stdout + check.stderr)
        print(f"FAIL: {kernel} failed verification (the first wrong elements are above)")
        return 1
    n = len(shapes.split(","))
    print(f"PASS: {kernel} is correct at {n} shapes ({shapes})")
    bench = subprocess.run([program, "--bench", "--kernel", f"{kernel},{step}", "--shapes",
                            bench_shape], capture_output=True, text=True)
    sys.stdout.write(bench.stdout + bench.stderr)
    if bench.returncode != 0:
        print(f"FAIL: timing {kernel} next to {step} exited {bench.returncode}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
