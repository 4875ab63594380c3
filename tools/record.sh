#!/usr/bin/env bash
# The recorded run behind the READMEs' tables, on the GPU(s) at hand, into one record folder:
# every step's timing (tools/progression.py --sizes --tables), the Nsight Compute counters the
# tables ask for (tools/profile.py --tables), the ceilings (tools/ceilings), the two L2 flushes
# (tools/flush_compare.py), chapters 10 and 11's errors (tools/fp8_errors.sh), then the plots.
#
# usage: tools/record.sh BUILD OUT [STAGE...]
#   stages: timings counters ceilings flush   (default: all four); the plots are drawn last
#   OUT: the record folder, docs/results/<gpu>: `tools/tables.py --slug "$(BUILD/01_naive/naive
#        --list >/dev/null; nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"`
#        names it (h100, h200, ...)
#   The GPUs: those in CUDA_VISIBLE_DEVICES, else every one nvidia-smi -L lists.
#
# The chapters are dealt out in four groups, 09 alone in the first (it has the most rows). Each
# group runs on one GPU, its timings and then its counters, all groups at once (group g on the
# g-th GPU; with fewer GPUs than groups, one group after another); the flushes and the ceilings
# follow on two of the groups' GPUs, so nothing else runs on a GPU while it is timed.
# Every row is still a kernel and its baseline timed in one process on one GPU, and a chapter's
# rows share a GPU. The parts' CSVs are merged into OUT/timings.csv and OUT/counters.csv, whose
# command line says which chapters ran on which GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then sed -n '2,19p' "$0"; exit 2; fi
build=$1
out=$2
shift 2
stages=" ${*:-timings counters ceilings flush} "
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  IFS=, read -r -a gpus <<<"$CUDA_VISIBLE_DEVICES"
else
  mapfile -t gpus < <(nvidia-smi -L 2>/dev/null | sed -n 's/^GPU \([0-9]*\):.*/\1/p')
fi
[ "${#gpus[@]}" -ge 1 ] || { echo "record.sh: no GPU (nvidia-smi -L lists none)" >&2; exit 77; }
groups=("09_every_shape" "06_splitk,10_fp8_epilogue,11_block_scales"
        "04_coalesced,05_tensorcore,08_hopper" "01_naive,02_transpose_copy,03_tiled,07_pipelined")
flush_group=2  # the flushes after group 2's counters; the ceilings after the last group's
mkdir -p "$out/parts"

# One group's pipeline on one GPU: its timings, then its counters (and, for the last group, the
# ceilings and the flushes).
run_group() {  # run_group INDEX GPU
  local g=$1 dev=$2 grp=${groups[$1]} status=0
  export CUDA_VISIBLE_DEVICES=$dev
  if [[ $stages == *" timings "* ]]; then
    python3 tools/progression.py --build "$build" --sizes --tables --resume \
      --out "$out/parts/timings$g" --only "$grp" >>"$out/parts/timings$g.log" 2>&1 || status=1
  fi
  if [[ $grp == *10_fp8_epilogue* ]] && [[ $stages == *" timings "* ]]; then
    tools/fp8_errors.sh "$build" "$out/errors.csv" >>"$out/parts/timings$g.log" 2>&1 || status=1
  fi
  if [[ $stages == *" counters "* ]]; then
    python3 tools/profile.py "$build" --tables "$out/parts/counters$g" --only "$grp" \
      >"$out/parts/counters$g.log" 2>&1 || status=1
  fi
  if [ "$g" = $((${#groups[@]} - 1)) ] && [[ $stages == *" ceilings "* ]]; then
    "$build/tools/ceilings/ceilings" --csv "$out/ceilings.csv" >"$out/parts/ceilings.log" 2>&1 \
      || status=1
  fi
  if [ "$g" = $flush_group ] && [[ $stages == *" flush "* ]]; then
    python3 tools/flush_compare.py --build "$build" --runs 3 --out "$out/flush.csv" \
      >"$out/parts/flush.log" 2>&1 || status=1
  fi
  return $status
}

merge() {  # merge NAME CSV: the parts' CSVs into OUT/CSV, in chapter order
  python3 - "$out" "$1" "$2" "${#gpus[@]}" "${gpus[@]}" -- "${groups[@]}" <<'PY'
import os, sys
sys.path.insert(0, "tools")
import tables
out, name, csvname, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
gpus = sys.argv[5:5 + n]
groups = sys.argv[6 + n:]
rows, metas, fields = [], [], None
for g, grp in enumerate(groups):
    path = os.path.join(out, "parts", f"{name}{g}", csvname)
    if not os.path.exists(path):
        sys.exit(f"{path} is missing: see {out}/parts/{name}{g}.log")
    r, meta = tables.read_csv(path)
    if "partial" in meta:
        sys.exit(f"{path} is unfinished ({meta['partial']}): run the stage again (it resumes)")
    with open(path) as f:
        fields = fields or next(l for l in f if not l.startswith("#")).strip().split(",")
    rows += r
    metas.append((g, grp, meta))
kinds = {tables.gpu_name(m) for _, _, m in metas}
if len(kinds) != 1:
    sys.exit(f"the parts ran on different kinds of GPU: {kinds}")
rows.sort(key=lambda r: r["chapter"])  # stable: each chapter's rows in the order they ran
where = "; ".join(f"{grp} on GPU {gpus[g % n]}" for g, grp, _ in metas)
import re
command = re.sub(r" --only \S+", "", metas[0][2].get("command", "?"))
meta = {"device": metas[0][2]["device"], "date": metas[0][2]["date"],
        "command": f"tools/record.sh BUILD OUT: {command}, the chapters "
                   f"in {len(groups)} parts at once, each on one GPU of one machine ({where})"}
tables.write_csv(os.path.join(out, csvname), rows, fields, meta)
print(f"{len(rows)} rows: {os.path.join(out, csvname)}")
PY
}

status=0
pids=()
for g in "${!groups[@]}"; do
  run_group "$g" "${gpus[$((g % ${#gpus[@]}))]}" &
  pids+=($!)
  # With fewer GPUs than groups, the groups that share a GPU run one after another.
  if [ $(((g + 1) % ${#gpus[@]})) = 0 ] || [ "${#gpus[@]}" -lt "${#groups[@]}" ]; then
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    pids=()
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
grep -h -B2 -A8 -i "error\|failed\|Traceback" "$out"/parts/*.log | head -40
[[ $stages == *" timings "* ]] && { merge timings timings.csv || status=1; }
[[ $stages == *" counters "* ]] && { merge counters counters.csv || status=1; }
python3 tools/plot_progression.py "$out" || status=1
exit $status
