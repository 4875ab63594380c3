#!/usr/bin/env python3
"""Nsight Compute counters behind the GEMM chapters' claims, one row per kernel:
DRAM and SM throughput, shared-memory bank conflicts and wavefronts, the top warp-stall
reason, registers and occupancy.

usage: tools/profile_gemm.py BUILD_DIR [OUT_DIR] [--size S] [--only NAME,...]

Each kernel is profiled alone: `PROGRAM --kernel NAME --check --size S` fills the inputs,
computes the cuBLAS reference, then runs NAME exactly once; ncu profiles that one launch (-k
matches our kernel's function name, -c 1). --clock-control none leaves the GPU's clocks as
the benchmarks see them.
"""
import argparse
import csv
import io
import os
import shutil
import subprocess
import sys

# (program, CLI kernel name, kernel function name for ncu -k)
KERNELS = [
    ("01_naive/naive", "naive_uncoalesced", "naive_uncoalesced_kernel"),
    ("01_naive/naive", "naive_coalesced", "naive_coalesced_kernel"),
    ("03_tiled/tiled", "tiled_smem", "tiled_smem_kernel"),
    ("03_tiled/tiled", "tiled_1d", "tiled_1d_kernel"),
    ("03_tiled/tiled", "tiled_2d", "tiled_2d_kernel"),
    ("04_coalesced/coalesced", "tiled_bt_trap", "tiled_bt_kernel"),
    ("04_coalesced/coalesced", "tiled_bt_padded", "tiled_bt_kernel"),
    ("04_coalesced/coalesced", "tiled_bt_swizzled", "tiled_bt_kernel"),
    ("04_coalesced/coalesced", "simt", "simt_kernel"),
    ("04_coalesced/coalesced", "simt_bt", "simt_kernel"),
]

METRICS = {
    "dram%": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm%": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "fma%": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "lds_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "lds_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "sts_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "sts_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "regs": "launch__registers_per_thread",
    "occ_theory%": "sm__maximum_warps_per_active_cycle_pct",
    "occ_achieved%": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "time_ms": "gpu__time_duration.sum",
}
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"


def profile(ncu, build, out, program, name, func, size):
    cmd = [ncu, "--clock-control", "none", "-k", f"regex:^{func}", "-c", "1", "--csv",
           "--page", "raw", "--metrics",
           ",".join(METRICS.values()) + f",regex:{STALL_PREFIX}.*{STALL_SUFFIX}",
           os.path.join(build, program), "--kernel", name, "--check", "--size", str(size)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(out, f"ncu_{name}.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout + p.stderr)
    # ncu's CSV: a header row of metric names, a row of units, then one row per kernel.
    lines = [l for l in p.stdout.splitlines() if l.startswith('"')]
    if p.returncode != 0 or len(lines) < 3:
        sys.stderr.write(f"{name}: ncu failed (exit {p.returncode}); see ncu_{name}.log\n")
        return None
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header, units, values = rows[0], rows[1], rows[2]
    v = dict(zip(header, values))
    u = dict(zip(header, units))

    def num(key):
        s = v.get(key, "").replace(",", "")
        try:
            return float(s)
        except ValueError:
            return float("nan")

    r = {k: num(m) for k, m in METRICS.items()}
    if u.get(METRICS["time_ms"]) == "ns":
        r["time_ms"] /= 1e6
    elif u.get(METRICS["time_ms"]) == "us":
        r["time_ms"] /= 1e3
    elif u.get(METRICS["time_ms"]) == "ms":
        pass
    stalls = {k[len(STALL_PREFIX):-len(STALL_SUFFIX)]: num(k) for k in header
              if k.startswith(STALL_PREFIX) and k.endswith(STALL_SUFFIX)
              and "not_issued" not in k}
    top = sorted(((x, k) for k, x in stalls.items() if x == x), reverse=True)[:2]
    r["top_stalls"] = " ".join(f"{k}:{x:.1f}" for x, k in top)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("out", nargs="?", default="profile")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    os.makedirs(args.out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))

    cols = ["kernel", "time_ms", "dram%", "sm%", "fma%", "lds_conflicts", "lds_wavefronts",
            "sts_conflicts", "sts_wavefronts", "regs", "occ_theory%", "occ_achieved%",
            "top_stalls"]
    results = []
    for program, name, func in KERNELS:
        if only and name not in only:
            continue
        r = profile(ncu, args.build, args.out, program, name, func, args.size)
        if r:
            r["kernel"] = name
            results.append(r)
    with open(os.path.join(args.out, "profile_gemm.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(results)
    print(f"Nsight Compute, M = N = K = {args.size}, --clock-control none "
          "(stalls: warps stalled per issued instruction)")
    print(f"{'kernel':<18} {'ms':>8} {'DRAM%':>6} {'SM%':>5} {'FMA%':>5} {'LDS confl':>11} "
          f"{'LDS wavef':>11} {'STS confl':>10} {'STS wavef':>10} {'regs':>4} {'occ%':>5}  top stalls")
    for r in results:
        print(f"{r['kernel']:<18} {r['time_ms']:8.3f} {r['dram%']:6.1f} {r['sm%']:5.1f} "
              f"{r['fma%']:5.1f} {r['lds_conflicts']:11.3g} {r['lds_wavefronts']:11.3g} "
              f"{r['sts_conflicts']:10.3g} {r['sts_wavefronts']:10.3g} {r['regs']:4.0f} "
              f"{r['occ_achieved%']:5.1f}  {r['top_stalls']}")
    return 0 if len(results) == (len(only) if only else len(KERNELS)) else 1


if __name__ == "__main__":
    sys.exit(main())
