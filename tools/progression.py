#!/usr/bin/env python3
"""The tutorial's measurements: every step of every chapter, each timed next to its baseline
(cuBLAS, cudaMemcpy, cuBLAS geam) in its own process, into one CSV, with a table and two plots.

usage: progression.py --build BUILD_DIR [--out DIR | --record] [--sizes] [--tables] [--size S]
                      [--reps R] [--only CHAPTER,...]

The chapter programs are found in BUILD_DIR (every NN_name/program), and each one's kernels are
read from the program itself (`PROGRAM --list`: name, role, baseline, precision, shape). Steps
run at the shape their program lists first; --size S runs GEMMs at S x S x S and copies at
S x S instead (a quick check). --sizes adds each chapter's answer (role `best`) from 512^3 to
8192^3 plus a skinny and an unaligned shape; --tables adds every (kernel, shape) that a README
table asks for (tools/tables.py). Each (chapter, kernel, shape) is measured once, so a kernel
has one number at a shape wherever the READMEs show it.

Output: DIR/timings.csv (its first lines name the GPU, the date and the command; the column
`sets` says why a row was measured: progression, sizes, table) and, where matplotlib is
installed, the plots (tools/plot_progression.py). DIR is --out, by default BUILD_DIR/progression
(`meson compile -C build progression` runs this so); --record makes it the GPU's record folder,
docs/results/<slug>/ (slug from the measured device line: h100, h200, ...; tools/tables.py), and
with --only replaces those chapters' rows of the record and keeps the others. The terminal
table gives each step's % of the measured peak where DIR or the GPU's record folder holds a
ceilings.csv. The READMEs' tables are written from the primary record (docs/results/PRIMARY)
by tools/tables.py --write.
"""
import argparse
import csv
import datetime
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tables  # noqa: E402  (the record folders, the CSV writer, the ceilings)

SWEEP_SHAPES = ["512x512x512", "1024x1024x1024", "1536x1536x1536", "2048x2048x2048",
                "3072x3072x3072", "4096x4096x4096", "8192x8192x8192", "256x256x65536",
                "4097x4095x4093"]


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


