#!/usr/bin/env python3
"""The tutorial's progression: every step of every chapter, each timed next to its baseline
(cuBLAS, cudaMemcpy, cuBLAS geam) in the same process, in one table, a CSV and two plots.

usage: progression.py --build BUILD_DIR [--out DIR] [--size S] [--sizes] [--readme FILE]
                      [--reps R] [--only CHAPTER,...]

The chapter programs are found in BUILD_DIR (every NN_name/program), and each one's kernels are
read from the program itself (`PROGRAM --list`: name, role, baseline, precision, shape). Steps
run at the shape their program lists first (its first default shape); --size S runs GEMMs at
S x S x S and copies at S x S instead (a quick check). --sizes adds a size sweep of each
chapter's answer (role `best`) against cuBLAS, from 512^3 to 8192^3 plus a skinny and an
unaligned shape. --readme rewrites the table between the README's progression markers.

`meson compile -C build progression` runs it with --out BUILD_DIR/progression.
"""
import argparse
import csv
import datetime
import glob
import os
import re
import subprocess
import sys
import tempfile

MARK_BEGIN = "<!-- progression:begin -->"
MARK_END = "<!-- progression:end -->"
SWEEP_SHAPES = ["512x512x512", "1024x1024x1024", "1536x1536x1536", "2048x2048x2048",
                "3072x3072x3072", "4096x4096x4096", "8192x8192x8192", "256x256x65536",
                "4097x4095x4093"]
LADDER = {"fp32": "FP32 SIMT", "bf16": "BF16 tensor core", "copy": "copy / transpose"}


def programs_in(build):
    """Chapter programs: executables in BUILD/NN_name/, in chapter order."""
    found = []
    for path in sorted(glob.glob(os.path.join(build, "[0-9][0-9]_*", "*"))):
        if os.path.isfile(path) and os.access(path, os.X_OK) and not path.endswith(".so"):
            found.append(path)
    return found


def registry(program):
    """`PROGRAM --list`: [{name, role, baseline, precision, shape}], or None."""
    p = subprocess.run([program, "--list"], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    rows = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) != 5:
            return None
        rows.append(dict(zip(["name", "role", "baseline", "precision", "shape"], f)))
    return rows


def chapter_of(program):
    return os.path.basename(os.path.dirname(program))


