#!/usr/bin/env python3
"""Nsight Compute counters behind one chapter's claims, one row per kernel: time, DRAM and SM
throughput, the pipe that does the math (FMA for FP32, tensor for BF16), shared-memory
wavefronts and bank conflicts (loads incl. ldmatrix, stores, all), registers, occupancy, top warp stalls.

usage: tools/profile.py BUILD_DIR CHAPTER [OUT_DIR] [--shape MxNxK] [--only NAME,...]
       meson compile -C BUILD_DIR profile-PROGRAM     (the same, for one chapter program)
       tools/profile.py BUILD_DIR --tables [OUT_DIR]  what the README counters tables show,
                                                      into OUT_DIR/counters.csv (tools/tables.py)
       tools/profile.py BUILD_DIR --tables --record   the same into the GPU's record folder,
                                                      docs/results/<slug>/counters.csv (with
                                                      --only: those chapters' rows replaced)

CHAPTER is a folder name (04_coalesced) or a program (build/06_splitk/splitk_bf16, or
06_splitk/splitk_bf16 inside BUILD_DIR). The kernels come from the program
(`PROGRAM --list`): every step of the chapter, at the shape the program lists first unless
--shape says otherwise. Each kernel is profiled alone: `PROGRAM --kernel NAME --check --shapes
SHAPE` runs NAME once, inside an NVTX range named NAME, and ncu profiles the launches in that
range (--nvtx-include NAME/; a split-K launcher's two kernels are two rows). --clock-control
none leaves the clocks as the benchmarks see them.
"""
import argparse
import csv
import glob
import io
import os
import shutil
import subprocess
import sys

COMMON = {
    "time_ms": "gpu__time_duration.sum",
    "sm_ghz": "sm__cycles_elapsed.avg.per_second",
    "instructions": "smsp__inst_executed.sum",
    "gld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "gld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "dram_read_bytes": "dram__bytes_read.sum",
    "dram%": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm%": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "fma%": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "regs": "launch__registers_per_thread",
    "occ_theory%": "sm__maximum_warps_per_active_cycle_pct",
    "occ_achieved%": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "l2_read_sectors": "lts__t_sectors_op_read.sum",
    # The L2's write sectors that come from the SMs' L1TEX units (global stores and
    # reductions): what chapter 02's sector model counts. lts__t_sectors_op_write counts every
    # source unit, about 1.5x as many in chapter 02's transposes on the H100: kept apart.
    "l2_write_sectors": "lts__t_sectors_srcunit_tex_op_write.sum",
    "l2_write_sectors_all": "lts__t_sectors_op_write.sum",
}
# Warp instructions that use shared memory, to divide the wavefronts by: LDS of every width,
# LDSM (ldmatrix, which op_ld's wavefronts include), STS. docs/results/smem_model.csv predicts
# both (tests/smem_model.cu). A regex: a metric this ncu lacks is left out, not an error.
INST = r"regex:^smsp__inst_executed_op_(shared_ld|shared_st|ldsm)\.sum$"
INST_NAMES = {"smsp__inst_executed_op_shared_ld.sum": "lds_inst",
              "smsp__inst_executed_op_shared_st.sum": "sts_inst",
              "smsp__inst_executed_op_ldsm.sum": "ldsm_inst"}
# Kernels profiled with the caches kept (--cache-control none) and the whole program replayed
# for each pass (--replay-mode application), so a launch meets the L2 the launch before it
# left: chapter 06's reduction reads the workspace its GEMM has just written. Everywhere else
# ncu flushes the caches before every profiled kernel (its default), as the timer does.
KEEP_CACHE = {("06_splitk", "splitk_simt"), ("06_splitk", "splitk_mma")}
# Shared memory: wavefronts and bank conflicts of loads, stores and in all. ncu 2025.3 has no
# ldmatrix-only counter on sm_90; its op_ld counts ldmatrix too (on the H100, chapter 05's
# mma_tuned: 3.36e7 load wavefronts = 4 x its 8.39e6 ldmatrix.x4 instructions).
SMEM = [f"l1tex__data_{what}_mem_shared{op}.sum"
        for op in ("_op_ld", "_op_st", "")
        for what in ("pipe_lsu_wavefronts", "bank_conflicts_pipe_lsu")]
# Their short names in counters.csv (the README tables use these).
SMEM_NAMES = dict(zip(SMEM, ["lds_wavefronts", "lds_conflicts", "sts_wavefronts", "sts_conflicts",
                             "smem_wavefronts", "smem_conflicts"]))
TENSOR = "regex:^sm__pipe_tensor_op_.*_cycles_active.avg.pct_of_peak_sustained_active$"
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"


def program_of(build, chapter):
    for path in (chapter, os.path.join(build, chapter)):  # a program, or one inside BUILD
        if os.path.isfile(path):
            return [path]
    found = [p for p in sorted(glob.glob(os.path.join(build, chapter, "*")))
             if os.path.isfile(p) and os.access(p, os.X_OK)]
    return [p for p in found if subprocess.run([p, "--list"], capture_output=True).returncode == 0]


