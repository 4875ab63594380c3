#!/usr/bin/env python3
"""Finds NCCL for 12_many_gpus/meson.build (pkg-config, tried first, is Meson's own).

usage: find_nccl.py NVCC
Prints three lines, the folder of nccl.h, the library file and its folder, and exits 0; or
exits 1 saying on stderr where it looked. The places, in order:
  $NCCL_ROOT/include and $NCCL_ROOT/lib (or lib64)   a NCCL you unpacked or built
  the CUDA toolkit beside NVCC (include/, lib64/, targets/*/)   the toolkit's own NCCL
  nvidia/nccl/ in Python's site-packages   PyPI's nvidia-nccl-cu12/-cu13, torch's NCCL
A folder counts only when it has both nccl.h and libnccl.so (or libnccl.so.2, the wheels').
"""
import glob
import os
import shutil
import site
import sys


def candidates(nvcc):
    root = os.environ.get("NCCL_ROOT")
    if root:
        yield "NCCL_ROOT", [os.path.join(root, "include")], \
            [os.path.join(root, d) for d in ("lib", "lib64")]
    cuda = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which(nvcc) or nvcc)))
    yield "the CUDA toolkit", [os.path.join(cuda, "include")] + \
        glob.glob(os.path.join(cuda, "targets", "*", "include")), \
        [os.path.join(cuda, "lib64"), os.path.join(cuda, "lib")] + \
        glob.glob(os.path.join(cuda, "targets", "*", "lib"))
    paths = list(sys.path)
    try:
        paths += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:
        pass
    for p in paths:
        base = os.path.join(p, "nvidia", "nccl")
        if os.path.isdir(base):
            yield "Python's nvidia/nccl", [os.path.join(base, "include")], \
                [os.path.join(base, "lib")]


def main():
    nvcc = sys.argv[1] if len(sys.argv) > 1 else "nvcc"
    looked = []
    for where, incs, libs in candidates(nvcc):
        looked.append(where)
        inc = next((i for i in incs if os.path.isfile(os.path.join(i, "nccl.h"))), None)
        lib = next((os.path.join(d, f) for d in libs for f in ("libnccl.so", "libnccl.so.2")
                    if os.path.isfile(os.path.join(d, f))), None)
        if inc and lib:
            print(inc)
            print(lib)
            print(os.path.dirname(lib))
            return 0
    print("no nccl.h with libnccl.so in: " + ", ".join(looked), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
