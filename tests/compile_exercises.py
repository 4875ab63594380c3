#!/usr/bin/env python3
"""Every exercise file compiles in both configurations. The build compiles one of them (the
skeletons the reader fills in, or with -Dexercise_solutions=true the reference solutions);
this test compiles the other with the project's flags (no spills), for the project's
architectures (chapter 08's for sm_90a alone), so that CI, which has no GPU, builds both.

usage: compile_exercises.py NVCC SOURCE_ROOT solutions|skeletons FLAGS -- GENCODE... \
       -- FILE... [--sm90a FILE...]
"""
import concurrent.futures
import os
import subprocess
import sys


def main():
    nvcc, root, which, flags = sys.argv[1:5]
    rest = sys.argv[5:]
    first = rest.index("--")
    second = rest.index("--", first + 1)
    gencode = rest[first + 1:second]
    files = rest[second + 1:]
    sm90a = []
    if "--sm90a" in files:
        i = files.index("--sm90a")
        files, sm90a = files[:i], files[i + 1:]
    define = ["-DEXERCISE_SOLUTIONS"] if which == "solutions" else []
    jobs = [(f, gencode) for f in files] + \
           [(f, ["-gencode=arch=compute_90a,code=sm_90a"]) for f in sm90a]

    def build(job):
        f, arch = job
        cmd = [nvcc, "-std=c++17", "-O3", "-I" + root, "-c", f, "-o", os.devnull] + define + \
              flags.split() + arch
        p = subprocess.run(cmd, capture_output=True, text=True)
        return f, p.returncode, p.stdout + p.stderr

    ok = True
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for f, rc, out in pool.map(build, jobs):
            print(("ok   " if rc == 0 else "FAIL ") + f"{which}: {os.path.relpath(f, root)}")
            if rc != 0 or out.strip():
                print(out)
            ok = ok and rc == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
