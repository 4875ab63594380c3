#!/usr/bin/env bash
# Nsight Compute counters behind chapter 02's claims, one row per kernel at 8192 x 8192 (or
# ROWSxCOLS): bank conflicts and wavefronts (loads, stores), DRAM and SM throughput, L2 writes.
#
# usage: 02_transpose_copy/profile.sh BUILD_DIR [OUT_DIR [ROWSxCOLS]]
#   BUILD_DIR  the Meson build directory (it holds 02_transpose_copy/transpose)
#   OUT_DIR    where the results go (default BUILD_DIR/02_transpose_copy/profile):
#              NAME.ncu-rep  the full report of each kernel (open it with ncu-ui)
#              NAME.log      the program's and ncu's output
#              NAME.csv      the raw counters, as `ncu --import NAME.ncu-rep --page raw --csv`
#              summary.csv   the table printed at the end
#
# Each kernel is profiled alone: `transpose --kernel NAME --check --shapes 8192x8192` runs the
# input fill, then NAME exactly once, and ncu profiles the one launch whose name matches (-k,
# -c 1).
# --clock-control none leaves the GPU's clocks as the benchmark sees them (ncu would otherwise
# lock them to base clock). Reading the counters needs permission: run as root, or see
# https://developer.nvidia.com/ERR_NVGPUCTRPERM.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 || $1 == -h || $1 == --help ]]; then
  echo "usage: $0 BUILD_DIR [OUT_DIR [ROWSxCOLS]]" >&2
  exit 2
fi
build=$1
out=${2:-$build/02_transpose_copy/profile}
prog=$build/02_transpose_copy/transpose
if [[ ! -x $prog ]]; then
  echo "$0: no program at $prog (build first: meson compile -C $build)" >&2
  exit 2
fi
ncu=$(command -v ncu || true)
[[ -z $ncu && -x /usr/local/cuda/bin/ncu ]] && ncu=/usr/local/cuda/bin/ncu
if [[ -z $ncu ]]; then
  echo "$0: ncu (Nsight Compute) not found in PATH" >&2
  exit 2
fi
mkdir -p "$out"

shape=${3:-8192x8192}  # the matrix profiled (default 8192 x 8192)
metrics=(
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  sm__throughput.avg.pct_of_peak_sustained_elapsed
  gpu__time_duration.sum
  lts__t_sectors_srcunit_tex_op_write.sum
)
metric_list=$(IFS=,; echo "${metrics[*]}")

# CLI name -> regex for ncu's -k (matched against the kernel's function name). memcpy is left
# out: a cudaMemcpy is a driver operation, not a kernel, and ncu does not profile it. The name
# of cuBLAS's kernel is not ours to choose; its transposing geam has been seen as
# transpose_readWrite_alignment_kernel<...>, and only it and fill_random run under this command.
names=(copy_tiled copy_vec cublas_geam transpose_naive transpose_smem transpose_padded
       transpose_swizzled transpose_tall)
declare -A regex=(
  [copy_tiled]=copy_tiled_kernel
  [copy_vec]=copy_vec_kernel
  [cublas_geam]='.*(geam|transpose).*'
  [transpose_naive]=transpose_naive_kernel
  [transpose_smem]=transpose_tiled_kernel
  [transpose_padded]=transpose_tiled_kernel
  [transpose_swizzled]=transpose_tiled_kernel
  [transpose_tall]=transpose_tall_kernel
)

