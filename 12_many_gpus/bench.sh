#!/usr/bin/env bash
# Chapter 12's whole sweep in one command, on a machine with 4 GPUs (a 2-GPU machine runs the
# TP = 2 half and says the other was skipped):
#
#   12_many_gpus/bench.sh BUILD OUTDIR [extra options for many_gpus, e.g. --chunks 4]
#
# Runs every step of both layers (ag_unfused, ag_chunked, ag_copy_engine, ag_tile_wait,
# ag_slice_wait, rs_unfused, rs_chunked, rs_copy_engine, rs_others_first, rs_bf16_partials,
# rs_one_sum, rs_sum_epilogue; the GEMM and the communication alone beside them) at the issue's
# layer shapes (8192x28672x8192, 16384x28672x8192, 4096x8192x8192, 8192x8192x28672: the
# program's default shapes, each as the column-parallel "ag" and the row-parallel "rs" layer) at
# TP = 2 and TP = 4, then, where Python has torch, the PyTorch baseline (torch_async_tp.py) at
# the same shapes. Writes OUTDIR/tp2.csv, tp4.csv, many_gpus.csv (both, one header),
# tp*_timeline.csv (rank 0's spans of one more run of each row: timeline.py draws them),
# torch_tp*.csv and a log of each. Less of it, to save GPU time:
#   options after OUTDIR go to many_gpus (--kernel rs_unfused,rs_copy_engine: those steps, with
#   the GEMM and comm alone of their layer; --reps N; --shapes ...);
#   BENCH_TP="4" runs that TP only; BENCH_TORCH=0 leaves out the PyTorch baseline.
set -u
build=${1:?usage: bench.sh BUILD OUTDIR [options]}
out=${2:?usage: bench.sh BUILD OUTDIR [options]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
prog=$build/12_many_gpus/many_gpus
[ -x "$prog" ] || { echo "bench.sh: $prog not built (no NCCL at meson setup?)" >&2; exit 2; }
mkdir -p "$out"
# NVLink multicast stays off (the program sets it too; torch needs it before it starts).
export NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1

status=0
tps=${BENCH_TP:-2 4}
for g in $tps; do
  echo "== many_gpus --gpus $g --bench" | tee "$out/tp$g.log"
  MANY_GPUS_SKIP_FEWER=1 "$prog" --gpus "$g" --bench --timeline 1 --csv "$out/tp$g.csv" "$@" \
    2>&1 | tee -a "$out/tp$g.log"
  rc=${PIPESTATUS[0]}
  case $rc in
    0) ;;
    77) echo "TP=$g skipped: fewer than $g GPUs" | tee -a "$out/tp$g.log"; rm -f "$out/tp$g.csv" ;;
    *) echo "TP=$g: exit $rc" | tee -a "$out/tp$g.log"; status=1 ;;
  esac
done

# One CSV: the comment lines of the first, with each GPU count's device line, then the header
# and every row.
first=1
: > "$out/many_gpus.csv"
for g in $tps; do
  f=$out/tp$g.csv
  [ -f "$f" ] || continue
  if [ $first = 1 ]; then
    grep '^#' "$f" | sed "s/^\(# device: .*\)$/\1 (the rows with gpus = $g)/" >> "$out/many_gpus.csv"
    first=0
  else
    grep '^# \(device\|command\)' "$f" |
      sed "s/^# \(device\|command\):/# \1 (the rows with gpus = $g):/" >> "$out/many_gpus.csv"
  fi
done
first=1
for g in $tps; do
  f=$out/tp$g.csv
  [ -f "$f" ] || continue
  if [ $first = 1 ]; then grep -v '^#' "$f" >> "$out/many_gpus.csv"; first=0
  else grep -v '^#' "$f" | tail -n +2 >> "$out/many_gpus.csv"; fi
done

if [ "${BENCH_TORCH:-1}" = 0 ]; then
  echo "BENCH_TORCH=0: the PyTorch baseline was not run"
elif python3 -c 'import torch' 2>/dev/null; then
  for g in $tps; do
    echo "== torch_async_tp.py --gpus $g" | tee "$out/torch_tp$g.log"
    python3 "$here/torch_async_tp.py" --gpus "$g" --csv "$out/torch_tp$g.csv" \
      2>&1 | tee -a "$out/torch_tp$g.log"
    rc=${PIPESTATUS[0]}
    [ "$rc" = 0 ] || [ "$rc" = 77 ] || status=1
  done
else
  echo "no torch in python3: the PyTorch baseline was not run"
fi
exit $status