def run_one(program, kernel, shape, reps, tmp):
    """Verifies, then times `kernel` and its baseline at `shape`: (status, rows, device line)."""
    out = os.path.join(tmp, "rows.csv")
    if os.path.exists(out):
        os.remove(out)
    cmd = [program, "--bench", "--kernel", kernel, "--shapes", shape, "--csv", out]
    if reps:
        cmd += ["--reps", str(reps)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == 77:
        return "skip", (p.stderr.strip().splitlines() or ["skipped"])[-1], None
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        sys.exit(f"{' '.join(cmd)} failed with exit code {p.returncode}")
    device = next((l for l in p.stdout.splitlines() if l.startswith("GPU ")), "")
    with open(out) as f:
        rows = list(csv.DictReader(f))
    return "ok", rows, device


def measure(program, entry, shape, reps, tmp):
    status, rows, device = run_one(program, entry["name"], shape, reps, tmp)
    if status == "skip":
        return {"status": "skipped", "reason": rows}, None
    unit = "GB/s" if "GB/s" in rows[0] else "TFLOP/s"
    mine = next(r for r in rows if r["kernel"] == entry["name"])
    base = next((r for r in rows if r["kernel"] == mine["baseline"]), None)
    return {
        "status": "ok",
        "ms": float(mine["ms_median"]),
        "rate": float(mine[unit]),
        "unit": unit,
        "pct": float(mine["pct_of_baseline"]),
        "baseline": mine["baseline"],
        "baseline_ms": float(base["ms_median"]) if base else float("nan"),
        "baseline_rate": float(base[unit]) if base else float("nan"),
    }, device


def gemm_shape(size):
    return f"{size}x{size}x{size}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", help="where the CSVs and plots go (default BUILD/progression)")
    ap.add_argument("--size", type=int, help="run every GEMM at SxSxS and copies at SxS")
    ap.add_argument("--sizes", action="store_true", help="also sweep sizes for role `best`")
    ap.add_argument("--readme", help="rewrite the table between the progression markers")
    ap.add_argument("--reps", type=int, default=0, help="timed repetitions (default: program's)")
    ap.add_argument("--only", default="", help="chapters to run, e.g. 03_tiled,05_tensorcore")
    args = ap.parse_args()
    out = args.out or os.path.join(args.build, "progression")
    os.makedirs(out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))

    # The plan: every step of every chapter program, in order.
    plan = []
    for program in programs_in(args.build):
        if only and chapter_of(program) not in only:
            continue
        reg = registry(program)
        if reg is None:
            continue
        for e in reg:
            if e["role"] not in ("step", "best"):
                continue
            shape = e["shape"]
            if args.size:
                shape = gemm_shape(args.size) if shape.count("x") == 2 else f"{args.size}x{args.size}"
            plan.append((program, e, shape))
    if not plan:
        sys.exit(f"no chapter programs with steps in {args.build} (build first)")

    rows, device = [], ""
    with tempfile.TemporaryDirectory() as tmp:
        for i, (program, e, shape) in enumerate(plan, 1):
            print(f"[{i}/{len(plan)}] {chapter_of(program)} {e['name']} {shape}", flush=True)
            m, dev = measure(program, e, shape, args.reps, tmp)
            if m["status"] == "skipped" and "no usable CUDA device" in m["reason"]:
                print("no CUDA device: nothing to measure")
                return 77
            device = device or dev or ""
            precision = "copy" if e["precision"] == "fp32" and shape.count("x") == 1 else e["precision"]
            rows.append(dict(chapter=chapter_of(program), kernel=e["name"], role=e["role"],
                             precision=precision, shape=shape, **m))

        sweep = []
        if args.sizes:
            bests = [(p, e) for p, e, _ in plan if e["role"] == "best"]
            n = len(bests) * len(SWEEP_SHAPES)
            i = 0
            for program, e in bests:
                for shape in SWEEP_SHAPES:
                    i += 1
                    print(f"[sizes {i}/{n}] {chapter_of(program)} {e['name']} {shape}", flush=True)
                    m, _ = measure(program, e, shape, args.reps, tmp)
                    if m["status"] == "ok":
                        sweep.append(dict(chapter=chapter_of(program), kernel=e["name"],
                                          precision=e["precision"], shape=shape, **m))

    # Speed-up over the previous step of the same ladder at the same shape.
    last = {}
    for r in rows:
        key = (r["precision"], r["shape"])
        r["speedup"] = (last[key] / r["ms"]) if r["status"] == "ok" and key in last else float("nan")
        if r["status"] == "ok":
            last[key] = r["ms"]

    fields = ["chapter", "kernel", "role", "precision", "shape", "status", "ms", "rate", "unit",
              "pct", "baseline", "baseline_ms", "baseline_rate", "speedup", "reason"]
    with open(os.path.join(out, "progression.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    if sweep:
        with open(os.path.join(out, "sizes.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            w.writerows(sweep)
    with open(os.path.join(out, "device.txt"), "w") as f:
        f.write(device + "\n")

    table = markdown_table(rows)
    print()
    print(device)
    print(table)
    print(f"\nCSV: {os.path.join(out, 'progression.csv')}" +
          (f", {os.path.join(out, 'sizes.csv')}" if sweep else ""))
    try:
        import matplotlib  # noqa: F401
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run([sys.executable, os.path.join(here, "plot_progression.py"), out], check=True)
    except ImportError:
        print("plots: matplotlib is not installed (pip install matplotlib), then run "
              f"tools/plot_progression.py {out}")
    if args.readme:
        update_readme(args.readme, device, table, args)
    return 0


def fmt(x, spec):
    return "" if x != x else format(x, spec)  # NaN -> empty


def markdown_table(rows):
    lines = ["| chapter | kernel | precision | shape | ms | rate | % of baseline | × previous step |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['chapter']} | `{r['kernel']}` | {r['precision']} | {r['shape']} | "
                         f"skipped: {r['reason']} | | | |")
            continue
        speed = fmt(r["speedup"], ".2f")
        lines.append(f"| {r['chapter']} | `{r['kernel']}` | {r['precision']} | "
                     f"{r['shape'].replace('x', '×')} | {r['ms']:.3f} | {r['rate']:.2f} {r['unit']} | "
                     f"{r['pct']:.1f}% of `{r['baseline']}` | {speed + '×' if speed else ''} |")
    return "\n".join(lines)


def update_readme(path, device, table, args):
    text = open(path).read()
    if MARK_BEGIN not in text or MARK_END not in text:
        sys.exit(f"{path}: no {MARK_BEGIN} ... {MARK_END} markers")
    cmd = "tools/progression.py --build BUILD" + (" --sizes" if args.sizes else "") + \
          (f" --size {args.size}" if args.size else "")
    body = (f"{MARK_BEGIN}\n{device}; {datetime.date.today().isoformat()}; `{cmd}`\n\n"
            f"{table}\n{MARK_END}")
    text = re.sub(re.escape(MARK_BEGIN) + ".*?" + re.escape(MARK_END), lambda _: body, text,
                  flags=re.S)
    open(path, "w").write(text)
    print(f"updated {path}")


if __name__ == "__main__":
    sys.exit(main())
