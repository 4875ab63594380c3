#!/usr/bin/env bash
# Chapter 10's error record: each kernel's norm-wise error against the exact product of its
# decoded inputs, at K = 4096, 16384 and 65536 (the promotion lesson), into OUT (errors.csv in
# the GPU's record folder), with the device, date and command on its first lines.
#
# usage: tools/fp8_errors.sh BUILD OUT
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,6p' "$0"; exit 2; }
prog=$1/10_fp8_epilogue/fp8_epilogue
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prog" --check --kernel lt_bf16,bf16_out,lt_bias_gelu,unfused,bias_gelu,lt_fp8,lt_fp8_fast,fp8,fp8_128,promoted,lt_fp8_block,block_scaled \
  --shapes 256x256x4096,256x256x16384,256x256x65536 --csv "$tmp/rows.csv" >"$tmp/out.txt"
{
  echo "# device: $(head -1 "$tmp/out.txt")"
  echo "# date: $(date +%F)"
  echo "# command: tools/fp8_errors.sh BUILD OUT ($prog --check --shapes 256x256x4096,256x256x16384,256x256x65536)"
  cat "$tmp/rows.csv"
} >"$2"