def registry(program):
    out = subprocess.run([program, "--list"], capture_output=True, text=True, check=True).stdout
    return [dict(zip(["name", "role", "baseline", "precision", "shape"], l.split()))
            for l in out.splitlines()]


def num(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return float("nan")


def profile(ncu, program, name, shape, out, keep_cache=False):
    cache = ["--cache-control", "none", "--replay-mode", "application"] if keep_cache else []
    cmd = [ncu, "--clock-control", "none"] + cache + [
           "--nvtx", "--nvtx-include", f"{name}/", "-c", "4",
           "--csv", "--page", "raw", "--metrics",
           ",".join(list(COMMON.values()) + SMEM) + f",{TENSOR},{INST}"
           + f",regex:^{STALL_PREFIX}.*{STALL_SUFFIX}$",
           program, "--kernel", name, "--check", "--shapes", shape]
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(out, f"ncu_{name}.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout + p.stderr)
    lines = [l for l in p.stdout.splitlines() if l.startswith('"')]
    if p.returncode != 0 or len(lines) < 3:
        sys.stderr.write(f"{name}: ncu failed (exit {p.returncode}); see {out}/ncu_{name}.log\n")
        return []
    table = list(csv.reader(io.StringIO("\n".join(lines))))
    header, units = table[0], table[1]
    rows = []
    for values in table[2:]:
        v, u = dict(zip(header, values)), dict(zip(header, units))
        r = {k: num(v.get(m, "")) for k, m in COMMON.items()}
        r["time_ms"] /= {"ns": 1e6, "us": 1e3, "usecond": 1e3, "nsecond": 1e6}.get(
            u.get(COMMON["time_ms"], "ms"), 1)
        ghz = {"cycle/nsecond": 1, "cycle/usecond": 1e-3, "cycle/msecond": 1e-6,
               "cycle/second": 1e-9}.get(u.get(COMMON["sm_ghz"], ""), float("nan"))
        r["sm_ghz"] *= ghz
        for m in SMEM:
            r[m] = num(v.get(m, ""))
            r[SMEM_NAMES[m]] = r[m]
        for m, short in INST_NAMES.items():
            r[short] = num(v.get(m, ""))
        r["cache"] = "kept" if keep_cache else "flushed"
        tensor = [num(v[k]) for k in header if k.startswith("sm__pipe_tensor_op_")
                  and k.endswith(".avg.pct_of_peak_sustained_active")]
        r["tensor%"] = max([t for t in tensor if t == t], default=float("nan"))
        stalls = {k[len(STALL_PREFIX):-len(STALL_SUFFIX)]: num(v[k]) for k in header
                  if k.startswith(STALL_PREFIX) and k.endswith(STALL_SUFFIX)
                  and "not_issued" not in k}
        for k, x in stalls.items():
            r["stall_" + k] = x
        top = sorted(((x, k) for k, x in stalls.items() if x == x), reverse=True)[:2]
        r["top_stalls"] = " ".join(f"{k}:{x:.1f}" for x, k in top)
        r["function"] = v.get("Kernel Name", "")[:40]
        rows.append(r)
    return rows


STALLS = ["long_scoreboard", "short_scoreboard", "barrier", "mio_throttle", "lg_throttle",
          "not_selected", "selected", "math_pipe_throttle", "wait", "dispatch_stall",
          "no_instruction", "membar", "sleeping", "branch_resolving", "drain", "imc_miss",
          "tex_throttle", "misc"]
CSV_COLS = ["chapter", "kernel", "shape", "launch", "function", "time_ms", "sm_ghz", "dram%",
            "sm%", "fma%", "tensor%", "regs", "occ_theory%", "occ_achieved%", "instructions",
            "lds_wavefronts", "lds_conflicts", "sts_wavefronts", "sts_conflicts",
            "smem_wavefronts", "smem_conflicts", "lds_inst", "ldsm_inst", "sts_inst",
            "gld_requests", "gld_sectors", "l2_read_sectors", "l2_write_sectors",
            "l2_write_sectors_all", "dram_read_bytes", "cache", "top_stalls"] + \
           ["stall_" + k for k in STALLS]


def tables_run(args, ncu):
    """--tables: every (chapter, kernel, shape) a README counters table asks for, into one CSV
    (OUT/counters.csv) whose first lines name the GPU, the date and the command."""
    import datetime
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tables
    need = sorted(tables.requests()["counters"])
    only = set(filter(None, args.only.split(",")))  # with --tables: chapters
    if only:
        need = [n for n in need if n[0] in only]
    out = args.out or os.path.join(args.build, "profile")  # the ncu logs, and the CSV
    os.makedirs(out, exist_ok=True)                         # unless --record
    where = {}
    for program in sorted(glob.glob(os.path.join(args.build, "[0-9][0-9]_*", "*"))):
        if os.path.isfile(program) and os.access(program, os.X_OK):
            p = subprocess.run([program, "--list"], capture_output=True, text=True)
            if p.returncode == 0:
                for e in registry(program):
                    where[(os.path.basename(os.path.dirname(program)), e["name"])] = program
    rows, device = [], ""
    for i, (chapter, kernel, shape) in enumerate(need, 1):
        if (chapter, kernel) not in where:
            sys.exit(f"a README table asks for {chapter} {kernel}, which no program lists")
        print(f"[{i}/{len(need)}] {chapter} {kernel} {shape}", flush=True)
        program = where[(chapter, kernel)]
        if not device:
            p = subprocess.run([program, "--check", "--kernel", kernel, "--shapes", "1x1x1"
                                if shape.count("x") == 2 else "1x1"], capture_output=True,
                               text=True)
            device = next((l for l in p.stdout.splitlines() if l.startswith("GPU ")), "")
        for n, r in enumerate(profile(ncu, program, kernel, shape, out,
                                      keep_cache=(chapter, kernel) in KEEP_CACHE), 1):
            r.update(chapter=chapter, kernel=kernel, shape=shape, launch=n)
            rows.append(r)
    meta = {"device": device, "date": datetime.date.today().isoformat(),
            "command": "tools/profile.py BUILD --tables" +
                       (f" --only {args.only}" if args.only else "")}
    if args.record and device:
        path = tables.save_record(device, "counters.csv", rows, CSV_COLS, meta, only)
    else:
        path = os.path.join(out, "counters.csv")
        if args.record:  # keep what was measured; no name for a record folder
            print(f"no device line from the programs: written to {path}, not to a record")
        tables.write_csv(path, rows, CSV_COLS, meta)
    print(f"{len(rows)} launches: {path}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("chapter", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--tables", action="store_true",
                    help="profile what the README counters tables ask for, into OUT/counters.csv")
    ap.add_argument("--record", action="store_true",
                    help="with --tables: into the GPU's record, docs/results/<slug>/counters.csv")
    ap.add_argument("--shape", help="MxNxK (or RxC for chapter 02); default: the program's")
    ap.add_argument("--only", default="")
    args = ap.parse_intermixed_args()
    if args.record and (not args.tables or args.chapter):
        ap.error("--record goes with --tables and no OUT_DIR")
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    if not os.path.exists(ncu):
        sys.exit("ncu (Nsight Compute) not found")
    if args.tables:
        if args.chapter:  # tools/profile.py BUILD --tables OUT
            args.out = args.chapter
        return tables_run(args, ncu)
    if not args.chapter:
        ap.error("CHAPTER is needed (or --tables)")
    programs = program_of(args.build, args.chapter)
    if not programs:
        sys.exit(f"no chapter program for {args.chapter} in {args.build} (build first)")
    out = args.out or os.path.join(args.build, "profile", os.path.basename(args.chapter))
    os.makedirs(out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))

    results = []
    for program in programs:
        for e in registry(program):
            if (only and e["name"] not in only) or (not only and e["role"] not in ("step", "best")):
                continue
            shape = args.shape or e["shape"]
            launches = profile(ncu, program, e["name"], shape, out)
            for i, r in enumerate(launches):
                name = e["name"] + (f" [{i + 1}/{len(launches)}]" if len(launches) > 1 else "")
                r.update(kernel=name, precision=e["precision"], shape=shape)
                results.append(r)
    if not results:
        return 1
    cols = ["kernel", "function", "shape", "time_ms", "dram%", "sm%", "fma%", "tensor%"] + SMEM + \
           ["l2_read_sectors", "l2_write_sectors", "regs", "occ_theory%", "occ_achieved%",
            "top_stalls"]
    with open(os.path.join(out, "profile.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(results)

    bf16 = any(r["precision"] == "bf16" for r in results)
    pipe = "tensor%" if bf16 else "fma%"
    print(f"Nsight Compute, --clock-control none; {results[0]['shape']}; stalls: warps stalled "
          "per issued instruction; smem: wavefronts / bank conflicts")
    print(f"{'kernel':<22} {'ms':>8} {'DRAM%':>6} {'SM%':>5} {pipe:>8} {'LD wavef/confl':>17} "
          f"{'STS wavef/confl':>17} {'all wavef/confl':>17} {'regs':>4} {'occ%':>5}  top stalls")
    for r in results:
        smem = [f"{r[SMEM[i]]:.3g}/{r[SMEM[i + 1]]:.3g}" for i in (0, 2, 4)]
        print(f"{r['kernel']:<22} {r['time_ms']:8.3f} {r['dram%']:6.1f} {r['sm%']:5.1f} "
              f"{r[pipe]:8.1f} {smem[0]:>17} {smem[1]:>17} {smem[2]:>17} {r['regs']:4.0f} "
              f"{r['occ_achieved%']:5.1f}  {r['top_stalls']}")
    print(f"CSV and ncu logs: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
