#!/usr/bin/env python3
"""The README tables, written from the recorded runs, and the checks that keep them so.

usage: tools/tables.py [--write | --check] [--results DIR] [README ...]
       tools/tables.py --requests [--results DIR]     what the tables ask to be measured
       tools/tables.py --selftest                     the check fails on an edited table

Every measured figure in a README table comes from one recorded run, kept in docs/results/:
  timings.csv   tools/progression.py: each (chapter, kernel, shape) timed once, in its own
                process, next to its baseline (cuBLAS, cudaMemcpy, cublasSgeam)
  counters.csv  tools/profile.py --tables: Nsight Compute counters, one launch per row
Each CSV starts with comment lines naming the GPU, the CUDA version, the date and the command.

A table is a marker line saying what it shows, then the generated lines, then an end marker:

  <!-- table timings chapter=04_coalesced kernels=tiled_bt_trap,tiled_bt_padded shapes=4096x4096x4096 -->
  ...
  <!-- end table -->

Kinds and their keys (lists are comma-separated, in the order of the rows or columns):
  progression                         every step of every chapter at its program's first shape
  timings  chapter kernels shapes [columns]
           columns from: kernel shape ms rate pct baseline_ms vs_prev (default: kernel ms rate
           pct vs_prev); rows are the kernels at each shape in turn
  pivot    chapter kernels shapes [value] [rows]
           one cell per kernel and shape; value: pct (default), ms or rate; rows: kernels
           (default) or shapes
  counters chapter kernels shape columns
           columns: names of counters.csv's columns (regs, occ_achieved%, lds_wavefronts, ...)
  waves    chapter kernels shapes bm bn
           per shape: the bm x bn output tiles, the waves they make on the GPU's SMs (from the
           CSV's device line), how many SMs the last wave keeps busy, then each kernel's % of
           its baseline
  dram     chapter kernels shapes
           per kernel (and the first one's baseline) and shape: ms, the DRAM bytes a GEMM must move at least (BF16 A and Bᵀ
           read once, FP32 C written once) per second, that as a % of the DRAM peak (bus width
           x memory clock x 2, from the CSV's device line), and the % of its baseline
--write regenerates every table; --check (a host test) fails where a table differs from what
its CSV gives, where a README has a date (tables included: the CSVs carry it), where it is
over its word budget
(a chapter 2,500 words, chapter 04 3,000, the top README 3,500), or where a chapter README's
sections are not Goal, What changes, Why, The code, Results, What limits it now, Exercises,
Reproduce.
"""
import argparse
import csv
import difflib
import glob
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
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


def caption(meta, name, what):
    """The table's source in one line. The date and the command are in the CSV's own header:
    a README carries no dates (the run histories are in the chapters' NOTES.md)."""
    return f"*{gpu_name(meta)}, CUDA {cuda_version(meta)}: `docs/results/{name}`{what}.*"


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
        self.results = results
        self.timings, self.tmeta = self._load("timings.csv")
        self.counters, self.cmeta = self._load("counters.csv")

    def _load(self, name):
        path = os.path.join(self.results, name)
        return read_csv(path) if os.path.exists(path) else ([], {})

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
                         f"skipped: {r['reason']}", "", "", ""])
            continue
        ms = float(r["ms"])
        key = (r["precision"], r["shape"])
        speed = f"{last[key] / ms:.2f}×" if key in last else ""
        last[key] = ms
        body.append([r["chapter"], f"`{r['kernel']}`", r["precision"], shape_name(r["shape"]),
                     fmt_ms(ms), f"{float(r['rate']):.1f} {r['unit']}",
                     f"{pct_cell(r)} of `{r['baseline']}`", speed])
    return [caption(data.tmeta, "timings.csv", "")] + [""] + table(
        ["chapter", "kernel", "precision", "shape", "ms", "rate", "% of baseline",
         "× previous step"], body)


