#!/usr/bin/env python3
"""Host test of tools/plot_progression.py on a small hand-made timings.csv (tests/data, test
data, not a measurement): the three PNGs (steps, sizes, roofline) are written, once with a
ceilings.csv (the roofline draws its roofs) and once without (the points alone); a missing
--ceilings file is bad usage (exit 2). Exits 77 (skip) where matplotlib is missing, as the
plotting script itself does.

usage: test_plot.py PLOT_SCRIPT DATA_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

PNGS = ("progression_steps.png", "progression_sizes.png", "progression_roofline.png")


def run(script, folder, extra=()):
    p = subprocess.run([sys.executable, script, folder, *extra], capture_output=True, text=True)
    print(p.stdout + p.stderr, end="")
    return p.returncode, p.stdout


def pngs_ok(folder):
    ok = True
    for png in PNGS:
        path = os.path.join(folder, png)
        good = os.path.exists(path) and os.path.getsize(path) > 1000
        if good:
            with open(path, "rb") as f:
                good = f.read(8) == b"\x89PNG\r\n\x1a\n"
        print(("ok   " if good else "FAIL ") + png)
        ok = ok and good
    return ok


def main():
    script, data = sys.argv[1], sys.argv[2]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for case, files in (("with ceilings", ("timings.csv", "ceilings.csv")),
                            ("without ceilings", ("timings.csv",))):
            folder = os.path.join(tmp, case.replace(" ", "_"))
            os.makedirs(folder)
            for name in files:
                shutil.copy(os.path.join(data, name), folder)
            print(f"-- {case}")
            rc, out = run(script, folder)
            if rc == 77:
                return 77
            ok = pngs_ok(folder) and rc == 0 and ok
            roofs = "no ceilings: points only" not in out  # the script says which it drew
            print(("ok   " if roofs == (len(files) == 2) else "FAIL ") +
                  "roofline " + ("with roofs" if roofs else "without roofs"))
            ok = ok and roofs == (len(files) == 2)
        print("-- a missing --ceilings file")
        rc, _ = run(script, folder, ["--ceilings", os.path.join(tmp, "no_such.csv")])
        print(("ok   " if rc == 2 else "FAIL ") + f"exit {rc} (2 expected)")
        ok = ok and rc == 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