def run_one(program, kernel, shape, reps, tmp, env=None):
    """Verifies, then times `kernel` and its baseline at `shape`: (status, rows, device line).
    env: the program's environment, if not this one's (tools/flush_compare.py)."""
    out = os.path.join(tmp, "rows.csv")
    if os.path.exists(out):
        os.remove(out)
    cmd = [program, "--bench", "--kernel", kernel, "--shapes", shape, "--csv", out]
    if reps:
        cmd += ["--reps", str(reps)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode == 77:
        return "skip", (p.stderr.strip().splitlines() or ["skipped"])[-1], None
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        sys.exit(f"{' '.join(cmd)} failed with exit code {p.returncode}")
    device = next((l for l in p.stdout.splitlines() if l.startswith("GPU ")), "")
    with open(out) as f:
        rows = list(csv.DictReader(f))
    return "ok", rows, device


def measure(program, entry, shape, reps, tmp, env=None):
    status, rows, device = run_one(program, entry["name"], shape, reps, tmp, env)
    if status == "skip":
        return {"status": "skipped", "reason": rows}, None
    unit = "GB/s" if "GB/s" in rows[0] else "TFLOP/s"
    mine = next(r for r in rows if r["kernel"] == entry["name"])
    if mine["check"] == "skip":  # beyond this GPU (the program said why on stderr)
        return {"status": "skipped", "reason": "not supported on this GPU"}, device
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
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--out", help="where the CSV and plots go (default BUILD/progression)")
    where.add_argument("--record", action="store_true",
                       help="write into the GPU's record folder, docs/results/<slug>/")
    ap.add_argument("--size", type=int, help="run every GEMM at SxSxS and copies at SxS")
    ap.add_argument("--sizes", action="store_true", help="also sweep sizes for role `best`")
    ap.add_argument("--tables", action="store_true",
                    help="also measure every (kernel, shape) a README table asks for")
    ap.add_argument("--reps", type=int, default=0, help="timed repetitions (default: program's)")
    ap.add_argument("--only", default="", help="chapters to run, e.g. 03_tiled,05_tensorcore")
    ap.add_argument("--dry-run", action="store_true", help="print the plan, measure nothing")
    ap.add_argument("--resume", action="store_true",
                    help="keep the rows an interrupted run left in OUT/timings.csv")
    args = ap.parse_args()
    if args.record and args.size:
        ap.error("--record keeps the full run; a --size check goes to --out")
    out = args.out or os.path.join(args.build, "progression")
    if not args.record:
        os.makedirs(out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))

    # The registries: every chapter program's kernels (PROGRAM --list).
    entries = {}  # (chapter, kernel) -> (program, entry)
    order = []
    for program in programs_in(args.build):
        if only and chapter_of(program) not in only:
            continue
        for e in registry(program) or []:
            entries[(chapter_of(program), e["name"])] = (program, e)
            order.append((chapter_of(program), e["name"]))

    # The plan, each (chapter, kernel, shape) once, with the sets it belongs to: every step of
    # every chapter at its program's first shape (the progression), each chapter's answer over
    # sizes, and what the README tables ask for.
    plan = {}

    def want(chapter, kernel, shape, what):
        plan.setdefault((chapter, kernel, shape), set()).add(what)
    for chapter, name in order:
        program, e = entries[(chapter, name)]
        if e["role"] in ("step", "best"):
            shape = e["shape"]
            if args.size:
                shape = gemm_shape(args.size) if shape.count("x") == 2 else f"{args.size}x{args.size}"
            want(chapter, name, shape, "progression")
    if args.sizes:
        for chapter, name in order:
            if entries[(chapter, name)][1]["role"] == "best":
                for shape in SWEEP_SHAPES:
                    if entries[(chapter, name)][1]["shape"].count("x") == 2:
                        want(chapter, name, shape, "sizes")
    if args.tables:
        for chapter, name, shape in sorted(tables.requests()["timings"]):
            if (chapter, name) in entries:
                want(chapter, name, shape, "table")
            elif not only or chapter in only:
                sys.exit(f"a README table asks for {chapter} {name}, which no program lists")
    if not plan:
        sys.exit(f"no chapter programs with steps in {args.build} (build first)")

    if args.dry_run:
        for (chapter, name, shape), sets in plan.items():
            print(chapter, name, shape, " ".join(sorted(sets)))
        return 0
    fields = ["chapter", "program", "kernel", "role", "precision", "shape", "sets", "status", "ms",
              "rate", "unit", "pct", "baseline", "baseline_ms", "baseline_rate", "reason"]
    rows, device = [], ""
    # --resume: the rows an interrupted run of the same command already wrote to OUT/timings.csv
    # (written after every row, below) are kept, not measured again.
    partial = None if args.record else os.path.join(out, "timings.csv")
    done = set()
    if args.resume and partial and os.path.exists(partial):
        old, old_meta = tables.read_csv(partial)
        rows = [r for r in old if (r["chapter"], r["kernel"], r["shape"]) in plan]
        done = {(r["chapter"], r["kernel"], r["shape"]) for r in rows}
        device = old_meta.get("device", "")
        print(f"resuming: {len(done)} of {len(plan)} rows already in {partial}")
    with tempfile.TemporaryDirectory() as tmp:
        for i, ((chapter, name, shape), sets) in enumerate(plan.items(), 1):
            if (chapter, name, shape) in done:
                continue
            program, e = entries[(chapter, name)]
            print(f"[{i}/{len(plan)}] {chapter} {name} {shape}", flush=True)
            m, dev = measure(program, e, shape, args.reps, tmp)
            if m["status"] == "skipped" and "no usable CUDA device" in m["reason"]:
                print("no CUDA device: nothing to measure")
                return 77
            device = device or dev or ""
            precision = "copy" if e["precision"] == "fp32" and shape.count("x") == 1 else e["precision"]
            rows.append(dict(chapter=chapter, program=os.path.basename(program), kernel=name,
                             role=e["role"], precision=precision, shape=shape,
                             sets=" ".join(sorted(sets)), **m))
            if partial:  # so an interrupted run keeps what it measured (--resume)
                tables.write_csv(partial, rows, fields, {"device": device, "partial": f"{len(rows)}"
                                                         f" of {len(plan)} rows"})

    cmd = "tools/progression.py --build BUILD" + (" --sizes" if args.sizes else "") + \
          (" --tables" if args.tables else "") + (f" --size {args.size}" if args.size else "") + \
          (f" --only {args.only}" if args.only else "")
    meta = {"device": device, "date": datetime.date.today().isoformat(), "command": cmd}
    if args.record and not device:  # keep what was measured; no name for a record folder
        print(f"no device line in the programs' output: written to {out}, not to a record")
        args.record = False
        os.makedirs(out, exist_ok=True)
    if args.record:
        path = tables.save_record(device, "timings.csv", rows, fields, meta, only)
        out = os.path.dirname(path)
    else:
        path = os.path.join(out, "timings.csv")
        tables.write_csv(path, rows, fields, meta)
    # The measured ceilings of this GPU: beside the CSV, else in its record folder.
    ceilings = os.path.join(out, "ceilings.csv")
    if not os.path.exists(ceilings) and device:
        ceilings = os.path.join(tables.record_dir(tables.gpu_slug(device)), "ceilings.csv")
    peaks = tables.Data(os.path.dirname(ceilings)) if os.path.exists(ceilings) else None
    if peaks and tables.gpu_name(peaks.pmeta) != tables.gpu_name({"device": device}):
        print(f"{ceilings} is of another GPU ({tables.gpu_name(peaks.pmeta)}): no % of peak")
        peaks = None

    print()
    print(device)
    print(markdown_table([r for r in rows if "progression" in r["sets"]], peaks))
    print(f"% of peak: of {ceilings}" if peaks else "% of peak: no ceilings recorded for this GPU")
    print(f"\nCSV: {path}")
    try:
        import matplotlib  # noqa: F401
        here = os.path.dirname(os.path.abspath(__file__))
        p = subprocess.run([sys.executable, os.path.join(here, "plot_progression.py"), out] +
                           (["--ceilings", ceilings] if peaks else []))
        if p.returncode != 0:
            print("plots: none drawn (tools/plot_progression.py exited "
                  f"{p.returncode}); the CSV is written")
    except ImportError:
        print("plots: matplotlib is not installed (pip install matplotlib), then run "
              f"tools/plot_progression.py {out}")
    return 0


