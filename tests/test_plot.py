#!/usr/bin/env python3
"""Host test of tools/plot_progression.py on a small timings.csv: both PNGs are written. Exits 77
(skip) where matplotlib is missing, as the plotting script itself does.

usage: test_plot.py PLOT_SCRIPT DATA_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    script, data = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("timings.csv",):
            shutil.copy(os.path.join(data, name), tmp)
        p = subprocess.run([sys.executable, script, tmp], capture_output=True, text=True)
        print(p.stdout + p.stderr)
        if p.returncode == 77:
            return 77
        ok = p.returncode == 0
        for png in ("progression_steps.png", "progression_sizes.png"):
            path = os.path.join(tmp, png)
            good = os.path.exists(path) and os.path.getsize(path) > 1000
            with open(path, "rb") if good else open(os.devnull, "rb") as f:
                good = good and f.read(8) == b"\x89PNG\r\n\x1a\n"
            print(("ok   " if good else "FAIL ") + png)
            ok = ok and good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
