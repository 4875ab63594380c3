#!/usr/bin/env python3
"""The README tables, written from the recorded runs, and the checks that keep them so.

usage: tools/tables.py [--write | --check] [--results DIR] [DOCUMENT ...]
       tools/tables.py --requests [--results DIR]     what the tables ask to be measured
       tools/tables.py --slug DEVICE_LINE             the record folder's name for a GPU
       tools/tables.py --selftest                     the check fails on an edited table; the
                                                      GPU names, % of peak and GPU table hold

Each GPU's recorded run is a folder docs/results/<slug>/ (gpu_slug: NVIDIA H100 80GB HBM3 ->
h100, NVIDIA H200 -> h200, NVIDIA GeForce RTX 4090 -> rtx4090), written by the tools with
--record:
  timings.csv   tools/progression.py: each (chapter, kernel, shape) timed once, in its own
                process, next to its baseline (cuBLAS, cudaMemcpy, cublasSgeam)
  counters.csv  tools/profile.py --tables: Nsight Compute counters, one launch per row
  ceilings.csv  the GPU's measured ceilings (ceiling,unit,value,detail: fma_fp32, mma_sync_bf16,
                wgmma_bf16 in TFLOP/s, copy in GB/s; a value may be empty), where recorded
  *.png         tools/plot_progression.py: steps, sizes, roofline
Each CSV starts with comment lines naming the GPU, the CUDA version, the date and the command.
The tables come from one primary record, named in docs/results/PRIMARY (one line: its slug) and
in every caption; --results DIR takes another record folder instead.

A table is a marker line saying what it shows, then the generated lines, then an end marker:

  <!-- table timings chapter=04_coalesced kernels=tiled_bt_trap,tiled_bt_padded shapes=4096x4096x4096 -->
  ...
  <!-- end table -->

Kinds and their keys (lists are comma-separated, in the order of the rows or columns). Any kind
takes gpu=SLUG: the table from that GPU's record folder instead of the primary's.
  progression                         every step of every chapter at its program's first shape,
                                      with its % of baseline and its % of the measured peak
  timings  chapter kernels shapes [columns]
           columns from: kernel shape ms rate pct peak baseline_ms vs_prev (default: kernel ms
           rate pct vs_prev); rows are the kernels at each shape in turn; peak: % of the
           measured ceiling (FP32 rows: fma_fp32; BF16: wgmma_bf16, else mma_sync_bf16; copies:
           copy)
  pivot    chapter kernels shapes [value] [rows]
           one cell per kernel and shape; value: pct (default), ms or rate; rows: kernels
           (default) or shapes
  counters chapter kernels shape columns [gpu]
           columns: names of counters.csv's columns (regs, occ_achieved%, lds_wavefronts, ...)
  waves    chapter kernels shapes bm bn
           per shape: the bm x bn output tiles, the waves they make on the GPU's SMs (from the
           CSV's device line), how many SMs the last wave keeps busy, then each kernel's % of
           its baseline
  dram     chapter kernels shapes
           per kernel (and the first one's baseline) and shape: ms, the DRAM bytes a GEMM must move at least (BF16 A and Bᵀ
           read once, FP32 C written once) per second, that as a % of the DRAM peak (bus width
           x memory clock x 2, from the CSV's device line), and the % of its baseline
  gpus     gpus                       every progression step on each GPU named (gpus=h100,h200:
                                      record folders beside the primary): ms and % of baseline
                                      per GPU, the change in points, and why (the sentences of
                                      docs/results/why_moved.csv: chapter,kernel,why); a GPU
                                      without a record is named as missing
  runs     gpu file kernels shapes   a program's own --csv rows (the kernels timed in one
                                      process, each interleaved with its baseline), from FILE
                                      in the record of gpu=SLUG: one row a shape; a baseline's
                                      cell is its TFLOP/s, a kernel's its % of its baseline
                                      (KERNEL:ms: its median ms)
  plots                               the primary record's plots, as image links
--write regenerates every table; --check (a host test) fails where a table differs from what
its CSV gives, where a document has a date (tables included: the CSVs carry it), where a README
is over its word budget
(a chapter 2,500 words, chapter 04 3,000, the top README 3,500), or where a chapter README's
sections are not Goal, What changes, Why, The code, Results, What limits it now, Exercises,
Reproduce. The documents are the READMEs and docs/measuring.md (tables and dates only).
"""
import argparse
import csv
import difflib
import glob
import os
import re
import shutil
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "docs", "results")
BEGIN = re.compile(r"^<!-- table (\w+)((?: [\w%]+=[^ ]*)*) -->$")
END = "<!-- end table -->"
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
BUDGET_TOP, BUDGET_CHAPTER = 3500, 2500
BUDGET = {"04_coalesced": 3000}
SECTIONS = ["Goal", "What changes", "Why", "The code", "Results", "What limits it now",
            "Exercises", "Reproduce"]

# Display names of counters.csv's columns (tools/profile.py).
COUNTER_LABELS = {
    "time_ms": "ms (one launch)", "dram%": "DRAM %", "sm%": "SM %", "fma%": "FMA pipe %",
    "tensor%": "tensor pipe %", "regs": "registers", "occ_theory%": "occupancy (theory) %",
    "occ_achieved%": "occupancy (achieved) %", "instructions": "warp instructions",
    "lds_wavefronts": "shared-load wavefronts", "lds_conflicts": "shared-load conflicts",
    "sts_wavefronts": "shared-store wavefronts", "sts_conflicts": "shared-store conflicts",
    "gld_requests": "global-load requests", "gld_sectors": "global-load sectors",
    "l2_read_sectors": "L2 read sectors", "l2_write_sectors": "L2 write sectors",
    "dram_read_bytes": "DRAM read bytes", "sm_ghz": "SM clock (GHz)",
    "top_stalls": "top stalls (cycles per instruction)",
}


def read_csv(path):
    """(rows, meta): meta from the leading '# key: value' lines."""
    meta, lines = {}, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                k, _, v = line[1:].strip().partition(":")
                meta[k.strip()] = v.strip()
            else:
                lines.append(line)
    return list(csv.DictReader(lines)), meta


def write_csv(path, rows, fields, meta):
    with open(path, "w", newline="") as f:
        for k, v in meta.items():
            f.write(f"# {k}: {v}\n")
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def shape_name(s):
    p = s.split("x")
    if len(p) == 3 and p[0] == p[1] == p[2]:
        return f"{p[0]}³"
    return "×".join(p)


def gpu_name(meta):
    m = re.match(r"GPU \d+: ([^,]+),", meta.get("device", ""))
    return m.group(1) if m else meta.get("device", "?")


def cuda_version(meta):
    m = re.search(r"runtime ([\d.]+)", meta.get("device", ""))
    return m.group(1) if m else "?"


