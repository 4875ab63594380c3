#!/usr/bin/env python3
"""Plots of the progression, from the CSVs tools/progression.py writes (needs matplotlib).

usage: plot_progression.py DIR [--ceilings FILE]
  DIR/timings.csv, rows of the set `progression` -> DIR/progression_steps.png: TFLOP/s and % of
      cuBLAS for every GEMM step, the FP32 SIMT and BF16 tensor-core ladders in two colours
  the same rows -> DIR/progression_roofline.png: each GEMM step at its arithmetic intensity (FLOP
      per byte of the least DRAM traffic: A, B read once, C written once) against its TFLOP/s,
      log-log, under the measured ceilings of FILE (default DIR/ceilings.csv: fma_fp32,
      mma_sync_bf16, wgmma_bf16 as roofs, copy GB/s as the bandwidth slope); the copies, which
      do no arithmetic, in a panel of their own against the copy ceiling. Without a ceilings
      file the points are drawn alone, and the plot says so.
  rows of the set `sizes` -> DIR/progression_sizes.png: each chapter's answer against cuBLAS,
      a line over the square sizes, the skinny and the unaligned shapes as points of their own
      (written only where the CSV has such rows)
Exit status 77 when matplotlib is missing (the tests read it as a skip), 2 on bad usage.
"""
import csv
import math
import os
import sys

COLOURS = {"fp32": "tab:blue", "bf16": "tab:orange"}
NAMES = {"fp32": "FP32 SIMT ladder (vs cuBLAS SGEMM, pedantic FP32)",
         "bf16": "BF16 tensor-core ladder (vs cuBLAS BF16 -> FP32)"}
# The ceilings the roofline draws (ceilings.csv's names), each with its label and line style.
ROOFS = [("fma_fp32", "FP32 FMA", "-."),
         ("mma_sync_bf16", "mma.sync BF16", "--"),
         ("wgmma_bf16", "wgmma BF16", "-")]


def read_rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def read(path, which):
    """The rows of timings.csv (after its '#' header lines) in the set `which`, measured."""
    return [r for r in read_rows(path) if r["status"] == "ok" and which in r["sets"].split()]


def read_ceilings(path):
    """{ceiling: value} of a ceilings.csv (ceiling,unit,value,detail), the measured ones."""
    if not path or not os.path.exists(path):
        return {}
    return {r["ceiling"]: float(r["value"]) for r in read_rows(path)
            if (r.get("value") or "").strip()}


def intensity(r):
    """FLOP per byte of the least DRAM traffic of a GEMM row: A and B read once, C written once;
    FP32: 4-byte A, B, C; BF16: 2-byte A and Bᵀ, 4-byte (FP32) C."""
    m, n, k = (int(x) for x in r["shape"].split("x"))
    ab = 2 if r["precision"] == "bf16" else 4
    return 2 * m * n * k / (ab * (m * k + k * n) + 4 * m * n)


def square(shape):
    p = shape.split("x")
    return len(p) == 3 and p[0] == p[1] == p[2]


def shape_label(shape):
    return f"{shape.split('x')[0]}³" if square(shape) else shape.replace("x", "×")


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


def spread(ys, gap):
    """Label heights (log10) for points at heights ys, in order, at least `gap` apart."""
    out = []
    for y in ys:
        out.append(max(y, out[-1] + gap) if out else y)
    return out


