#!/usr/bin/env python3
"""Chapter 10's lesson as a test: without promotion, the FP8 tensor cores' sum loses bits at
every k32 step, and at a long K its error is many times the promoted kernel's.

usage: fp8_promotion.py PROGRAM SHAPE FACTOR

Runs PROGRAM --check --kernel fp8,promoted --shapes SHAPE (both verified against the exact
product of the decoded e4m3 inputs) and passes when fp8's norm-wise error is at least FACTOR
times promoted's. Exit 77 (SKIP) where the program skips (no GPU, not sm_90).
"""
import csv
import os
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    program, shape, factor = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.csv")
        p = subprocess.run([program, "--check", "--kernel", "fp8,promoted", "--shapes", shape,
                            "--csv", out], capture_output=True, text=True)
        if p.returncode == 77:
            print(p.stderr.strip())
            return 77
        if p.returncode != 0:
            print(p.stdout + p.stderr)
            return 1
        err = {r["kernel"]: float(r["rel_err"]) for r in csv.DictReader(open(out))}
    ratio = err["fp8"] / err["promoted"]
    print(f"{shape}: fp8 rel_err {err['fp8']:.3e}, promoted {err['promoted']:.3e}: "
          f"{ratio:.2f}x (at least {factor}x expected)")
    return 0 if ratio >= factor else 1


if __name__ == "__main__":
    sys.exit(main())