# A GPU's record folder, docs/results/<slug>/. Vendor and product-line words go; the model
# stays, with the words that tell its cards apart (RTX 3090 Ti, RTX 6000 Ada); memory size and
# form factor go (H100 80GB HBM3, H100 PCIe and H100 NVL are all h100).
VENDOR_WORDS = {"nvidia", "geforce", "tesla", "quadro"}
SERIES_WORDS = {"rtx", "gtx", "titan"}
VARIANT_WORDS = {"ti", "super", "ada"}
SLUG = re.compile(r"^[a-z0-9]+$")
SLUG_CASES = [  # (device line or name, slug): the selftest's cases
    ("GPU 0: NVIDIA H100 80GB HBM3, sm_90, 132 SMs, SM clock 1980 MHz", "h100"),
    ("GPU 0: NVIDIA H200, sm_90, 132 SMs", "h200"),
    ("NVIDIA H100 PCIe", "h100"), ("NVIDIA H100 NVL", "h100"), ("NVIDIA GH200 480GB", "gh200"),
    ("GPU 1: NVIDIA A100-SXM4-40GB, sm_80, 108 SMs", "a100"), ("NVIDIA A100 80GB PCIe", "a100"),
    ("NVIDIA L4", "l4"), ("NVIDIA GeForce RTX 4090", "rtx4090"),
    ("NVIDIA GeForce RTX 3090 Ti", "rtx3090ti"), ("NVIDIA GeForce RTX 4070 SUPER", "rtx4070super"),
    ("NVIDIA RTX A6000", "rtxa6000"), ("NVIDIA RTX 6000 Ada Generation", "rtx6000ada"),
    ("Tesla V100-SXM2-16GB", "v100"), ("NVIDIA TITAN RTX", "titanrtx"), ("NVIDIA B200", "b200"),
]


def gpu_slug(device):
    """The short name of a GPU's record folder, from a device line ('GPU 0: NVIDIA H100 80GB
    HBM3, sm_90, ...', as the programs print it and the CSVs keep it) or a bare name.
    ValueError where it names no GPU."""
    m = re.match(r"\s*GPU \d+:\s*([^,]*)", device)
    name = m.group(1) if m else device.split(",")[0]
    words = [w for w in re.split(r"[\s_-]+", name) if w and w.lower() not in VENDOR_WORDS]
    if not words:
        raise ValueError(f"no GPU name in the device line '{device}'")
    n = 2 if words[0].lower() in SERIES_WORDS and len(words) > 1 else 1
    model = words[:n]
    for w in words[n:]:
        if w.lower() not in VARIANT_WORDS:
            break
        model.append(w)
    slug = re.sub(r"[^a-z0-9]", "", "".join(model).lower())
    if not slug:
        raise ValueError(f"no GPU name in the device line '{device}'")
    return slug


def record_dir(slug, results=RESULTS):
    return os.path.join(results, slug)


def primary_dir(results=RESULTS):
    """The record the tables come from: docs/results/<the slug in docs/results/PRIMARY>."""
    path = os.path.join(results, "PRIMARY")
    try:
        slug = open(path).read().strip()
    except OSError:
        raise SystemExit(f"{path} is missing (one line: the primary record's slug, e.g. h100)")
    if not SLUG.match(slug) or not os.path.isdir(record_dir(slug, results)):
        raise SystemExit(f"{path} names '{slug}', which is no record folder in {results}")
    return record_dir(slug, results)


def save_record(device, name, rows, fields, meta, chapters=()):
    """Writes docs/results/<slug of device>/NAME. With chapters (a run with --only), the rows
    replace those chapters' rows in the record and the others are kept. Returns the path."""
    folder = record_dir(gpu_slug(device))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    if chapters and os.path.exists(path):
        old, old_meta = read_csv(path)
        kept = [r for r in old if r["chapter"] not in chapters]
        rows = kept + list(rows)
        rows.sort(key=lambda r: r["chapter"])  # chapter order (stable: each chapter's as run)
        meta = dict(meta)
        meta["command"] += (f"; the rows of other chapters kept from the earlier record: "
                            f"{old_meta.get('date', '?')}, {old_meta.get('command', '?')}")
        if old_meta.get("device", "") != meta["device"]:
            meta["device of the kept rows"] = old_meta.get("device", "?")
            print(f"note: the kept rows were recorded with another device line: "
                  f"{old_meta.get('device', '?')}", file=sys.stderr)
    write_csv(path, rows, fields, meta)
    return path


def caption(data, meta, name, what):
    """The table's source in one line. The date and the command are in the CSV's own header:
    a README carries no dates (the run histories are in the chapters' NOTES.md)."""
    return f"*{gpu_name(meta)}, CUDA {cuda_version(meta)}: `{data.where}/{name}`{what}.*"


# The measured ceiling each kind of work is held against (ceilings.csv): BF16 against the
# tensor cores' measured rate, wgmma where the GPU has it (sm_90), else mma.sync. A measured
# ceiling, not the datasheet's figure (docs/measuring.md, "% of peak", shows both).
PEAK_OF = {"fp32": ["fma_fp32"], "bf16": ["wgmma_bf16", "mma_sync_bf16"],
           "fp8": ["wgmma_fp8_e4m3"], "copy": ["copy"]}
PEAK_WORDS = {"fp32": "FP32 rows", "bf16": "BF16 rows", "fp8": "FP8 rows", "copy": "copies"}


def fmt_ms(x):
    return f"{x:.3f}" if x >= 1 else f"{x:.4f}"


def fmt_count(x):
    if x != x:
        return ""
    if abs(x) < 1e4:
        return f"{x:.0f}" if x == int(x) else f"{x:.2f}"
    e = len(str(int(abs(x)))) - 1
    sup = str(e).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{x / 10 ** e:.2f}·10{sup}"


def fmt_counter(col, v):
    if col in ("top_stalls", "function"):
        return v.replace(":", " ")
    try:
        x = float(v)
    except ValueError:
        return v
    if x != x:
        return ""
    if col.endswith("%"):
        return f"{x:.1f}"
    if col == "time_ms":
        return fmt_ms(x)
    if col.startswith("stall_"):
        return f"{x:.2f}"
    return fmt_count(x)