def fmt(x, spec):
    return "" if x != x else format(x, spec)  # NaN -> empty


def markdown_table(rows, peaks=None):
    """The progression as the terminal shows it (the README's table: tools/tables.py); % of
    peak from peaks (a tables.Data of the GPU's ceilings.csv), empty without."""
    lines = ["| chapter | kernel | precision | shape | ms | rate | % of baseline | % of peak | "
             "× previous step |", "|---|---|---|---|---|---|---|---|---|"]
    last = {}
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['chapter']} | `{r['kernel']}` | {r['precision']} | {r['shape']} | "
                         f"skipped: {r['reason']} | | | | |")
            continue
        peak = ""
        if peaks:
            try:
                peak = peaks.peak_cell(r)
            except KeyError as e:  # a unit that does not match: say so, keep the table
                peak = f"({e})"
        key = (r["precision"], r["shape"])
        speed = fmt(last[key] / r["ms"], ".2f") if key in last else ""
        last[key] = r["ms"]
        lines.append(f"| {r['chapter']} | `{r['kernel']}` | {r['precision']} | "
                     f"{r['shape'].replace('x', '×')} | {r['ms']:.3f} | {r['rate']:.2f} {r['unit']} | "
                     f"{r['pct']:.1f}% of `{r['baseline']}` | {peak} | "
                     f"{speed + '×' if speed else ''} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
