#!/usr/bin/env python3
"""Plots of the progression, from the CSVs tools/progression.py writes (needs matplotlib).

usage: plot_progression.py DIR
  DIR/timings.csv, rows of the set `progression` -> DIR/progression_steps.png: TFLOP/s and % of
      cuBLAS for every GEMM step, the FP32 SIMT and BF16 tensor-core ladders in two colours
  rows of the set `sizes` -> DIR/progression_sizes.png: each chapter's answer against cuBLAS over
      sizes (written only where the CSV has such rows)
Exit status 77 when matplotlib is missing (the tests read it as a skip).
"""
import csv
import os
import sys

COLOURS = {"fp32": "tab:blue", "bf16": "tab:orange"}
NAMES = {"fp32": "FP32 SIMT ladder (vs cuBLAS SGEMM, pedantic FP32)",
         "bf16": "BF16 tensor-core ladder (vs cuBLAS BF16 -> FP32)"}


def read(path, which):
    """The rows of timings.csv (after its '#' header lines) in the set `which`, measured."""
    with open(path) as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return [r for r in rows if r["status"] == "ok" and which in r["sets"].split()]


def size_key(shape):
    m, n, k = (int(x) for x in shape.split("x"))
    return (m != n or n != k, m * n * k)  # the cubes by size, then the other shapes


def plot_steps(rows, path, plt):
    rows = [r for r in rows if r["unit"] == "TFLOP/s"]
    if not rows:
        return False
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(8, 0.45 * len(rows) + 3), 8), sharex=True)
    x = range(len(rows))
    colours = [COLOURS.get(r["precision"], "tab:gray") for r in rows]
    ax1.bar(x, [float(r["rate"]) for r in rows], color=colours)
    ax1.set_yscale("log")
    ax1.set_ylabel("TFLOP/s (log scale)")
    ax2.bar(x, [float(r["pct"]) for r in rows], color=colours)
    ax2.axhline(100, color="black", linewidth=0.8)
    ax2.set_ylabel("% of cuBLAS, same run")
    ax2.set_xticks(list(x))
    ax2.set_xticklabels([f"{r['chapter'][:2]} {r['kernel']}" +
                         ("" if r["shape"].startswith("4096x4096") else f"\n{r['shape']}")
                         for r in rows], rotation=60, ha="right", fontsize=8)
    for p, name in NAMES.items():
        if any(r["precision"] == p for r in rows):
            ax1.bar([0], [0], color=COLOURS[p], label=name)
    ax1.legend(loc="upper left", fontsize=8)
    ax1.set_title("Every step of the tutorial, each against its cuBLAS baseline")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_sizes(rows, path, plt):
    if not rows:
        return False
    precisions = [p for p in NAMES if any(r["precision"] == p for r in rows)]
    fig, axes = plt.subplots(1, len(precisions), figsize=(7 * len(precisions), 5.5), squeeze=False)
    for ax, p in zip(axes[0], precisions):
        mine_rows = [r for r in rows if r["precision"] == p]
        shapes = sorted(dict.fromkeys(r["shape"] for r in mine_rows), key=size_key)
        baselines = {}
        for n, key in enumerate(dict.fromkeys((r["chapter"], r["kernel"]) for r in mine_rows)):
            mine = {r["shape"]: r for r in mine_rows if (r["chapter"], r["kernel"]) == key}
            xs = [i for i, s in enumerate(shapes) if s in mine]
            ax.plot(xs, [float(mine[shapes[i]]["rate"]) for i in xs], marker="o",
                    color=f"C{n}", label=f"{key[0][:2]} {key[1]}")
            for i in xs:  # each kernel's own baseline, in the same run
                b = mine[shapes[i]]
                baselines.setdefault(b["baseline"], {}).setdefault(i, float(b["baseline_rate"]))
        for m, (name, pts) in enumerate(sorted(baselines.items())):
            xs = sorted(pts)
            ax.plot(xs, [pts[i] for i in xs], color="black", linestyle=[":", "--"][m % 2],
                    marker="x", label=f"cuBLAS ({name})")
        ax.set_yscale("log")
        ax.set_ylabel("TFLOP/s (log scale)")
        ax.set_xticks(range(len(shapes)))
        ax.set_xticklabels([s.replace("x", "×") for s in shapes], rotation=30, ha="right")
        ax.legend(fontsize=8)
        ax.set_title(NAMES[p])
    fig.suptitle("Each chapter's answer (role best) against cuBLAS over sizes")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install matplotlib): no plots")
        return 77
    made = []
    timings = os.path.join(out, "timings.csv")
    if plot_steps(read(timings, "progression"), os.path.join(out, "progression_steps.png"), plt):
        made.append("progression_steps.png")
    if plot_sizes(read(timings, "sizes"), os.path.join(out, "progression_sizes.png"), plt):
        made.append("progression_sizes.png")
    print("plots: " + ", ".join(os.path.join(out, m) for m in made))
    return 0 if made else 1


if __name__ == "__main__":
    sys.exit(main())