class Data:
    def __init__(self, results):
        self.results = os.path.abspath(results)
        rel = os.path.relpath(self.results, ROOT)
        self.where = self.results if rel.startswith("..") else rel  # as the captions name it
        self.timings, self.tmeta = self._load("timings.csv")
        self.counters, self.cmeta = self._load("counters.csv")
        rows, self.pmeta = self._load("ceilings.csv")
        self.ceilings = {r["ceiling"]: (float(r["value"]), r["unit"]) for r in rows
                         if (r.get("value") or "").strip()}

    def _load(self, name):
        path = os.path.join(self.results, name)
        return read_csv(path) if os.path.exists(path) else ([], {})

    def peak(self, precision):
        """(ceiling name, value, unit) held against rows of this precision, or None."""
        if self.ceilings and self.tmeta and gpu_name(self.pmeta) != gpu_name(self.tmeta):
            raise KeyError(f"{self.where}/ceilings.csv is of {gpu_name(self.pmeta)}, its "
                           f"timings.csv of {gpu_name(self.tmeta)}")
        for name in PEAK_OF.get(precision, []):
            if name in self.ceilings:
                return (name,) + self.ceilings[name]
        return None

    def peak_pct(self, r):
        """A timings row's rate as a % of its measured ceiling, or None."""
        p = self.peak(r["precision"])
        if p is None or r.get("status") != "ok":
            return None
        if p[2] != r["unit"]:
            raise KeyError(f"ceiling {p[0]} is in {p[2]}, {r['kernel']}'s rate in {r['unit']}")
        return 100 * float(r["rate"]) / p[1]

    def peak_cell(self, r):
        x = self.peak_pct(r)
        return "" if x is None else f"{x:.1f}%"

    def peak_caption(self, precisions):
        """The caption line that says what % of peak is measured against."""
        if not self.ceilings:
            against = "; ".join(f"{PEAK_WORDS[p]} against `{PEAK_OF[p][0]}`" +
                                (", the tensor cores' measured rate" if p == "bf16" else "")
                                for p in precisions)
            return (f"*% of peak ({against}): no ceilings recorded for this GPU "
                    f"(`{self.where}/ceilings.csv`).*")
        parts = []
        for p in precisions:
            c = self.peak(p)
            if c is None:
                parts.append(f"{PEAK_WORDS[p]}: no ceiling recorded")
                continue
            rate = f"{c[1]:.1f}"  # as the prose quotes ceilings.csv
            note = ""
            if p == "bf16":
                note = (", the tensor cores' measured rate" if c[0] == "wgmma_bf16" else
                        ", the tensor cores' measured rate here (no `wgmma_bf16` recorded)")
            parts.append(f"{PEAK_WORDS[p]} against `{c[0]}` ({rate} {c[2]}{note})")
        return (f"*% of peak: of the measured ceilings (`{self.where}/ceilings.csv`): " +
                "; ".join(parts) + ".*")

    def home(self, chapter, kernel):
        """A kernel an earlier chapter teaches, timed alongside in a later chapter's program
        (Role::kPrevious), is shown with its own chapter's measurement: one kernel at one shape
        has one number in every README. Its registry name is the same in both programs."""
        for r in self.timings:
            if r["kernel"] == kernel and r["role"] in ("step", "best") and r["chapter"] != chapter:
                if any(x["chapter"] == chapter and x["kernel"] == kernel and x["role"] == "previous"
                       for x in self.timings):
                    return r["chapter"]
        return chapter

    def timing(self, chapter, kernel, shape):
        home = self.home(chapter, kernel)
        if home != chapter and any(r["chapter"] == home and r["kernel"] == kernel and
                                   r["shape"] == shape for r in self.timings):
            chapter = home
        for r in self.timings:
            if r["chapter"] == chapter and r["kernel"] == kernel and r["shape"] == shape:
                if r["status"] != "ok":
                    raise KeyError(f"{chapter} {kernel} {shape}: {r['status']} ({r['reason']})")
                return r
        raise KeyError(f"{chapter} {kernel} {shape}: not in timings.csv "
                       "(tools/progression.py --tables measures what the tables ask for)")

    def counter(self, chapter, kernel, shape):
        home = self.home(chapter, kernel)
        if home != chapter and any(r["chapter"] == home and r["kernel"] == kernel and
                                   r["shape"] == shape for r in self.counters):
            chapter = home
        rows = [r for r in self.counters
                if r["chapter"] == chapter and r["kernel"] == kernel and r["shape"] == shape]
        if not rows:
            raise KeyError(f"{chapter} {kernel} {shape}: not in counters.csv "
                           "(tools/profile.py --tables measures what the tables ask for)")
        return rows


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def pct_cell(r):
    return f"{float(r['pct']):.1f}%"


def progression_table(data):
    rows = [r for r in data.timings if "progression" in r.get("sets", "").split()]
    if not rows:
        raise KeyError("timings.csv has no progression rows")
    last, body = {}, []
    for r in rows:
        if r["status"] != "ok":
            body.append([r["chapter"], f"`{r['kernel']}`", r["precision"], shape_name(r["shape"]),
                         f"skipped: {r['reason']}", "", "", "", "", ""])
            continue
        ms = float(r["ms"])
        key = (r["precision"], r["shape"])
        speed = f"{last[key] / ms:.2f}×" if key in last else ""
        last[key] = ms
        body.append([r["chapter"], f"`{r['kernel']}`", r["precision"], shape_name(r["shape"]),
                     fmt_ms(ms), f"{float(r['rate']):.1f} {r['unit']}", f"`{r['baseline']}`",
                     pct_cell(r), data.peak_cell(r), speed])
    precisions = [p for p in PEAK_OF if any(r["precision"] == p for r in rows)]
    return [caption(data, data.tmeta, "timings.csv", ""), data.peak_caption(precisions), ""] + \
        table(["chapter", "kernel", "precision", "shape", "ms", "rate", "baseline",
               "% of baseline", "% of peak", "× previous step"], body)


def timings_table(data, o):
    chapter, kernels, shapes = o["chapter"], o["kernels"], o["shapes"]
    cols = o.get("columns", ["kernel", "ms", "rate", "pct", "vs_prev"])
    if len(shapes) > 1 and "shape" not in cols:
        cols = ["shape"] + cols
    body, baselines, precisions = [], set(), set()
    for shape in shapes:
        prev = None
        for k in kernels:
            r = data.timing(chapter, k, shape)
            ms = float(r["ms"])
            baselines.add(r["baseline"])
            precisions.add(r["precision"])
            cells = {"kernel": f"`{k}`", "shape": shape_name(shape), "ms": fmt_ms(ms),
                     "rate": f"{float(r['rate']):.1f}", "pct": pct_cell(r),
                     "peak": data.peak_cell(r) if "peak" in cols else "",
                     "baseline_ms": fmt_ms(float(r["baseline_ms"])),
                     "vs_prev": f"{prev / ms:.2f}×" if prev else ""}
            body.append([cells[c] for c in cols])
            prev = ms
    unit = data.timing(chapter, kernels[0], shapes[0])["unit"]
    labels = {"kernel": "kernel", "shape": "shape", "ms": "ms", "rate": unit,
              "pct": "% of " + "/".join(f"`{b}`" for b in sorted(baselines)),
              "peak": "% of peak", "baseline_ms": "baseline ms", "vs_prev": "× previous row"}
    what = "" if len(shapes) > 1 else f", {shape_name(shapes[0])}"
    head = [caption(data, data.tmeta, "timings.csv", what)]
    if "peak" in cols:
        head.append(data.peak_caption([p for p in PEAK_OF if p in precisions]))
    return head + [""] + table([labels[c] for c in cols], body)


def pivot_table(data, o):
    chapter, kernels, shapes = o["chapter"], o["kernels"], o["shapes"]
    value = o.get("value", ["pct"])[0]
    by_shape = o.get("rows", ["kernels"])[0] == "shapes"

    def cell(k, s):
        r = data.timing(chapter, k, s)
        if value == "pct":
            return pct_cell(r)
        return fmt_ms(float(r["ms"])) if value == "ms" else f"{float(r['rate']):.1f}"
    base = sorted({data.timing(chapter, k, s)["baseline"] for k in kernels for s in shapes})
    what = {"pct": "% of " + "/".join(f"`{b}`" for b in base), "ms": "ms",
            "rate": data.timing(chapter, kernels[0], shapes[0])["unit"]}[value]
    if by_shape:
        head = ["shape"] + [f"`{k}`" for k in kernels]
        body = [[shape_name(s)] + [cell(k, s) for k in kernels] for s in shapes]
    else:
        head = ["kernel"] + [shape_name(s) for s in shapes]
        body = [[f"`{k}`"] + [cell(k, s) for s in shapes] for k in kernels]
    return [caption(data, data.tmeta, "timings.csv", f"; {what}"), ""] + table(head, body)


def counters_table(data, o):
    chapter, kernels, shape, cols = o["chapter"], o["kernels"], o["shape"][0], o["columns"]
    body = []
    for k in kernels:
        launches = data.counter(chapter, k, shape)
        for i, r in enumerate(launches):
            name = f"`{k}`" + (f" ({i + 1}/{len(launches)})" if len(launches) > 1 else "")
            body.append([name] + [fmt_counter(c, r.get(c, "")) for c in cols])
    head = ["kernel"] + [COUNTER_LABELS.get(c, c.replace("stall_", "") + " stall" if
                                            c.startswith("stall_") else c) for c in cols]
    return [caption(data, data.cmeta, "counters.csv", f", {shape_name(shape)}, one launch each"),
            ""] + table(head, body)