def timings_table(data, o):
    chapter, kernels, shapes = o["chapter"], o["kernels"], o["shapes"]
    cols = o.get("columns", ["kernel", "ms", "rate", "pct", "vs_prev"])
    if len(shapes) > 1 and "shape" not in cols:
        cols = ["shape"] + cols
    body, baselines = [], set()
    for shape in shapes:
        prev = None
        for k in kernels:
            r = data.timing(chapter, k, shape)
            ms = float(r["ms"])
            baselines.add(r["baseline"])
            cells = {"kernel": f"`{k}`", "shape": shape_name(shape), "ms": fmt_ms(ms),
                     "rate": f"{float(r['rate']):.1f}", "pct": pct_cell(r),
                     "baseline_ms": fmt_ms(float(r["baseline_ms"])),
                     "vs_prev": f"{prev / ms:.2f}×" if prev else ""}
            body.append([cells[c] for c in cols])
            prev = ms
    unit = data.timing(chapter, kernels[0], shapes[0])["unit"]
    labels = {"kernel": "kernel", "shape": "shape", "ms": "ms", "rate": unit,
              "pct": "% of " + "/".join(f"`{b}`" for b in sorted(baselines)),
              "baseline_ms": "baseline ms", "vs_prev": "× previous row"}
    what = "" if len(shapes) > 1 else f", {shape_name(shapes[0])}"
    return [caption(data.tmeta, "timings.csv", what), ""] + table([labels[c] for c in cols], body)


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
    return [caption(data.tmeta, "timings.csv", f"; {what}"), ""] + table(head, body)


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
    return [caption(data.cmeta, "counters.csv", f", {shape_name(shape)}, one launch each"),
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
    return [caption(data.tmeta, "timings.csv", "; % of " + "/".join(f"`{b}`" for b in base)),
            ""] + table(head, body)


def dram_table(data, o):
    chapter, kernels, shapes = o["chapter"], o["kernels"], o["shapes"]
    peak = dram_peak_gbs(data.tmeta)
    body = []
    for s in shapes:
        M, N, K = (int(x) for x in s.split("x"))
        need = 2 * (M * K + N * K) + 4 * M * N
        rows = [(f"`{k}`", data.timing(chapter, k, s)) for k in kernels]
        first = rows[0][1]  # and its baseline, timed in the same process
        rows.append((f"`{first['baseline']}`", dict(ms=first["baseline_ms"], pct="100")))
        for name, r in rows:
            gbs = need / (float(r["ms"]) * 1e-3) / 1e9
            body.append([name, shape_name(s), fmt_ms(float(r["ms"])), f"{gbs:.0f}",
                         f"{100 * gbs / peak:.1f}%", pct_cell(r)])
    base = sorted({data.timing(chapter, k, s)["baseline"] for k in kernels for s in shapes})
    return [caption(data.tmeta, "timings.csv", f"; DRAM peak {peak:.0f} GB/s"), ""] + table(
        ["kernel", "shape", "ms", "GB/s (least bytes)", "% of DRAM peak",
         "% of " + "/".join(f"`{b}`" for b in base)], body)


def parse_opts(text):
    o = {}
    for part in text.split():
        k, _, v = part.partition("=")
        o[k] = v.split(",")
    o["chapter"] = o.get("chapter", [""])[0]
    return o


def render(kind, o, data):
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
            new = render(kind, o, data)
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
    if words > budget:
        problems.append(f"{rel}: {words} words, over its budget of {budget}")
    # A chapter README is the lesson, with the same sections everywhere, in this order.
    if os.path.dirname(path) != root:
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
    for path in readmes():
        for _, _, kind, o in blocks(open(path).read().split("\n")):
            if kind == "progression":
                need["progression"] = True
            elif kind in ("timings", "pivot", "waves", "dram"):
                need["timings"] |= {(o["chapter"], k, s) for k in o["kernels"] for s in o["shapes"]}
            elif kind == "counters":
                need["counters"] |= {(o["chapter"], k, o["shape"][0]) for k in o["kernels"]}
    return need


def selftest():
    """The check must fail on an edited table: edit one figure in a copy of the tree."""
    with tempfile.TemporaryDirectory() as tmp:
        for path in readmes():
            dst = os.path.join(tmp, os.path.relpath(path, ROOT))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(path, dst)
        target = None
        for path in readmes():
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
            return 1
        path, i = target
        dst = os.path.join(tmp, os.path.relpath(path, ROOT))
        lines = open(dst).read().split("\n")
        lines[i] = re.sub(r"(\d)\.(\d)", lambda m: f"{(int(m.group(1)) + 1) % 10}.{m.group(2)}",
                          lines[i], count=1)
        open(dst, "w").write("\n".join(lines))
        data = Data(os.path.join(ROOT, "docs", "results"))
        problems = process(dst, data, write=False, root=tmp)
        print(f"edited {os.path.relpath(path, ROOT)} line {i + 1}: {lines[i]}")
        print("\n".join(problems[:6]))
        ok = any("differs" in p for p in problems)
        print("selftest: the check " + ("fails on the edited table, as it must" if ok else
                                        "did NOT notice the edit"))
        return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("readmes", nargs="*")
    ap.add_argument("--results", default=os.path.join(ROOT, "docs", "results"))
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true")
    g.add_argument("--check", action="store_true")
    g.add_argument("--requests", action="store_true")
    g.add_argument("--selftest", action="store_true")
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    if args.requests:
        need = requests()
        for kind in ("timings", "counters"):
            for c, k, s in sorted(need[kind]):
                print(kind, c, k, s)
        return 0
    data = Data(args.results)
    problems = []
    for path in args.readmes or readmes():
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
