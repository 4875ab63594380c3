#!/usr/bin/env python3
"""The --bench path at a tiny size: the timer, the percentage against the baseline and the CSV
writer. Runs PROGRAM --bench --csv FILE [ARGS...] and checks the exit code and that every
timed row of the CSV has a positive median time, a rate and a percentage.

usage: bench_smoke.py PROGRAM ARGS...     (exit 77, skip, where the program finds no GPU)
"""
import csv
import os
import subprocess
import sys
import tempfile


def main():
    program, args = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.csv")
        p = subprocess.run([program, "--bench", "--csv", out] + args, capture_output=True,
                           text=True, timeout=600)
        sys.stdout.write(p.stdout + p.stderr)
        if p.returncode == 77:
            return 77
        if p.returncode != 0:
            print(f"FAIL: exit code {p.returncode}")
            return 1
        with open(out) as f:
            rows = list(csv.DictReader(f))
    rate = [k for k in (rows[0].keys() if rows else []) if k in ("TFLOP/s", "GB/s")]
    bad = []
    if not rows or not rate:
        bad.append("no rows, or no rate column")
    for r in rows:
        if r["check"] not in ("pass", "ref"):
            bad.append(f"{r['kernel']}: check {r['check']}")
        if not (float(r["ms_median"]) > 0 and float(r[rate[0]]) > 0 and
                float(r["pct_of_baseline"]) > 0 and int(r["reps"]) >= 1):
            bad.append(f"{r['kernel']}: not timed: {r}")
    for b in bad:
        print("FAIL:", b)
    print(f"{len(rows)} CSV rows checked")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