def device_sms(meta):
    m = re.search(r"(\d+) SMs", meta.get("device", ""))
    if not m:
        raise KeyError("timings.csv's device line names no SM count")
    return int(m.group(1))


def dram_peak_gbs(meta):
    m = re.search(r"\((\d+)-bit, (\d+) MHz\)", meta.get("device", ""))
    if not m:
        raise KeyError("timings.csv's device line names no memory bus and clock")
    return int(m.group(1)) / 8 * int(m.group(2)) * 1e6 * 2 / 1e9


def waves_table(data, o):
    chapter, kernels, shapes = o["chapter"], o["kernels"], o["shapes"]
    bm, bn = int(o["bm"][0]), int(o["bn"][0])
    sms = device_sms(data.tmeta)
    body = []
    for s in shapes:
        M, N, _ = (int(x) for x in s.split("x"))
        tiles = -(-M // bm) * -(-N // bn)
        last = tiles % sms or min(tiles, sms)
        body.append([shape_name(s), str(tiles), f"{tiles / sms:.2f}", f"{last} of {sms}"] +
                    [pct_cell(data.timing(chapter, k, s)) for k in kernels])
    head = ["shape", f"{bm}×{bn} tiles", f"waves on {sms} SMs", "last wave's SMs"] + \
        [f"`{k}`" for k in kernels]
    base = sorted({data.timing(chapter, k, s)["baseline"] for k in kernels for s in shapes})
    return [caption(data, data.tmeta, "timings.csv", "; % of " + "/".join(f"`{b}`" for b in base)),
            ""] + table(head, body)


def dram_table(data, o):
    chapter, kernels, shapes = o["chapter"], o["kernels"], o["shapes"]
    # The measured copy bandwidth (tools/ceilings) where the record has it, else the bus's.
    measured = "copy" in data.ceilings and data.ceilings["copy"][1] == "GB/s"
    peak = data.ceilings["copy"][0] if measured else dram_peak_gbs(data.tmeta)
    what = (f"; the copy ceiling (`copy`, measured) {peak:.1f} GB/s" if measured else
            f"; DRAM peak {peak:.0f} GB/s (bus width × clock × 2)")
    # Bytes an element: BF16 operands and an FP32 C unless the block says (in_bytes=1 out_bytes=2:
    # chapter 10's e4m3 operands and BF16 D).
    in_b, out_b = int(o.get("in_bytes", ["2"])[0]), int(o.get("out_bytes", ["4"])[0])
    body = []
    for s in shapes:
        M, N, K = (int(x) for x in s.split("x"))
        need = in_b * (M * K + N * K) + out_b * M * N
        rows = [(f"`{k}`", data.timing(chapter, k, s)) for k in kernels]
        first = rows[0][1]  # and its baseline, timed in the same process
        rows.append((f"`{first['baseline']}`", dict(ms=first["baseline_ms"], pct="100")))
        for name, r in rows:
            gbs = need / (float(r["ms"]) * 1e-3) / 1e9
            body.append([name, shape_name(s), fmt_ms(float(r["ms"])), f"{gbs:.0f}",
                         f"{100 * gbs / peak:.1f}%", pct_cell(r)])
    base = sorted({data.timing(chapter, k, s)["baseline"] for k in kernels for s in shapes})
    return [caption(data, data.tmeta, "timings.csv", what), ""] + table(
        ["kernel", "shape", "ms", "GB/s (least bytes)",
         "% of the copy ceiling" if measured else "% of DRAM peak",
         "% of " + "/".join(f"`{b}`" for b in base)], body)


def signed(x):
    return "0.0" if abs(x) < 0.05 else f"{x:+.1f}".replace("-", "−")


def gpus_table(data, o):
    """Every progression step on each GPU named: record folders beside the primary's."""
    root = os.path.dirname(data.results)
    records = [(slug, Data(record_dir(slug, root))) for slug in o["gpus"]]
    present = [(slug, d) for slug, d in records if d.timings]
    missing = [slug for slug, d in records if not d.timings]
    if not present:
        raise KeyError("no record of " + ", ".join(o["gpus"]) + f" in {data.where}/..")
    why_path = os.path.join(root, "why_moved.csv")
    why = {}
    for r in (read_csv(why_path)[0] if os.path.exists(why_path) else []):
        why[(r["chapter"], r["kernel"])] = r["why"].replace("|", "\\|")
    steps, order = {}, []  # (chapter, kernel, shape) -> {slug: row}
    for slug, d in present:
        for r in d.timings:
            if "progression" in r.get("sets", "").split():
                key = (r["chapter"], r["kernel"], r["shape"])
                if key not in steps:
                    order.append(key)
                steps.setdefault(key, {})[slug] = r
    for c, k in why:
        if not any(key[:2] == (c, k) for key in order):
            raise KeyError(f"why_moved.csv names {c} {k}, which is no progression step")
    body = []
    for key in order:
        cells = [key[0], f"`{key[1]}`", shape_name(key[2])]
        base = next(r["baseline"] for r in steps[key].values())
        cells.append(f"`{base}`")
        pcts = []
        for slug, _ in present:
            r = steps[key].get(slug)
            if r is None or r["status"] != "ok":
                cells += ["", "not measured" if r is None else "skipped"]
                pcts.append(None)
            else:
                cells += [fmt_ms(float(r["ms"])), pct_cell(r)]
                pcts.append(float(r["pct"]))
        if len(present) > 1:
            a, b = pcts[0], pcts[-1]
            cells.append("" if a is None or b is None else signed(round(b, 1) - round(a, 1)))
        cells.append(why.get(key[:2], ""))
        body.append(cells)
    head = ["chapter", "kernel", "shape", "baseline"]
    for slug, _ in present:
        head += [f"{slug.upper()} ms", f"{slug.upper()} % of baseline"]
    if len(present) > 1:
        head.append(f"change ({present[-1][0].upper()} − {present[0][0].upper()}, points)")
    head.append("why")
    rel = os.path.relpath(root, ROOT)
    where = root if rel.startswith("..") else rel
    sources = " and ".join(f"`{d.where}/timings.csv` ({gpu_name(d.tmeta)}, CUDA "
                           f"{cuda_version(d.tmeta)})" for _, d in present)
    lines = [f"*{sources}; why: `{where}/why_moved.csv`.*"]
    for slug in missing:
        lines.append(f"*No record of the {slug.upper()} yet: `{where}/{slug}/timings.csv` is "
                     "missing, so its columns are left out.*")
    return lines + [""] + table(head, body)


# Chapter 12's reduce-scatter steps that move BF16 partials: timed against the BF16 limit.
BF16_PARTIALS = ("bf16_partials", "one_sum", "sum_epilogue")


def many_gpus_table(data, o):
    """Chapter 12's layers on many GPUs, from a multi-GPU record folder beside the primary's
    (record=SLUG, e.g. h100-x4: many_gpus.csv from 12_many_gpus/bench.sh, torch_tpG.csv from
    12_many_gpus/torch_async_tp.py, topology.txt from nvidia-smi). layer=ag|rs, gpus=4,2 (the
    TP sizes, in the order of the rows), shapes=MxNxK,... (default: every shape recorded, in
    the CSV's order). Per row: the slowest rank's median ms of the GEMM alone (ag: the faster
    of chapter 09's GEMM and step 5's kernel, as the program's limit takes it), the
    communication alone (rs: of FP32 partials, and of BF16 ones), the limit max(GEMM, comm)
    (rs: for each), then each step and PyTorch's fused async-TP as ms (time / its limit;
    unfused / time); steps 7-9 (BF16_PARTIALS) and PyTorch, which move BF16 partials, against
    the BF16 limit. rows=G:MxNxK,G:*,...: those rows only (G:*: every shape at G). A step the
    record has no row of for this layer at all reads "not run" (a step added after the run); a
    step missing at one shape only is an error."""
    slug = (o.get("record") or [""])[0]
    if not re.match(r"^[a-z0-9][a-z0-9-]*$", slug):
        raise KeyError(f"many_gpus: record='{slug}' is no record folder's name (e.g. h100-x4)")
    layer = (o.get("layer") or [""])[0]
    if layer not in ("ag", "rs"):
        raise KeyError(f"many_gpus: layer='{layer}', expected ag or rs")
    root = os.path.dirname(data.results)
    folder = record_dir(slug, root)
    rel = os.path.relpath(folder, ROOT)
    where = folder if rel.startswith("..") else rel
    path = os.path.join(folder, "many_gpus.csv")
    if not os.path.exists(path):
        raise KeyError(f"{where}/many_gpus.csv is missing (12_many_gpus/bench.sh writes it)")
    rows, meta = read_csv(path)
    at = {}
    for r in rows:
        if r["layer"] == layer:
            at[(r["gpus"], f"{r['M']}x{r['N']}x{r['K']}", r["step"])] = r
    gpus = o.get("gpus") or sorted({k[0] for k in at}, key=int)
    shapes = o.get("shapes") or list(dict.fromkeys(k[1] for k in at))
    torch, tmeta = {}, {}
    for g in gpus:
        tpath = os.path.join(folder, f"torch_tp{g}.csv")
        if os.path.exists(tpath):
            trows, tmeta[g] = read_csv(tpath)
            for r in trows:
                if r["layer"] == layer:
                    torch[(r["gpus"], f"{r['M']}x{r['N']}x{r['K']}", r["step"])] = r
    if layer == "ag":
        steps = ["unfused", "chunked", "copy_engine", "tile_wait", "slice_wait"]
    else:
        steps = ["unfused", "chunked", "copy_engine", "others_first", "bf16_partials", "one_sum",
                 "sum_epilogue"]
    recorded = {k[2] for k in at}

    def ms(table, g, s, step, name):
        r = table.get((g, s, step))
        if r is None:
            raise KeyError(f"{where}/{name} has no {layer} {step} at {s} on {g} GPUs")
        if r.get("status", "") == "FAIL":
            raise KeyError(f"{where}/{name}: {layer} {step} at {s} on {g} GPUs failed its check")
        return float(r["ms_median"])

    def cell(t, limit, unfused):
        x = f"{fmt_ms(t)} ({t / limit:.2f}×"
        return x + (")" if unfused is None else f"; {unfused / t:.2f}×)")
    # rows=G:MxNxK,G:*,...: only those rows (G:* every shape at G), in the order of gpus= and
    # shapes=; default every one.
    picked = o.get("rows")
    for want in picked or []:
        if not re.match(r"^\d+:(\*|\d+x\d+x\d+)$", want):
            raise KeyError(f"many_gpus: rows={want}: expected G:MxNxK or G:*")
    body = []
    for g in gpus:
        for s in shapes:
            if picked and f"{g}:{s}" not in picked and f"{g}:*" not in picked:
                continue
            gemm = ms(at, g, s, "gemm", "many_gpus.csv")
            if "gemm_tiles" in recorded:
                gemm = min(gemm, ms(at, g, s, "gemm_tiles", "many_gpus.csv"))
            comm = ms(at, g, s, "comm", "many_gpus.csv")
            limit = max(gemm, comm)
            cells = [g, shape_name(s), fmt_ms(gemm), fmt_ms(comm)]
            limit16 = None
            if layer == "rs":
                if "comm_bf16" in recorded:
                    comm16 = ms(at, g, s, "comm_bf16", "many_gpus.csv")
                    limit16 = max(gemm, comm16)
                    cells.append(fmt_ms(comm16))
                else:
                    cells.append("not run")
            cells.append(fmt_ms(limit))
            if layer == "rs":
                cells.append(fmt_ms(limit16) if limit16 else "not run")
            unfused = ms(at, g, s, "unfused", "many_gpus.csv")
            cells.append(cell(unfused, limit, None))
            for st in steps[1:]:
                if st not in recorded:
                    cells.append("not run")
                    continue
                lim = limit16 if st in BF16_PARTIALS else limit
                cells.append(cell(ms(at, g, s, st, "many_gpus.csv"), lim, unfused))
            if (g, s, "fused") in torch:
                lim = limit16 if limit16 else limit
                cells.append(cell(ms(torch, g, s, "fused", f"torch_tp{g}.csv"), lim, unfused))
            else:
                cells.append("not run")
            body.append(cells)
    model = re.sub(r"^\s*\d+\s*x\s*", "", meta.get("device", "?")).split(",")[0]
    topo = os.path.join(folder, "topology.txt")
    count = (sum(1 for line in open(topo) if re.match(r"GPU \d+:", line))
             if os.path.exists(topo) else max(int(g) for g in gpus))
    cuda = re.search(r"CUDA runtime ([\d.]+)", meta.get("versions", ""))
    nccl = re.search(r"NCCL header [\d.]+, runtime ([\d.]+)", meta.get("versions", ""))
    tv = {re.search(r"torch ([^,]+)", m.get("versions", "")).group(1)
          for m in tmeta.values() if re.search(r"torch ([^,]+)", m.get("versions", ""))}
    sources = ", ".join(f"`torch_tp{g}.csv`" for g in gpus if g in tmeta)
    if layer == "ag":
        head = ["TP", "layer M×N×K", "GEMM alone", "comm alone", "limit"]
        what = ("GEMM alone: the faster of chapter 09's GEMM and step 5's kernel, each alone; "
                "after each step's ms: (its time ÷ the limit; unfused ÷ its time)")
    else:
        head = ["TP", "layer M×N×K", "GEMM alone", "comm FP32", "comm BF16", "limit FP32",
                "limit BF16"]
        what = ("comm: NCCL's reduce-scatter of FP32 (steps 1-6) or BF16 (steps 7-9, PyTorch) "
                "partials alone; after each step's ms: (its time ÷ its limit, BF16 for steps 7-9 "
                "and PyTorch; unfused ÷ its time)")
    head += [st.replace("_", " ") for st in steps] + ["PyTorch fused"]
    return [f"*{count} × {model}, CUDA {cuda.group(1) if cuda else '?'}, NCCL "
            f"{nccl.group(1) if nccl else '?'}: `{where}/many_gpus.csv`"
            + (f"; PyTorch {', '.join(sorted(tv))}: {sources}" if sources else "")
            + f". The slowest rank's median ms; {what}.*", ""] + table(head, body)


def flush_table(data, o):
    """The L2 flush two ways (tools/flush_compare.py, the record's flush.csv): per case, the
    median over its runs of the kernel's and its baseline's time and of the ratio."""
    path = os.path.join(data.results, "flush.csv")
    if not os.path.exists(path):
        raise KeyError(f"{data.where}/flush.csv is missing (tools/flush_compare.py)")
    rows, meta = read_csv(path)
    cases, order = {}, []
    for r in rows:
        key = (r["kernel"], r["shape"])
        if key not in cases:
            order.append(key)
        cases.setdefault(key, {}).setdefault(r["flush"], []).append(r)

    body = []
    for key in order:
        cells = [f"`{key[0]}`", shape_name(key[1])]
        pct = {}
        for how in ("memset", "read"):
            rs = cases[key].get(how, [])
            if not rs:
                raise KeyError(f"flush.csv has no '{how}' run of {key[0]} {key[1]}")
            pct[how] = statistics.median([float(r["pct"]) for r in rs])
            cells += [f"{statistics.median([float(r['ms']) for r in rs]) * 1e3:.2f}",
                      f"{statistics.median([float(r['baseline_ms']) for r in rs]) * 1e3:.2f}",
                      f"{pct[how]:.1f}%"]
        cells.append(signed(round(pct["read"], 1) - round(pct["memset"], 1)))
        body.append(cells)
    runs = max(int(r["run"]) for r in rows)
    base = sorted({r["baseline"] for r in rows})
    head = ["kernel", "shape", "memset: µs", "baseline µs", "% of baseline", "read: µs",
            "baseline µs", "% of baseline", "change (points)"]
    return [f"*{gpu_name(meta)}, CUDA {cuda_version(meta)}: `{data.where}/flush.csv`; median of "
            f"{runs} processes per flush; baselines " + ", ".join(f"`{b}`" for b in base) +
            ".*", ""] + table(head, body)


def smem_model_rows(data):
    """The model's predictions (docs/results/smem_model.csv, tests/smem_model.cu)."""
    path = os.path.join(os.path.dirname(data.results), "smem_model.csv")
    if not os.path.exists(path):
        raise KeyError("docs/results/smem_model.csv is missing (build/tests/smem_model)")
    return read_csv(path)[0]


def smem_table(data, o):
    """The bank-conflict model against Nsight Compute: wavefronts per shared-memory instruction,
    predicted (smem_model.csv) and measured (counters.csv: wavefronts over the instructions,
    LDS and LDSM for loads, STS for stores). A row off by more than 5 % in wavefronts per
    instruction or in instructions must say why (docs/results/smem_why.csv)."""
    model = smem_model_rows(data)
    why_path = os.path.join(os.path.dirname(data.results), "smem_why.csv")
    why = {}
    for r in (read_csv(why_path)[0] if os.path.exists(why_path) else []):
        why[(r["chapter"], r["kernel"], r["op"])] = r["why"].replace("|", "\\|")
    chapters = set(o.get("chapters", [])) - {""}
    kernels, by = [], {}
    for r in model:
        if chapters and r["chapter"] not in chapters:
            continue
        key = (r["chapter"], r["kernel"], r["shape"])
        if key not in by:
            kernels.append(key)
        by.setdefault(key, {})[r["op"]] = r
    body, notes = [], []
    for chapter, kernel, shape in kernels:
        launches = data.counter(chapter, kernel, shape)
        c = {k: sum(num_or_nan(x.get(k)) for x in launches) for k in
             ("lds_wavefronts", "sts_wavefronts", "lds_inst", "ldsm_inst", "sts_inst")}
        cells = [f"`{kernel}`"]
        reasons = []
        for op in ("ld", "st"):
            m = by[(chapter, kernel, shape)].get(op)
            if m is None or float(m["instructions"]) == 0:
                cells += ["—", "—"]
                continue
            per = float(m["per_instruction"])
            wav = c["lds_wavefronts"] if op == "ld" else c["sts_wavefronts"]
            inst = c["lds_inst"] + c["ldsm_inst"] if op == "ld" else c["sts_inst"]
            if inst != inst or inst == 0:
                cells += [f"{per:.2f}", "—"]
                continue
            meas = wav / inst
            off = abs(meas / per - 1) > 0.05 or abs(inst / float(m["instructions"]) - 1) > 0.05
            w = why.get((chapter, kernel, op))
            mark = ""
            if off:
                if not w:
                    raise KeyError(f"{chapter} {kernel} {op}: model {per:.2f} wavefronts per "
                                   f"instruction and {float(m['instructions']):.4g} instructions, "
                                   f"measured {meas:.2f} and {inst:.4g}: more than 5 % apart, "
                                   "and docs/results/smem_why.csv says nothing of it")
                if w not in notes:
                    notes.append(w)
                mark = f" ({notes.index(w) + 1})"
            cells += [f"{per:.2f}", f"{meas:.2f}{mark}"]
        body.append(cells)
    head = ["kernel", "loads: model", "loads: measured", "stores: model", "stores: measured"]
    out = [caption(data, data.cmeta, "counters.csv", "") .rstrip(".*") +
           "; the model: `docs/results/smem_model.csv` (`tests/smem_model.cu`); wavefronts "
           "per warp instruction, loads with `ldmatrix`; every row's instruction count is the "
           "model's within 5 %.*", ""] + table(head, body)
    for i, n in enumerate(notes, 1):
        out += ["", f"({i}) {n}"]
    return out


def num_or_nan(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def ceilings_table(data, o):
    """The record's measured ceilings (tools/ceilings)."""
    path = os.path.join(data.results, "ceilings.csv")
    if not os.path.exists(path):
        raise KeyError(f"{data.where}/ceilings.csv is missing (build/tools/ceilings/ceilings)")
    rows, meta = read_csv(path)
    body = [[f"`{r['ceiling']}`", f"{float(r['value']):.1f}" if r["value"] else "not measured",
             r["unit"], r["detail"]] for r in rows]
    return [f"*{gpu_name(meta)}, CUDA {cuda_version(meta)}: `{data.where}/ceilings.csv`.*",
            ""] + table(["ceiling", "rate", "unit", "how"], body)


def runs_table(data, o):
    """runs gpu=SLUG file=NAME kernels=... shapes=...: one row a shape, one column a kernel;
    a baseline's cell (no baseline of its own) is its TFLOP/s, any other kernel's the % of its
    baseline that the program measured in the same process (the CSV's pct_of_baseline);
    KERNEL:ms, its median time in ms."""
    if "gpu" not in o:
        raise KeyError("runs: gpu=SLUG is required (the record folder that holds file=NAME)")
    name = o["file"][0]
    path = os.path.join(data.results, name)
    if not os.path.exists(path):
        raise KeyError(f"{data.where}/{name} is missing")
    rows, meta = read_csv(path)
    at = {(r["kernel"], f"{r['M']}x{r['N']}x{r['K']}"): r for r in rows}
    cols = [c.partition(":")[::2] for c in o["kernels"]]  # (kernel, "" or "ms")
    head, body = ["shape"], []
    for k, how in cols:
        r = next((r for r in rows if r["kernel"] == k), None)
        if r is None:
            raise KeyError(f"{data.where}/{name} has no row of {k}")
        head.append(f"`{k}` ms" if how == "ms" else f"`{k}` TFLOP/s" if not r["baseline"]
                    else f"`{k}` % of `{r['baseline']}`")
    for sh in o["shapes"]:
        cells = [shape_name(sh)]
        for k, how in cols:
            r = at.get((k, sh))
            if r is None:
                raise KeyError(f"{data.where}/{name}: no row of {k} at {sh}")
            if r.get("check") != "pass":
                cells.append(f"({r.get('check')})")
            elif how == "ms":
                cells.append(fmt_ms(float(r["ms_median"])))
            elif not r["baseline"]:
                cells.append(f"{float(r['TFLOP/s']):,.0f}")
            else:
                cells.append(f"{float(r['pct_of_baseline']):.1f}%")
        body.append(cells)
    return [caption(data, meta, name, ", each shape in a process of its own")] + [""] + \
        table(head, body)


def errors_table(data, o):
    """Errors against the exact product and the share of the bound they used, from the record's
    errors.csv (tools/fp8_errors.sh): one row a kernel, one
    column a shape. A cell is the
    norm-wise error, then in brackets the largest |error| / bound of any element; "left out"
    where the program refuses the kernel (unpromoted FP8 above K = 65536)."""
    path = os.path.join(data.results, "errors.csv")
    if not os.path.exists(path):
        raise KeyError(f"{data.where}/errors.csv is missing (tools/fp8_errors.sh)")
    rows, meta = read_csv(path)
    at = {(r["kernel"], f"{r['M']}x{r['N']}x{r['K']}"): r for r in rows}

    def cell(k, s):
        if (k, s) not in at:
            if int(s.split("x")[2]) > 65536:
                return "left out"
            raise KeyError(f"{data.where}/errors.csv has no {k} at {s}")
        r = at[(k, s)]
        return f"{float(r['rel_err']):.2e} ({100 * float(r['worst_element_fraction']):.0f} %)"
    body = [[f"`{k}`"] + [cell(k, s) for s in o["shapes"]] for k in o["kernels"]]
    return [f"*{gpu_name(meta)}, CUDA {cuda_version(meta)}: `{data.where}/errors.csv`; "
            "‖D − exact‖ / ‖exact‖ of the BF16 output, and (in brackets) the largest share of "
            "its own bound that any element used.*", ""] + table(
        ["kernel"] + [shape_name(s) for s in o["shapes"]], body)


PLOTS = [("progression_steps.png", "Every step against cuBLAS"),
         ("progression_sizes.png", "Each chapter's answer over sizes"),
         ("progression_roofline.png", "Every step on the roofline of the measured ceilings")]


def plots_block(data, doc):
    """The primary record's plots, linked from the document's folder."""
    out = []
    for name, alt in PLOTS:
        path = os.path.join(data.results, name)
        if not os.path.exists(path):
            raise KeyError(f"{data.where}/{name} is missing (tools/plot_progression.py "
                           f"{data.where} draws it)")
        out.append(f"![{alt}]({os.path.relpath(path, os.path.dirname(doc))})")
    return out


def parse_opts(text):
    o = {}
    for part in text.split():
        k, _, v = part.partition("=")
        o[k] = v.split(",")
    o["chapter"] = o.get("chapter", [""])[0]
    return o


def render(kind, o, data, doc=os.path.join(ROOT, "README.md")):
    if "gpu" in o:  # gpu=SLUG, any kind: that GPU's record folder beside the primary's
        data = Data(record_dir(o["gpu"][0], os.path.dirname(data.results)))
    if kind == "gpus":
        return gpus_table(data, o)
    if kind == "plots":
        return plots_block(data, doc)
    if kind == "progression":
        return progression_table(data)
    if kind == "timings":
        return timings_table(data, o)
    if kind == "pivot":
        return pivot_table(data, o)
    if kind == "counters":
        return counters_table(data, o)
    if kind == "waves":
        return waves_table(data, o)
    if kind == "dram":
        return dram_table(data, o)
    if kind == "flush":
        return flush_table(data, o)
    if kind == "smem":
        return smem_table(data, o)
    if kind == "ceilings":
        return ceilings_table(data, o)
    if kind == "errors":
        return errors_table(data, o)
    if kind == "many_gpus":
        return many_gpus_table(data, o)
    if kind == "runs":
        return runs_table(data, o)
    raise KeyError(f"unknown table kind '{kind}'")


def blocks(lines):
    """[(begin index, end index, kind, opts)] of the generated regions of a README."""
    found, i = [], 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if m:
            j = i + 1
            while j < len(lines) and lines[j] != END:
                if BEGIN.match(lines[j]):
                    break
                j += 1
            if j == len(lines) or lines[j] != END:
                raise ValueError(f"line {i + 1}: a table marker without '{END}'")
            found.append((i, j, m.group(1), parse_opts(m.group(2))))
            i = j
        i += 1
    return found


def readmes():
    return [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "[0-9][0-9]_*", "README.md")))