status=0
for name in "${names[@]}"; do
  echo "profiling $name ..." >&2
  rm -f "$out/$name.ncu-rep" "$out/$name.csv"
  if ! "$ncu" --clock-control none -k "regex:${regex[$name]}" -c 1 \
      --metrics "$metric_list" -f -o "$out/$name" \
      "$prog" --kernel "$name" --check --shapes "$shape" >"$out/$name.log" 2>&1; then
    echo "$0: ncu failed for $name; the end of $out/$name.log:" >&2
    tail -n 5 "$out/$name.log" >&2
    status=1
    continue
  fi
  if [[ ! -f $out/$name.ncu-rep ]]; then
    echo "$0: no kernel matched regex:${regex[$name]} for $name (see $out/$name.log)" >&2
    status=1
    continue
  fi
  if ! "$ncu" --import "$out/$name.ncu-rep" --page raw --csv --print-units base \
      >"$out/$name.csv" 2>>"$out/$name.log"; then
    echo "$0: could not read back $out/$name.ncu-rep (see $out/$name.log)" >&2
    status=1
  fi
done

# Condense the per-kernel CSVs into one table.
python3 - "$out" "$shape" "$metric_list" "${names[@]}" <<'PY'
import csv
import os
import sys

out, shape, metric_list, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows_, cols_ = (int(x) for x in shape.split("x"))
metrics = metric_list.split(",")
columns = [  # (header, metric, scale from ncu's base unit, format)
    ("ld conflicts", metrics[0], 1, "{:.0f}"),
    ("st conflicts", metrics[1], 1, "{:.0f}"),
    ("ld wavefronts", metrics[2], 1, "{:.0f}"),
    ("st wavefronts", metrics[3], 1, "{:.0f}"),
    ("DRAM %", metrics[4], 1, "{:.1f}"),
    ("SM %", metrics[5], 1, "{:.1f}"),
    ("time (us)", metrics[6], 1e-3, "{:.1f}"),  # base unit: ns
    ("L2 write sectors", metrics[7], 1, "{:.0f}"),
]


def number(text):
    text = text.strip().replace(",", "")  # ncu may print thousands separators
    try:
        return float(text)
    except ValueError:
        return None


def read_report(path):
    """The first profiled kernel of an `ncu --page raw --csv` file: {column: text}."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = next((i for i, r in enumerate(rows) if "Kernel Name" in r and "ID" in r), None)
    if header is None:
        return None
    head = rows[header]
    for r in rows[header + 1:]:
        rec = dict(zip(head, r))
        if rec.get("ID", "").strip().isdigit():  # the row after the header holds units
            return rec
    return None


table = []
for name in names:
    path = os.path.join(out, name + ".csv")
    rec = read_report(path) if os.path.exists(path) else None
    if rec is None:
        table.append([name, "(not profiled)"] + ["-"] * len(columns))
        continue
    row = [name, rec.get("Kernel Name", "?")]
    for _, metric, scale, fmt in columns:
        v = number(rec[metric]) if metric in rec else None
        row.append(fmt.format(v * scale) if v is not None else "n/a")
    table.append(row)

head = ["kernel", "profiled function"] + [c[0] for c in columns]
for row in table:  # long cuBLAS names: keep the function name, drop template arguments
    row[1] = row[1].split("<")[0].split("(")[0].replace("void ", "")[:40]
width = [max(len(str(r[i])) for r in [head] + table) for i in range(len(head))]
line = lambda r: "  ".join(str(v).ljust(width[i]) if i < 2 else str(v).rjust(width[i])
                           for i, v in enumerate(r))
print(f"\nNsight Compute, {rows_} x {cols_} FP32, one launch per kernel (--clock-control none)")
print(line(head))
for row in table:
    print(line(row))
ideal = rows_ * cols_ // 32
print(f"\nA warp instruction moves 32 floats, so each tile phase of a transpose is about "
      f"{rows_}*{cols_}/32 = {ideal:,} warp instructions:\n{ideal:,} wavefronts is the ideal, "
      f"32x that a 32-way conflict (the conflict counters count the extra wavefronts).\n"
      f"The matrix fills {rows_ * cols_ * 4 // 32:,} sectors of 32 bytes: the fewest L2 write sectors.")
print("memcpy is not a kernel (a driver copy); ncu does not profile it.")

with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["kernel", "function"] + [c[1] for c in columns])
    w.writerows(table)
print(f"\nreports, raw CSVs and summary.csv in {out}")
PY
exit $status
