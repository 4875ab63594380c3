#!/usr/bin/env bash
# The recorded run behind the READMEs' tables, on the GPU(s) at hand, into one record folder:
# the ceilings (tools/ceilings), every step's timing (tools/progression.py --sizes --tables),
# the Nsight Compute counters the tables ask for (tools/profile.py --tables) and the two L2
# flushes (tools/flush_compare.py), then the plots.
#
# usage: tools/record.sh BUILD OUT [STAGE...]
#   stages: ceilings timings counters flush plots   (default: all, in that order)
#   OUT: the record folder, docs/results/<gpu> (tools/tables.py --slug "$(BUILD/01_naive/naive
#        --list >/dev/null; ...)" names it; e.g. docs/results/h200)
#
# With several GPUs visible (nvidia-smi -L), the chapters are dealt out among them and run at
# the same time, each chapter on one GPU: every row is still a kernel and its baseline timed in
# one process on one GPU, and a chapter's rows share a GPU. The parts' CSVs are merged into
# OUT/timings.csv and OUT/counters.csv, whose command line says which chapters ran where.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then sed -n '2,15p' "$0"; exit 2; fi
build=$1
out=$2
shift 2
stages=${*:-ceilings timings counters flush plots}
mkdir -p "$out/parts"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || { echo "record.sh: no GPU (nvidia-smi -L lists none)" >&2; exit 77; }

# The chapters, dealt out by their number of rows (08 has the most), largest first.
groups=("08_hopper" "06_splitk,07_pipelined" "04_coalesced,05_tensorcore"
        "01_naive,02_transpose_copy,03_tiled")
if [ "$gpus" -eq 1 ]; then
  groups=("01_naive,02_transpose_copy,03_tiled,04_coalesced,05_tensorcore,06_splitk,07_pipelined,08_hopper")
elif [ "$gpus" -eq 2 ]; then
  groups=("08_hopper,01_naive" "02_transpose_copy,03_tiled,04_coalesced,05_tensorcore,06_splitk,07_pipelined")
elif [ "$gpus" -eq 3 ]; then
  groups=("08_hopper" "06_splitk,07_pipelined,01_naive" "02_transpose_copy,03_tiled,04_coalesced,05_tensorcore")
fi

# Runs one part per group, group g on GPU g mod gpus, all at once; waits for every part.
parallel() {  # parallel NAME COMMAND...   (COMMAND gets --only GROUP appended)
  local name=$1 pids=() g=0 status=0
  shift
  for grp in "${groups[@]}"; do
    local dir="$out/parts/$name$g"
    mkdir -p "$dir"
    CUDA_VISIBLE_DEVICES=$((g % gpus)) "$@" "$dir" --only "$grp" >"$dir/log.txt" 2>&1 &
    pids+=($!)
    g=$((g + 1))
  done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  return $status
}

merge() {  # merge NAME CSV: the parts' CSVs into OUT/CSV, in chapter order
  python3 - "$out" "$1" "$2" "${groups[@]}" <<'PY'
import os, sys
sys.path.insert(0, "tools")
import tables
out, name, csvname, groups = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows, metas, fields = [], [], None
for g, grp in enumerate(groups):
    path = os.path.join(out, "parts", f"{name}{g}", csvname)
    r, meta = tables.read_csv(path)
    with open(path) as f:
        fields = fields or next(l for l in f if not l.startswith("#")).strip().split(",")
    rows += r
    metas.append((grp, meta))
names = {tables.gpu_name(m) for _, m in metas}
if len(names) != 1:
    sys.exit(f"the parts ran on different kinds of GPU: {names}")
rows.sort(key=lambda r: r["chapter"])
parts = "; ".join(f"--only {grp} on GPU {g} ({m.get('command', '?')})"
                  for g, (grp, m) in enumerate(metas))
meta = {"device": metas[0][1]["device"], "date": metas[0][1]["date"],
        "command": f"tools/record.sh BUILD OUT: {len(groups)} parts at once, each chapter's rows "
                   f"on one GPU of the machine: {parts}"}
tables.write_csv(os.path.join(out, csvname), rows, fields, meta)
print(f"{len(rows)} rows: {os.path.join(out, csvname)}")
PY
}

status=0
for stage in $stages; do
  case $stage in
    ceilings)
      CUDA_VISIBLE_DEVICES=0 "$build/tools/ceilings/ceilings" --csv "$out/ceilings.csv" || status=1
      ;;
    timings)
      parallel timings python3 tools/progression.py --build "$build" --sizes --tables --out \
        || status=1
      merge timings timings.csv || status=1
      ;;
    counters)
      parallel counters python3 tools/profile.py "$build" --tables || status=1
      merge counters counters.csv || status=1
      ;;
    flush)
      CUDA_VISIBLE_DEVICES=0 python3 tools/flush_compare.py --build "$build" \
        --out "$out/flush.csv" || status=1
      ;;
    plots)
      python3 tools/plot_progression.py "$out" || status=1
      ;;
    *) echo "record.sh: unknown stage $stage" >&2; exit 2 ;;
  esac
done
exit $status