def documents():
    """Every file with generated tables: the READMEs, and docs/measuring.md (tables and dates
    only: the word budgets and the sections are the READMEs' rules)."""
    return readmes() + [os.path.join(ROOT, "docs", "measuring.md")]


def process(path, data, write, root=ROOT):
    """Problems found (list of lines); rewrites the file when write is set."""
    rel = os.path.relpath(path, root)
    lines = open(path).read().split("\n")
    problems, out, last = [], [], 0
    try:
        found = blocks(lines)
    except ValueError as e:
        return [f"{rel}: {e}"]
    for begin, end, kind, o in found:
        out += lines[last:begin + 1]
        try:
            new = render(kind, o, data, os.path.join(ROOT, rel))
        except (KeyError, IndexError) as e:
            problems.append(f"{rel}:{begin + 1}: {e}")
            new = lines[begin + 1:end]
        old = lines[begin + 1:end]
        if new != old and not write:
            problems.append(f"{rel}:{begin + 1}: the table differs from what its CSV gives:")
            problems += ["    " + d for d in difflib.unified_diff(old, new, "README", "CSV",
                                                                  lineterm="", n=0)]
        out += new
        last = end
    out += lines[last:]
    # No dates anywhere in a README (run histories go to NOTES.md), and the word budget.
    for i, line in enumerate(out):
        if DATE.search(line):
            problems.append(f"{rel}:{i + 1}: a date ('{DATE.search(line).group(0)}'); a README "
                            "quotes its tables, whose CSVs carry the date; dated records go to "
                            "NOTES.md")
    words = len("\n".join(out).split())  # the README as written, tables included
    chapter = os.path.basename(os.path.dirname(path))
    budget = BUDGET_TOP if os.path.dirname(path) == root else BUDGET.get(chapter, BUDGET_CHAPTER)
    readme = os.path.basename(path) == "README.md"
    if readme and words > budget:
        problems.append(f"{rel}: {words} words, over its budget of {budget}")
    # A chapter README is the lesson, with the same sections everywhere, in this order.
    if readme and os.path.dirname(path) != root:
        heads = [line[3:].strip() for line in lines if line.startswith("## ")]
        if heads != SECTIONS:
            problems.append(f"{rel}: sections {heads}, expected {SECTIONS}")
    if write:
        text = "\n".join(out)
        if text != open(path).read():
            open(path, "w").write(text)
            print(f"updated {rel}")
    return problems


