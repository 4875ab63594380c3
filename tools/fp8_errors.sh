#!/usr/bin/env bash
# Chapters 10 and 11's error record: each kernel's error against the exact product of its decoded
# inputs, and how much of its bound it used (docs/measuring.md, "Chapter 10's bound"), at
# M = N = 256 and K from 16 to 2^20, into OUT (errors.csv in the GPU's record folder), with the
# device, date and command on its first lines. Unpromoted FP8 is left out above K = 65536.
# Chapter 11's program shares chapter 10's harness; its per-tensor baseline lt_fp8 is chapter
# 10's row, so it is not run twice.
#
# usage: tools/fp8_errors.sh BUILD OUT
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,7p' "$0"; exit 2; }
prog=$1/10_fp8_epilogue/fp8_epilogue
prog11=$1/11_block_scales/block_scales
k11=lt_fp8_block,block_scaled,scales_tma,scales_tuned,tall,tall_tuned,split_tuned,block_straight,block_wave,block_lean
shapes=256x256x16,256x256x128,256x256x1024,256x256x4096,256x256x16384,256x256x65536,256x256x262144,256x256x1048576
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# All kernels (`all` leaves the unpromoted ones out where they are refused), then fp8_128 (sweep).
# A failing check still records its row (its error and the share of the bound it used); the
# script's exit status says so.
status=0
"$prog" --check --errors 1 --shapes "$shapes" >"$tmp/out.txt" || status=1
"$prog" --check --errors 1 --kernel fp8_128 --shapes "${shapes%,256x256x262144*}" >"$tmp/out128.txt" || status=1
"$prog11" --check --errors 1 --kernel "$k11" --shapes "$shapes" >"$tmp/out11.txt" || status=1
{
  echo "# device: $(head -1 "$tmp/out.txt")"
  echo "# date: $(date +%F)"
  echo "# command: tools/fp8_errors.sh BUILD OUT ($prog --check --errors 1 --shapes $shapes; the same with --kernel fp8_128 up to K = 65536; $prog11 --check --errors 1 --kernel $k11 --shapes the same)"
  echo "kernel,M,N,K,rel_err,rel_bound,norm_applied,worst_element_fraction"
  cat "$tmp/out.txt" "$tmp/out128.txt" "$tmp/out11.txt" | awk '$1 == "errors" {
    split($3, s, "x"); printf "%s,%s,%s,%s,%s,%s,%s,%s\n", $2, s[1], s[2], s[3], $5, $7, $9, $11 }'
} >"$2"
grep -h '^cublaslt' "$tmp/out.txt" "$tmp/out11.txt" || true  # the splits cuBLASLt chose (its calls)
exit $status
