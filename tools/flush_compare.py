#!/usr/bin/env python3
"""The L2 flush before every timed run, two ways, at the shapes where it matters: short runs.

usage: tools/flush_compare.py --build BUILD [--out FILE] [--runs R]

The timer (common/timer.cu) flushes the L2 by reading a buffer twice its size, which leaves it
full of clean lines. The earlier flush wrote that buffer (a cudaMemsetAsync) and left it full of
dirty lines, whose write-back the next timed run paid for: a few microseconds, on the kernel's
and on its baseline's side alike, which squeezed short runs' ratios toward 100 %. This runs each
(kernel, shape) below with both flushes (GEMM_FLUSH=memset for the old one), R times each,
alternating, each run its own process as the recorded run does, and writes one CSV row per run:
the kernel's and its baseline's median milliseconds and the ratio. docs/measuring.md, "The
flush", quotes it (tools/tables.py kind `flush`).
"""
import argparse
import csv
import datetime
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progression  # noqa: E402  (how a row is run and read)

# (chapter folder, program, kernel, shape): the short shapes of the BF16 chapters' answers, a
# long one as the control.
CASES = [
    ("09_every_shape", "every_shape", "hopper", "512x512x512"),
    ("09_every_shape", "every_shape", "hopper", "1024x1024x1024"),
    ("09_every_shape", "every_shape", "hopper", "128x128x131072"),
    ("09_every_shape", "every_shape", "hopper", "256x256x65536"),
    ("09_every_shape", "every_shape", "hopper", "512x512x16384"),
    ("09_every_shape", "every_shape", "hopper", "32x4096x4096"),
    ("09_every_shape", "every_shape", "hopper", "4096x4096x4096"),
    ("07_pipelined", "pipelined", "pipelined", "1024x1024x1024"),
    ("06_splitk", "splitk_bf16", "splitk_mma", "256x256x65536"),
]


def run(program, kernel, shape, flush, tmp):
    """One process: the kernel and its baseline, timed as the recorded run times them
    (progression.measure), with the flush named."""
    env = dict(os.environ)
    env.pop("GEMM_FLUSH", None)
    if flush == "memset":
        env["GEMM_FLUSH"] = "memset"
    return progression.measure(program, {"name": kernel}, shape, 0, tmp, env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", default="flush.csv")
    ap.add_argument("--runs", type=int, default=2, help="processes per flush and case")
    args = ap.parse_args()
    rows, device = [], ""
    with tempfile.TemporaryDirectory() as tmp:
        for chapter, prog, kernel, shape in CASES:
            program = os.path.join(args.build, chapter, prog)
            for r in range(args.runs):
                for flush in ("memset", "read") if r % 2 == 0 else ("read", "memset"):
                    m, dev = run(program, kernel, shape, flush, tmp)
                    if m["status"] != "ok":
                        print(f"{chapter} {kernel} {shape}: skipped ({m['reason']})")
                        return 77
                    device = device or dev or ""
                    rows.append(dict(chapter=chapter, kernel=kernel, shape=shape, flush=flush,
                                     run=r + 1, ms=m["ms"], baseline=m["baseline"],
                                     baseline_ms=m["baseline_ms"], pct=m["pct"]))
                    print(f"{kernel:>10} {shape:>16} {flush:>6}: {m['ms'] * 1e3:9.2f} us, "
                          f"{m['baseline']} {m['baseline_ms'] * 1e3:9.2f} us, {m['pct']:6.2f} %",
                          flush=True)
    with open(args.out, "w", newline="") as f:
        f.write(f"# device: {device}\n# date: {datetime.date.today().isoformat()}\n"
                f"# command: tools/flush_compare.py --build BUILD --runs {args.runs}\n")
        w = csv.DictWriter(f, fieldnames=["chapter", "kernel", "shape", "flush", "run", "ms",
                                          "baseline", "baseline_ms", "pct"],
                           lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"CSV: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
