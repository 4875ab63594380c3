#!/usr/bin/env python3
"""Host test of tests/exercise.py's judgement, without a GPU: a stand-in chapter program and a
stand-in compute-sanitizer (written to a temporary folder) play each outcome, and exercise.py
must give each its exit code and its sentence: SKIP while unwritten, FAIL on wrong values, on
a plan its host check rejects (chapter 09), on other bits the second time (--twice), on a
timed-out barrier wait, on a sanitizer hazard the step does not have, and on a correct answer
more than SLOW (1.10) times slower than its step in both the median and the fastest run; PASS at the
step's speed, with a disturbed timing, and with a hazard the step's own kernel has too.

usage: test_exercise.py tests/exercise.py      (meson test -C build 'host exercise verdicts')
"""
import os
import stat
import subprocess
import sys
import tempfile

PROGRAM = r'''#!/usr/bin/env python3
import os, sys
mode, a = os.environ["FAKE_MODE"], sys.argv[1:]
if "--check" in a:
    if mode == "unwritten":
        print("exercise not written yet: edit x.cuh", file=sys.stderr); sys.exit(77)
    if mode == "wrong":
        print("17x19x23 ex: 3 of 323 elements wrong", file=sys.stderr); sys.exit(1)
    if mode == "plan":
        k = a[a.index("--kernel") + 1]
        print(f"{k}: the plan for 4 tiles of 8 K-tiles on 132 SMs: tile 0, K-tile 3: computed "
              "by no block", file=sys.stderr); sys.exit(1)
    if mode == "bits" and "--twice" in a:
        print("9x9x9 ex: a second run on the same input gave other bits", file=sys.stderr)
        sys.exit(1)
    if mode == "early":
        print("mbarrier re-armed before its phase completed: full barrier, stage 1, phase "
              "parity 0, block 3 warp 0", file=sys.stderr)
        print("error: unspecified launch failure", file=sys.stderr); sys.exit(1)
    if mode == "fault":
        print("error: cudaDeviceSynchronize() failed: unspecified launch failure",
              file=sys.stderr); sys.exit(1)
    if mode == "hang":
        print("mbarrier wait timed out: full barrier, stage 2, phase 1, block 5 warp 4")
        print("error: unspecified launch failure", file=sys.stderr); sys.exit(1)
    sys.exit(0)
csv, (k, s) = a[a.index("--csv") + 1], a[a.index("--kernel") + 1].split(",")
ex = {"slow": (9.1, 9.0), "disturbed": (1.6, 1.03)}.get(mode, (1.02, 0.99))
with open(csv, "w") as f:
    f.write("program,precision,kernel,M,N,K,ms_median,ms_min,ms_max,reps,TFLOP/s,"
            "pct_of_baseline,baseline,rel_err,check\n")
    f.write(f"p,fp32,{k},9,9,9,{ex[0]},{ex[1]},9.5,30,1,1,cublas,0,pass\n")
    f.write(f"p,fp32,{s},9,9,9,1.0,1.0,1.2,30,1,1,cublas,0,pass\n")
'''

SANITIZER = r'''#!/usr/bin/env python3
import os, subprocess, sys
a = sys.argv[1:]
tool, kernel = a[a.index("--tool") + 1], a[a.index("--kernel") + 1]
if tool == "racecheck" and kernel in os.environ.get("FAKE_RACY", "").split(","):
    print(f"========= Error: Race reported between Write access and Read access in {kernel}")
    sys.exit(1)
sys.exit(subprocess.run(a[a.index("--error-exitcode") + 2:]).returncode)
'''

# mode, racy kernels, extra options, expected exit code, a sentence the output must have
CASES = [
    ("unwritten", "", [], 77, "exercise not written yet"),
    ("wrong", "", [], 1, "failed verification"),
    ("plan", "", [], 1, "plan was rejected on the host before any launch"),
    ("bits", "", ["--twice"], 1, "not deterministic"),
    ("ok", "", ["--twice"], 0, "same bits when run twice"),
    ("hang", "", [], 1, "waited on a barrier phase that never completed"),
    ("fault", "", [], 1, "kernel faulted (above)"),
    ("early", "", [], 1, "gave a stage back before its copies had landed"),
    ("slow", "", [], 1, "correct, but 9.1x slower than `step`: the warp is not reading along "
                        "a row yet"),
    ("disturbed", "", [], 0, "the timing was disturbed"),
    ("ok", "", [], 0, "correct, at the lesson's speed: 1.02x"),
    ("ok", "ex_coalesced_mapping", ["--sanitize", "1x1x1"], 1,
     "racecheck reports a hazard in ex_coalesced_mapping"),
    ("ok", "ex_coalesced_mapping,step", ["--sanitize", "1x1x1"], 0,
     "not held against the exercise"),
    ("ok", "", ["--sanitize", "1x1x1"], 0, "synccheck: no hazard"),
]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    exercise_py = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        program = os.path.join(tmp, "program")
        bindir = os.path.join(tmp, "bin")
        os.makedirs(bindir)
        for path, text in ((program, PROGRAM), (os.path.join(bindir, "compute-sanitizer"),
                                                SANITIZER)):
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        for mode, racy, extra, want_rc, want_text in CASES:
            env = dict(os.environ, FAKE_MODE=mode, FAKE_RACY=racy,
                       PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
            r = subprocess.run([sys.executable, exercise_py, program, "ex_coalesced_mapping",
                                "step", "1x1x1,9x9x9", "9x9x9"] + extra,
                               capture_output=True, text=True, env=env)
            out = r.stdout + r.stderr
            ok = r.returncode == want_rc and want_text in out
            failures += not ok
            print(f"{'ok  ' if ok else 'BAD '} {mode:<9} {' '.join(extra):<20} exit "
                  f"{r.returncode} (want {want_rc}), '{want_text[:50]}'")
            if not ok:
                print("     " + out.replace("\n", "\n     "))
    print(f"{len(CASES) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