def requests(results=None):
    """What the tables need measured: {'timings': {(chapter, kernel, shape)}, 'counters': ...}."""
    need = {"timings": set(), "counters": set(), "progression": False}
    for path in documents():
        for _, _, kind, o in blocks(open(path).read().split("\n")):
            if kind in ("progression", "gpus"):
                need["progression"] = True
            elif kind in ("timings", "pivot", "waves", "dram"):
                need["timings"] |= {(o["chapter"], k, s) for k in o["kernels"] for s in o["shapes"]}
            elif kind == "counters":
                need["counters"] |= {(o["chapter"], k, o["shape"][0]) for k in o["kernels"]}
            elif kind == "smem":
                model = os.path.join(RESULTS, "smem_model.csv")
                if os.path.exists(model):
                    need["counters"] |= {(r["chapter"], r["kernel"], r["shape"])
                                         for r in read_csv(model)[0]}
    return need


def selftest_edit():
    """The check must fail on an edited table: edit one figure in a copy of the tree (and pass
    on the unedited copy)."""
    with tempfile.TemporaryDirectory() as tmp:
        for path in documents():
            dst = os.path.join(tmp, os.path.relpath(path, ROOT))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(path, dst)
        target = None
        for path in documents():
            lines = open(path).read().split("\n")
            for begin, end, _, _ in blocks(lines):
                for i in range(begin + 1, end):
                    if re.search(r"\d\.\d", lines[i]) and lines[i].startswith("|"):
                        target = (path, i)
                        break
                if target:
                    break
            if target:
                break
        if not target:
            print("selftest: no generated table with a figure to edit")
            return False
        path, i = target
        dst = os.path.join(tmp, os.path.relpath(path, ROOT))
        data = Data(primary_dir())
        before = [p for p in process(dst, data, write=False, root=tmp) if "differs" in p]
        lines = open(dst).read().split("\n")
        lines[i] = re.sub(r"(\d)\.(\d)", lambda m: f"{(int(m.group(1)) + 1) % 10}.{m.group(2)}",
                          lines[i], count=1)
        open(dst, "w").write("\n".join(lines))
        problems = process(dst, data, write=False, root=tmp)
        print(f"edited {os.path.relpath(path, ROOT)} line {i + 1}: {lines[i]}")
        print("\n".join(problems[:6]))
        ok = not before and any("differs" in p for p in problems)
        print("selftest: the check " + ("fails on the edited table, as it must" if ok else
                                        "did NOT notice the edit" if not before else
                                        "fails on the unedited copy too"))
        return ok


