#!/usr/bin/env python3
"""What ptxas made of every kernel: registers, stack and spills, and SASS instruction counts,
one row per kernel of every chapter program (or of the programs given). No GPU needed, only
cuobjdump (and nvdisasm, which it calls) from the CUDA toolkit.

usage: tools/sass_report.py BUILD_DIR [PROGRAM ...] [--arch sm_90] [--csv FILE]
       tools/sass_report.py --compare BEFORE.csv AFTER.csv [--map OLD=NEW ...]
       tools/sass_report.py --lines KERNEL OPCODES PROGRAM [--arch sm_90]
       tools/sass_report.py BUILD_DIR --text FILE [--arch sm_90]

A row: program, kernel (demangled), registers, stack bytes, local (spill) bytes, static shared
bytes, instructions, and the counts of the opcodes the chapters talk about (FFMA, HMMA, LDS,
LDSM, LDGSTS, ...). --compare lines two such CSVs up by kernel name (after --map renames) and
prints every kernel whose registers or instruction counts differ: a kernel whose code did not
change should not move. --lines prints the SASS lines, without their encodings, of every
kernel whose demangled name contains KERNEL and whose opcode matches the regex OPCODES: e.g.
`--lines 'tiled_bt_kernel<(BtLayout)0>' 'LDS|STS' build/04_coalesced/coalesced`, chapter 04's
merged loads. --text writes the SASS of every kernel of every program, without encodings, one
block per kernel sorted by name (a kernel that several programs link appears once): two such
files from builds before and after a change are equal exactly when no kernel's code moved, as
when headers move to shared/ (`cmp before.txt after.txt`).
"""
import argparse
import csv
import glob
import os
import re
import subprocess
import sys

OPCODES = ["FFMA", "HMMA", "HGMMA", "LDS", "LDSM", "STS", "LDG", "STG", "LDGSTS", "UTMALDG",
           "BAR", "SYNCS", "SHFL", "BRA"]


def programs_in(build):
    found = []
    for path in sorted(glob.glob(os.path.join(build, "[0-9][0-9]_*", "*"))):
        if os.path.isfile(path) and os.access(path, os.X_OK) and not path.endswith(".so"):
            found.append(path)
    return found


def demangle(names):
    if not names:
        return {}
    p = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return dict(zip(names, p.stdout.splitlines()))


def resources(program, arch):
    """{mangled: {regs, stack, local, shared}} from cuobjdump --dump-resource-usage."""
    out = subprocess.run(["cuobjdump", "--dump-resource-usage", program], capture_output=True,
                         text=True).stdout
    res, cur_arch, fn = {}, None, None
    for line in out.splitlines():
        m = re.match(r"\s*arch = (\S+)", line)
        if m:
            cur_arch = m.group(1)
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            fn = m.group(1)
        m = re.match(r"\s*REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", line)
        if m and fn and cur_arch and cur_arch.rstrip("a") == arch.rstrip("a"):
            res[fn] = dict(regs=int(m.group(1)), stack=int(m.group(2)), shared=int(m.group(3)),
                           local=int(m.group(4)))
    return res


def sass(program, arch):
    """{mangled: [(opcode, instruction text without its encoding), ...]} from cuobjdump -sass,
    in program order, NOPs left out."""
    out = subprocess.run(["cuobjdump", "-sass", "-arch", arch, program], capture_output=True,
                         text=True).stdout
    functions, fn = {}, None
    for line in out.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            fn = m.group(1)
            functions[fn] = []
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+((?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)[^;]*?)\s*;",
                     line)
        if m and fn and m.group(2) != "NOP":
            functions[fn].append((m.group(2), m.group(1)))
    return functions


def sass_counts(program, arch):
    """{mangled: {instructions, OPCODE: count}} from cuobjdump -sass."""
    counts = {}
    for fn, instructions in sass(program, arch).items():
        c = counts[fn] = {"instructions": len(instructions), **{op: 0 for op in OPCODES}}
        for op, _ in instructions:
            if op in c:
                c[op] += 1
    return counts


def lines(program, kernel, opcodes, arch):
    """The SASS lines of the kernels whose demangled name contains `kernel`, opcode matching."""
    functions = sass(program, arch)
    names = demangle(sorted(functions))
    found = 0
    for mangled in sorted(functions, key=lambda n: names.get(n, n)):
        if kernel in names.get(mangled, mangled):
            found += 1
            print(names.get(mangled, mangled))
            for op, text in functions[mangled]:
                if re.fullmatch(opcodes, op):
                    print("    " + text)
    return 0 if found else 1


def report(build, programs, arch):
    rows = []
    for program in programs or programs_in(build):
        res, cnt = resources(program, arch), sass_counts(program, arch)
        names = demangle(sorted(set(res) | set(cnt)))
        for mangled in sorted(set(res) | set(cnt), key=lambda n: names.get(n, n)):
            r = dict(program=os.path.relpath(program, build), kernel=names.get(mangled, mangled))
            r.update(res.get(mangled, {}))
            r.update(cnt.get(mangled, {}))
            rows.append(r)
    return rows


def text(build, arch, path):
    kernels = {}
    for program in programs_in(build):
        functions = sass(program, arch)
        names = demangle(sorted(functions))
        for mangled, instructions in functions.items():
            kernels.setdefault(names.get(mangled, mangled), [t for _, t in instructions])
    with open(path, "w") as f:
        for name in sorted(kernels):
            f.write(f"== {name}\n" + "".join(f"    {t}\n" for t in kernels[name]))
    print(f"{len(kernels)} kernels -> {path}")
    return 0


def compare(before, after, renames):
    def load(path):
        with open(path) as f:
            return {r["kernel"]: r for r in csv.DictReader(f)}
    old, new = load(before), load(after)
    for a, b in renames:
        old = {k.replace(a, b): v for k, v in old.items()}
    keys = ["regs", "local", "instructions"] + OPCODES
    moved = same = 0
    for k in sorted(set(old) & set(new)):
        diff = {c: (old[k].get(c), new[k].get(c)) for c in keys if old[k].get(c) != new[k].get(c)}
        if diff:
            moved += 1
            print(f"{k}:")
            for c, (x, y) in diff.items():
                print(f"    {c}: {x} -> {y}")
        else:
            same += 1
    print(f"{same} kernels unchanged, {moved} changed; "
          f"{len(set(old) - set(new))} only before, {len(set(new) - set(old))} only after")
    for k in sorted(set(old) - set(new)):
        print(f"  only before: {k}")
    for k in sorted(set(new) - set(old)):
        print(f"  only after:  {k}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?")
    ap.add_argument("programs", nargs="*")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--csv")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--map", action="append", default=[], help="OLD=NEW: rename in BEFORE")
    ap.add_argument("--lines", nargs=2, metavar=("KERNEL", "OPCODES"))
    ap.add_argument("--text", metavar="FILE")
    args = ap.parse_args()
    if args.lines:
        if not args.build:
            ap.error("--lines needs a PROGRAM")
        return lines(args.build, args.lines[0], args.lines[1], args.arch)
    if args.compare:
        return compare(*args.compare, [tuple(m.split("=", 1)) for m in args.map])
    if not args.build:
        ap.error("BUILD_DIR is needed")
    if args.text:
        return text(args.build, args.arch, args.text)
    rows = report(args.build, args.programs, args.arch)
    cols = ["program", "kernel", "regs", "stack", "local", "shared", "instructions"] + OPCODES
    out = open(args.csv, "w", newline="") if args.csv else sys.stdout
    w = csv.DictWriter(out, fieldnames=cols, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
