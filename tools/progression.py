#!/usr/bin/env python3
"""The tutorial's progression: every chapter's GEMM kernels at one size, each as a percentage
of cuBLAS timed in the same process, in one table.

usage: progression.py --build BUILD_DIR [--size 4096] [--csv FILE]
(`meson compile -C build progression` runs it on the build directory.)
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

# (chapter program, kernels in the order a reader meets them)
STEPS = [
    ("01_naive/naive", ["naive_uncoalesced", "naive_coalesced"]),
    ("03_tiled/tiled", ["tiled_smem", "tiled_1d", "tiled_2d"]),
    ("04_coalesced/coalesced", ["tiled_bt_trap", "tiled_bt_padded", "simt", "simt_bt"]),
]


def run_step(build, program, kernels, size, tmp):
    rows = []
    for kernel in kernels:
        out = os.path.join(tmp, "rows.csv")
        cmd = [os.path.join(build, program), "--bench", "--size", str(size), "--kernel", kernel,
               "--csv", out]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 77:
            print("no CUDA device: nothing to measure")
            sys.exit(77)
        if p.returncode != 0:
            sys.stderr.write(p.stdout + p.stderr)
            sys.exit(f"{' '.join(cmd)} failed with exit code {p.returncode}")
        if not run_step.device_printed:  # the device line, once
            print(p.stdout.splitlines()[0])
            run_step.device_printed = True
        with open(out) as f:
            for r in csv.DictReader(f):
                if r["kernel"] == kernel:
                    rows.append((program.split("/")[0], r))
    return rows


run_step.device_printed = False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--csv")
    args = ap.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for program, kernels in STEPS:
            rows += run_step(args.build, program, kernels, args.size, tmp)

    print(f"\nFP32 GEMM, M = N = K = {args.size}; % of cuBLAS (pure FP32, same B layout) "
          "timed in the same process")
    print(f"{'chapter':<14} {'kernel':<20} {'ms':>9} {'TFLOP/s':>8} {'% cuBLAS':>9}")
    for chapter, r in rows:
        print(f"{chapter:<14} {r['kernel']:<20} {float(r['ms_median']):9.3f} "
              f"{float(r['TFLOP/s']):8.2f} {float(r['pct_of_baseline']):8.1f}%")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["chapter", "kernel", "ms_median", "tflops", "pct_of_cublas"])
            for chapter, r in rows:
                w.writerow([chapter, r["kernel"], r["ms_median"], r["TFLOP/s"],
                            r["pct_of_baseline"]])


if __name__ == "__main__":
    main()