def plot_roofline(rows, ceilings, path, plt, device=""):
    gemms = [r for r in rows if r["unit"] == "TFLOP/s"]
    copies = [r for r in rows if r["unit"] == "GB/s"]
    if not gemms:
        return False
    chapters = list(dict.fromkeys(r["chapter"] for r in rows))
    colour = {c: f"C{i % 10}" for i, c in enumerate(chapters)}
    fig, (ax, axc) = plt.subplots(1, 2, figsize=(13, 7.5), width_ratios=[4, 1])

    # The points, spread a little sideways by chapter (a column of one shape otherwise hides
    # its chapters behind each other); every point of a shape belongs at that shape's intensity.
    cols = sorted({round(intensity(r), 6) for r in gemms})
    gemm_chapters = list(dict.fromkeys(r["chapter"] for r in gemms))
    dodge = {}  # (column, chapter) -> factor on x, centred on the column
    for x0 in cols:
        here = list(dict.fromkeys(r["chapter"] for r in gemms if round(intensity(r), 6) == x0))
        for i, c in enumerate(here):
            dodge[(x0, c)] = 1.07 ** (i - (len(here) - 1) / 2)

    def xpos(r):
        return intensity(r) * dodge[(round(intensity(r), 6), r["chapter"])]
    for c in gemm_chapters:
        mine = [r for r in gemms if r["chapter"] == c]
        for p, marker in (("fp32", "o"), ("bf16", "s")):
            pts = [r for r in mine if r["precision"] == p]
            if pts:
                ax.scatter([xpos(r) for r in pts], [float(r["rate"]) for r in pts],
                           s=22, marker=marker, color=colour[c], edgecolor="black",
                           linewidth=0.4, zorder=3)
    # Each shape's cuBLAS baselines (timed next to the steps), at the shape's intensity.
    base = {}
    for r in gemms:
        base.setdefault((round(intensity(r), 6), r["baseline"]), []).append(
            float(r["baseline_rate"]))
    bx = [k[0] for k in base]
    by = [sorted(v)[len(v) // 2] for v in base.values()]  # the median of its timings
    ax.scatter(bx, by, marker="x", s=40, color="black", zorder=4)

    # Labels: each chapter's answer (role best) and its first step, per precision; FP32 labels
    # to the left of their column, BF16 to the right, spread so that none overlap.
    labelled = []
    for c in gemm_chapters:
        for p in ("fp32", "bf16"):
            mine = [r for r in gemms if r["chapter"] == c and r["precision"] == p]
            if mine:
                labelled += [r for r in mine if r is mine[0] or r["role"] == "best"]
    for p, side in (("fp32", -1), ("bf16", 1)):
        for x0 in cols:
            group = sorted((r for r in labelled if r["precision"] == p and
                            round(intensity(r), 6) == x0), key=lambda r: float(r["rate"]))
            if not group:
                continue
            ys = spread([math.log10(float(r["rate"])) for r in group], 0.075)
            for r, y in zip(group, ys):
                x = xpos(r)
                ax.annotate(f"{r['chapter'][:2]} {r['kernel']}", (x, float(r["rate"])),
                            xytext=(x0 * 1.9 ** side, 10 ** y), fontsize=7,
                            ha="left" if side > 0 else "right", va="center",
                            color=colour[r["chapter"]], zorder=5,
                            bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=0.3),
                            arrowprops=dict(arrowstyle="-", color="0.6", linewidth=0.5))

    # The roofs: each measured peak, reached where the bandwidth slope meets it.
    xs = [min(cols) / 30, max(cols) * 12]
    bw = ceilings.get("copy")
    roof_handles = []
    for name, label, style in ROOFS:
        if name in ceilings:
            peak = ceilings[name]
            lo = peak / (bw / 1000) if bw else xs[0]  # the ridge point, FLOP per byte
            h, = ax.plot([max(lo, xs[0]), xs[1]], [peak, peak], color="0.2", linestyle=style,
                         linewidth=1.1, label=f"{label} peak, measured: {peak:.0f} TFLOP/s")
            ax.text(xs[1] / 1.05, peak * 1.04, f"{label} {peak:.0f}", ha="right", va="bottom",
                    fontsize=7, color="0.2")
            roof_handles.append(h)
    if bw:
        top = max([ceilings[n] for n, *_ in ROOFS if n in ceilings] or
                  [max(float(r["rate"]) for r in gemms) * 2])
        h, = ax.plot([xs[0], top / (bw / 1000)], [bw / 1000 * xs[0], top], color="0.45",
                     linestyle=":", linewidth=1.4,
                     label=f"DRAM slope: copy {bw:.0f} GB/s × intensity")
        roof_handles.append(h)
    if not ceilings:
        ax.text(0.02, 0.02, "no ceilings recorded for this GPU (ceilings.csv):\nthe roofs "
                "are not drawn", transform=ax.transAxes, ha="left", va="bottom", fontsize=9,
                color="tab:red")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*xs)
    low = min([float(r["rate"]) for r in gemms] + [bw / 1000 * xs[0]] if bw else
              [float(r["rate"]) for r in gemms])
    ax.set_ylim(low / 12, None)
    ax.set_xlabel("arithmetic intensity: FLOP per byte of the least DRAM traffic "
                  "(A, B read once, C written once)")
    ax.set_ylabel("TFLOP/s achieved (log scale)")
    ax.grid(True, which="major", linewidth=0.3)
    for x0 in cols:  # each column's shape and precision, along its foot
        shapes = sorted({(r["shape"], r["precision"]) for r in gemms
                         if round(intensity(r), 6) == x0})
        ax.annotate(", ".join(f"{shape_label(s)} {p}" for s, p in shapes), (x0, 0),
                    xycoords=("data", "axes fraction"), xytext=(0, 4), rotation=90,
                    textcoords="offset points", ha="center", va="bottom", fontsize=7,
                    color="0.4")
    chapter_handles = [ax.scatter([], [], color=colour[c], marker="o", s=22, edgecolor="black",
                                  linewidth=0.4, label=c) for c in gemm_chapters]
    marks = [ax.scatter([], [], marker="o", color="white", edgecolor="black", label="FP32 step"),
             ax.scatter([], [], marker="s", color="white", edgecolor="black", label="BF16 step"),
             ax.scatter([], [], marker="x", color="black", label="cuBLAS at that shape")]
    ax.legend(handles=roof_handles + marks + chapter_handles, fontsize=7, loc="upper left",
              ncol=2)
    ax.set_title(("Every GEMM step against the measured ceilings" if ceilings else
                  "Every GEMM step by arithmetic intensity") +
                 " (a chapter's points are spread sideways a little)", fontsize=10)

    # The copies: pure bandwidth, no FLOPs, so against the copy ceiling in GB/s.
    if copies:
        y = range(len(copies))
        axc.scatter([float(r["rate"]) for r in copies], list(y), color=colour[copies[0]["chapter"]],
                    edgecolor="black", linewidth=0.4, zorder=3)
        axc.scatter([float(r["baseline_rate"]) for r in copies], list(y), marker="x",
                    color="black", zorder=3, label="baseline (memcpy, geam)")
        axc.set_yticks(list(y))
        axc.set_yticklabels([r["kernel"] for r in copies], fontsize=7)
        axc.set_ylim(len(copies) + 0.8, -0.7)  # top to bottom, a free row for the legend
        if bw:
            axc.axvline(bw, color="0.45", linestyle=":", linewidth=1.4,
                        label=f"copy, measured: {bw:.0f} GB/s")
        axc.legend(fontsize=7, loc="lower left")
        axc.set_xlim(0, max([bw or 0] + [float(r["rate"]) for r in copies]
                            + [float(r["baseline_rate"]) for r in copies]) * 1.1)
        axc.set_xlabel("GB/s (read + written)")
        axc.set_title(f"copies ({copies[0]['chapter'][:2]}): no FLOPs,\nso bandwidth alone",
                      fontsize=9)
    else:
        axc.axis("off")
    if device:
        fig.suptitle(device, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_sizes(rows, path, plt):
    """Each answer over the square sizes as a line; the other shapes (skinny, unaligned) are no
    series, so each is a point of its own to the right, not joined to the squares."""
    if not rows:
        return False
    precisions = [p for p in NAMES if any(r["precision"] == p for r in rows)]
    fig, axes = plt.subplots(1, len(precisions), figsize=(7.5 * len(precisions), 6.2),
                             squeeze=False)
    for ax, p in zip(axes[0], precisions):
        mine_rows = [r for r in rows if r["precision"] == p]
        squares = sorted({int(r["shape"].split("x")[0]) for r in mine_rows if square(r["shape"])})
        others = list(dict.fromkeys(r["shape"] for r in mine_rows if not square(r["shape"])))
        right = math.log2(max(squares)) if squares else 0
        where = {f"{n}x{n}x{n}": math.log2(n) for n in squares}
        where.update({s: right + 1 + i for i, s in enumerate(others)})
        keys = list(dict.fromkeys((r["chapter"], r["kernel"]) for r in mine_rows))
        baselines = {}
        for n, key in enumerate(keys):
            mine = {r["shape"]: r for r in mine_rows if (r["chapter"], r["kernel"]) == key}
            sq = sorted((s for s in mine if square(s)), key=lambda s: where[s])
            ax.plot([where[s] for s in sq], [float(mine[s]["rate"]) for s in sq], marker="o",
                    markersize=4, color=f"C{n}", label=f"{key[0][:2]} {key[1]}")
            for i, s in enumerate(s for s in others if s in mine):
                dx = (n - (len(keys) - 1) / 2) * 0.07  # side by side within a shape
                ax.plot([where[s] + dx], [float(mine[s]["rate"])], marker="o", linestyle="none",
                        color=f"C{n}")
            for s, r in mine.items():  # each kernel's own baseline, in the same run
                baselines.setdefault(r["baseline"], {}).setdefault(s, []).append(
                    float(r["baseline_rate"]))
        for m, (name, pts) in enumerate(sorted(baselines.items())):
            med = {s: sorted(v)[len(v) // 2] for s, v in pts.items()}
            sq = sorted((s for s in med if square(s)), key=lambda s: where[s])
            style = [":", "--"][m % 2]
            ax.plot([where[s] for s in sq], [med[s] for s in sq], color="black", linestyle=style,
                    marker="x", label=f"cuBLAS ({name})")
            ot = [s for s in med if not square(s)]
            ax.plot([where[s] for s in ot], [med[s] for s in ot], color="black",
                    linestyle="none", marker="x")
        if others and squares:
            ax.axvline(right + 0.5, color="0.5", linewidth=0.8)
            ax.text(right + 0.42, 0.5, "other shapes, not a series: no line",
                    transform=ax.get_xaxis_transform(), rotation=90, ha="center",
                    va="center", fontsize=7, color="0.4")
        ax.set_yscale("log")
        ax.set_ylabel("TFLOP/s (log scale)")
        ticks = sorted(where.items(), key=lambda kv: kv[1])
        ax.set_xticks([x for _, x in ticks])
        ax.set_xticklabels([shape_label(s) for s, _ in ticks], rotation=30, ha="right")
        ax.set_xlim(min(where.values()) - 0.4, max(where.values()) + 0.5)
        ax.set_xlabel("square sizes (M = N = K, log scale), then the other shapes")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3)
        ax.set_title(NAMES[p], fontsize=10)
    fig.suptitle("Each chapter's answer (role best) against cuBLAS over sizes")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main():
    args = sys.argv[1:]
    ceilings = None
    if "--ceilings" in args:
        i = args.index("--ceilings")
        if i + 1 >= len(args):
            print("--ceilings needs a file", file=sys.stderr)
            return 2
        ceilings = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = args[0]
    timings = os.path.join(out, "timings.csv")
    if not os.path.exists(timings):
        print(f"{timings}: no such file", file=sys.stderr)
        return 2
    if ceilings is not None and not os.path.exists(ceilings):
        print(f"--ceilings {ceilings}: no such file", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install matplotlib): no plots")
        return 77
    with open(timings) as f:
        device = next((l[len("# device:"):].strip() for l in f if l.startswith("# device:")), "")
    device = device.split(", CUDA")[0]
    made = []
    steps = read(timings, "progression")
    if plot_steps(steps, os.path.join(out, "progression_steps.png"), plt):
        made.append("progression_steps.png")
    c = read_ceilings(ceilings or os.path.join(out, "ceilings.csv"))
    if plot_roofline(steps, c, os.path.join(out, "progression_roofline.png"), plt, device):
        made.append("progression_roofline.png" + ("" if c else " (no ceilings: points only)"))
    if plot_sizes(read(timings, "sizes"), os.path.join(out, "progression_sizes.png"), plt):
        made.append("progression_sizes.png")
    print("plots: " + (", ".join(os.path.join(out, m) for m in made) or
                       "none (no GEMM steps and no sizes in the CSV)"))
    return 0 if made else 1


if __name__ == "__main__":
    sys.exit(main())
