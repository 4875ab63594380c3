#!/usr/bin/env python3
"""The no-spill check can fail: compiling a kernel that must spill with the project's flags
(-Xptxas=-warn-spills,-Werror) fails, and ptxas names the spill as the reason; the same file
compiles without those flags (so the failure is the spill, not something else).

usage: check_spill.py NVCC SOURCE NO_SPILL_ARGS -- GENCODE_ARGS...
"""
import subprocess
import sys


def main():
    nvcc, source, flags = sys.argv[1], sys.argv[2], sys.argv[3]
    gencode = sys.argv[sys.argv.index("--") + 1:]
    base = [nvcc, "-c", source, "-o", "/dev/null"] + gencode
    refused = subprocess.run(base + [flags], capture_output=True, text=True)
    control = subprocess.run(base, capture_output=True, text=True)
    print(refused.stderr + control.stderr)
    ok = refused.returncode != 0 and "spill" in refused.stderr.lower() and control.returncode == 0
    print(("ok   " if ok else "FAIL ") +
          f"with {flags}: exit {refused.returncode}; without: exit {control.returncode}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
