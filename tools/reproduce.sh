#!/usr/bin/env bash
# Reproduces the numbers in the READMEs on the GPU at hand: build, every test, every chapter's
# benchmark, compute-sanitizer, Nsight Compute. Logs go to OUT_DIR.
#
# usage: tools/reproduce.sh [-a ARCH] [-o OUT_DIR] [STAGE...]
#   stages: build test bench sanitize profile   (default: all of them, in that order)
#   ARCH: e.g. 90 for H100 (default 90); OUT_DIR default: logs
set -uo pipefail
cd "$(dirname "$0")/.."
arch=90
out=logs
while getopts "a:o:" opt; do
  case $opt in
    a) arch=$OPTARG ;;
    o) out=$OPTARG ;;
    *) sed -n '2,8p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
stages=${*:-build test bench sanitize profile}
build=build-sm$arch
mkdir -p "$out"
status=0

build_all() {
  [ -d "$build" ] || meson setup "$build" -Dgpu_arch="$arch" >"$out/setup.log" 2>&1
  meson compile -C "$build" >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
}
[ -d "$build" ] || build_all  # every stage needs the programs

# The chapter programs, in chapter order: every executable in NN_name/ that answers --list.
programs=()
for p in "$build"/[0-9][0-9]_*/*; do
  [ -f "$p" ] && [ -x "$p" ] && "$p" --list >/dev/null 2>&1 && programs+=("$p")
done

for stage in $stages; do
  case $stage in
    build)
      build_all
      ;;
    test)
      meson test -C "$build" --print-errorlogs >"$out/test.log" 2>&1 || status=1
      grep -E "^(Ok|Fail|Skipped|Timeout):" "$out/test.log"
      ;;
    bench)
      for p in "${programs[@]}"; do
        name=$(basename "$(dirname "$p")")_$(basename "$p")
        "$p" --bench --csv "$out/bench_$name.csv" >"$out/bench_$name.log" 2>&1 || status=1
      done
      ;;
    sanitize)
      # Every kernel under each tool, the steps (--kernel all) and the experiments (--kernel
      # sweep), at small odd shapes (every tail path, scalar loads) and at aligned ones: tile
      # multiples, and N, K multiples of 4 and 8 (the 128-bit fast paths). Exit 77 (a GPU the
      # program does not run on: chapter 08 off sm_90) is a skip, not an error.
      gemm_shapes=1x1x1,33x65x17,67x45x39,130x129x37,257x131x66,128x128x128,256x256x64,128x260x36,260x132x20
      copy_shapes=1x1,33x65,67x45,130x129,64x64,128x96
      for tool in memcheck racecheck synccheck; do
        for p in "${programs[@]}"; do
          # The program's shapes have three parts (GEMM) or two (copies), as --list shows.
          shape=$("$p" --list | head -1 | awk '{print $5}')
          shapes=$gemm_shapes
          [ "$(tr -cd x <<<"$shape")" = x ] && shapes=$copy_shapes
          for sel in all sweep; do
            [ $sel = all ] || "$p" --help | grep -q -- "|$sel" || continue
            compute-sanitizer --tool $tool --error-exitcode 9 "$p" --check --kernel $sel \
              --shapes $shapes >>"$out/sanitize_$tool.log" 2>&1
            rc=$?
            [ $rc = 0 ] || [ $rc = 77 ] || { echo "$tool $p --kernel $sel: exit $rc"; status=1; }
          done
        done
        grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitize_$tool.log" | sort | uniq -c
      done
      ;;
    profile)
      for p in "${programs[@]}"; do
        name=$(basename "$(dirname "$p")")
        tools/profile.py "$build" "$p" "$out/profile_$name" | tee "$out/profile_$name.txt" \
          || status=1
      done
      02_transpose_copy/profile.sh "$build" "$out/p02" | tee "$out/profile02.txt" || status=1
      ;;
    *) echo "unknown stage $stage"; exit 2 ;;
  esac
done
exit $status