def expect(what, got, want):
    ok = got == want
    print(("ok   " if ok else "FAIL ") + f"{what}: {got!r}" +
          ("" if ok else f", expected {want!r}"))
    return ok


def selftest_slugs():
    ok = all([expect(f"gpu_slug({d!r})", gpu_slug(d), want) for d, want in SLUG_CASES])
    for bad in ("", "GPU 0: , sm_90", "NVIDIA"):
        try:
            ok = expect(f"gpu_slug({bad!r})", gpu_slug(bad), "ValueError") and ok
        except ValueError:
            print(f"ok   gpu_slug({bad!r}): ValueError")
    return ok


def selftest_peak_and_gpus():
    """% of peak and the GPU table, from tests/data (hand-made test data, not a measurement)."""
    data_dir = os.path.join(ROOT, "tests", "data")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        a, b = os.path.join(tmp, "h100"), os.path.join(tmp, "h200")
        os.makedirs(a)
        shutil.copy(os.path.join(data_dir, "timings.csv"), a)

        def row(lines, kernel):
            return next((l for l in lines if f"`{kernel}`" in l), "")
        lines = progression_table(Data(a))
        ok = expect("no ceilings: caption", lines[1].startswith(
            "*% of peak (FP32 rows against `fma_fp32`"), True) and ok
        ok = expect("no ceilings: naive_coalesced's % of peak",
                    row(lines, "naive_coalesced").split(" | ")[8], "") and ok
        shutil.copy(os.path.join(data_dir, "ceilings.csv"), a)
        lines = progression_table(Data(a))
        # tests/data/ceilings.csv: fma_fp32 62, wgmma_bf16 1000, mma_sync_bf16 500, copy 3000
        for kernel, want in (("naive_coalesced", "10.0%"), ("wmma", "22.9%"),
                             ("transpose_padded", "91.9%")):
            ok = expect(f"{kernel}'s % of peak", row(lines, kernel).split(" | ")[8], want) and ok
        ok = expect("caption names wgmma_bf16", "BF16 rows against `wgmma_bf16`" in lines[1],
                    True) and ok
        rows, meta = read_csv(os.path.join(a, "ceilings.csv"))
        for r in rows:
            if r["ceiling"] == "wgmma_bf16":
                r["value"] = ""  # not measured: BF16 falls back to mma.sync
        write_csv(os.path.join(a, "ceilings.csv"), rows, list(rows[0]), meta)
        ok = expect("wmma against mma_sync_bf16",
                    row(progression_table(Data(a)), "wmma").split(" | ")[8], "45.8%") and ok
        write_csv(os.path.join(a, "ceilings.csv"), rows, list(rows[0]),
                  dict(meta, device="GPU 0: another GPU, sm_80"))
        try:
            progression_table(Data(a))
            ok = expect("ceilings of another GPU", "accepted", "KeyError") and ok
        except KeyError as e:
            print(f"ok   ceilings of another GPU: KeyError {e}")

        # One record: its columns and a line that names the other as missing.
        o = parse_opts("gpus=h100,h200")
        lines = gpus_table(Data(a), o)
        ok = expect("one record: H200 named missing",
                    any("No record of the H200 yet" in l for l in lines), True) and ok
        ok = expect("one record: header", lines[3], "| chapter | kernel | shape | baseline | "
                    "H100 ms | H100 % of baseline | why |") and ok
        # Two records: the change in points and the why.
        os.makedirs(b)
        rows, meta = read_csv(os.path.join(a, "timings.csv"))
        for r in rows:
            if r["kernel"] == "naive_coalesced":
                r["pct"] = "10.5"
        write_csv(os.path.join(b, "timings.csv"), rows, list(rows[0]), meta)
        with open(os.path.join(tmp, "why_moved.csv"), "w") as f:
            f.write("# test data\nchapter,kernel,why\n01_naive,naive_coalesced,a test sentence\n")
        lines = gpus_table(Data(a), o)
        ok = expect("two records: naive_coalesced", row(lines, "naive_coalesced"),
                    "| 01_naive | `naive_coalesced` | 4096³ | `cublas` | 22.150 | 12.0% | "
                    "22.150 | 10.5% | −1.5 | a test sentence |") and ok
        with open(os.path.join(tmp, "why_moved.csv"), "a") as f:
            f.write("01_naive,no_such_kernel,a typo\n")
        try:
            gpus_table(Data(a), o)
            ok = expect("why of no step", "accepted", "KeyError") and ok
        except KeyError as e:
            print(f"ok   why of no step: KeyError {e}")
    return ok


