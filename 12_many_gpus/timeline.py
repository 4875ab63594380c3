#!/usr/bin/env python3
"""Chapter 12's timeline picture, drawn from a measured timeline (many_gpus --timeline 1, which
12_many_gpus/bench.sh passes: rank 0's spans of one more run of each row, each GEMM, collective,
copy, rounding and sum between two CUDA events on its stream, in microseconds from the launch's
start on stream 0). Needs matplotlib.

usage: timeline.py CSV OUT.png LAYER GPUS MxNxK STEP[,STEP...]
  one panel per step, one lane per stream (stream 0: the GEMM; comm: NCCL's kernels, which run
  on SMs; copy stream j: the copy engines pulling, no SM, from step j's peer, or from every
  peer in step 5; records before the program named them "copy from s", after the peer of
  stream j; sums: the adds), the same time axis for every panel; each panel's title gives the
  launch's total.
  e.g. timeline.py docs/results/h100-x4/timeline_tp4.csv out.png ag 4 8192x8192x28672 \\
           unfused,copy_engine,tile_wait
Exit 77 without matplotlib, 2 on bad usage, 1 when the CSV has no such rows.
"""
import csv
import sys

COLOURS = {"GEMM": "tab:blue", "NCCL": "tab:red", "pull": "tab:green", "add": "tab:purple",
           "round": "tab:orange", "launch": "lightgrey"}


def colour(what):
    for key, c in COLOURS.items():
        if what.startswith(key) or key in what:
            return c
    return "tab:gray"


def main(argv):
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    path, out, layer, gpus, shape, steps = argv
    try:
        M, N, K = shape.split("x")
    except ValueError:
        print(f"timeline.py: shape '{shape}' is not MxNxK", file=sys.stderr)
        return 2
    steps = steps.split(",")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("timeline.py: matplotlib is missing; skipping", file=sys.stderr)
        return 77
    with open(path) as f:
        lines = list(csv.reader(line for line in f if not line.startswith("#")))
    head, rows = lines[0], []
    for cells in lines[1:]:  # `what` may hold a comma (a record before labels lost theirs)
        n = len(head)
        cells = cells[:n - 3] + [",".join(cells[n - 3:len(cells) - 2])] + cells[-2:]
        rows.append(dict(zip(head, cells)))
    spans = {st: [r for r in rows if r["layer"] == layer and r["gpus"] == gpus and
                  r["M"] == M and r["N"] == N and r["K"] == K and r["step"] == st]
             for st in steps}
    missing = [st for st, s in spans.items() if not s]
    if missing:
        print(f"timeline.py: {path} has no {layer} {','.join(missing)} at {shape} on {gpus} "
              "GPUs", file=sys.stderr)
        return 1
    end = max(float(r["end_us"]) for s in spans.values() for r in s)
    fig, axes = plt.subplots(len(steps), 1, figsize=(11, 1.2 + 1.0 * sum(
        len({r["stream"] for r in s if r["stream"] != "all"}) for s in spans.values()) / 2.2),
        sharex=True, squeeze=False)
    for ax, st in zip(axes[:, 0], steps):
        s = [r for r in spans[st] if r["stream"] != "all"]
        total = next(float(r["end_us"]) for r in spans[st] if r["stream"] == "all")
        lanes = list(dict.fromkeys(r["stream"] for r in sorted(
            s, key=lambda r: (r["stream"] != "stream 0", r["stream"]))))
        for r in s:
            y = lanes.index(r["stream"])
            b, e = float(r["begin_us"]), float(r["end_us"])
            ax.barh(y, e - b, left=b, height=0.7, color=colour(r["what"]), edgecolor="black",
                    linewidth=0.4)
        ax.axvline(total, color="black", linestyle=":", linewidth=1)
        ax.set_yticks(range(len(lanes)))
        ax.set_yticklabels(lanes, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(f"{st.replace('_', ' ')}: {total / 1000:.3f} ms", fontsize=9, loc="left")
        ax.set_xlim(0, end * 1.02)
    axes[-1, 0].set_xlabel("µs from the launch's start (rank 0; CUDA events around each span)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for k, c in COLOURS.items() if k != "launch"]
    labels = ["GEMM (SMs)", "NCCL kernel (SMs)", "copy-engine pull (no SM)", "add (SMs)",
              "round to BF16 (SMs)"]
    fig.legend(handles, labels, loc="upper right", fontsize=7, ncol=5)
    fig.suptitle(f"{layer} layer {shape}, TP = {gpus}", fontsize=10, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