def selftest():
    results = [selftest_slugs(), selftest_peak_and_gpus(), selftest_edit()]
    print("selftest: " + ("all hold" if all(results) else "FAILED"))
    return 0 if all(results) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("readmes", nargs="*")
    ap.add_argument("--results", help="a record folder (default: docs/results/<PRIMARY>)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true")
    g.add_argument("--check", action="store_true")
    g.add_argument("--requests", action="store_true")
    g.add_argument("--selftest", action="store_true")
    g.add_argument("--slug", metavar="DEVICE_LINE", help="print the record folder's name")
    args = ap.parse_args()
    if args.slug is not None:
        try:
            print(gpu_slug(args.slug))
            return 0
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
    if args.selftest:
        return selftest()
    if args.requests:
        need = requests()
        for kind in ("timings", "counters"):
            for c, k, s in sorted(need[kind]):
                print(kind, c, k, s)
        return 0
    if args.results and not os.path.isdir(args.results):
        print(f"--results {args.results}: no such folder", file=sys.stderr)
        return 2
    data = Data(args.results or primary_dir())
    problems = []
    for path in args.readmes or documents():
        problems += process(os.path.abspath(path), data, args.write)
    for p in problems:
        print(p)
    if problems:
        n = sum(1 for p in problems if not p.startswith("    "))  # not the diff lines
        print(f"{n} problem(s); tables are rewritten by tools/tables.py --write")
        return 1
    print("README tables match their CSVs; no dates; word budgets and sections hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
