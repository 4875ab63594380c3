#!/usr/bin/env python3
"""The constants of chapter 09's shape rule (hopper_cost, 09_every_shape/schedule.cuh), from a sweep.

usage: tools/fit_menu.py [--search]

Reads 09_every_shape/experiments/menu_sweep_whole.csv and menu_sweep_split.csv (every tile of the
menu at 23 shapes, whole tiles and with the last wave split). Prints each tile's K-tile time at
8192^3 (kMenu's k_tile_us), then, for the rule's constants (kLoadShare, kTileUs,
kSplitUsPerMiB; the DRAM bound as kDramShare x the H100 SXM's peak), the pick at every shape against the fastest measured pair.
--search tries a grid of constants and prints the ones with the least total slowdown.
"""
import csv, itertools, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SWEEP = os.path.join(HERE, "..", "09_every_shape", "experiments", "menu_sweep_%s.csv")
MENU = [(128, 256), (128, 192), (128, 144), (64, 128), (64, 64)]  # kMenu
# The kernel of each menu tile: step 3's menu_kernel for the 128-row tiles, step 5's
# one_wg_kernel for the 64-row ones (the sweep's other rows, step 4's two_acc_kernel on the
# 64-row tiles, are there to compare).
KERNEL = {"m128x256": (128, 256), "m128x192": (128, 192), "m128x144": (128, 144),
          "wg1_64x128": (64, 128), "wg1_64x64": (64, 64)}
# schedule.cuh; dram_tb_s: kDramShare (0.9) of the H100 SXM's 3.35 TB/s, where the sweep ran
RULE = dict(load=0.5, tile_us=1.0, split_us_per_mib=1.5, dram_tb_s=3.0)
SMS = 132


def load():
    t, cublas = {}, {}
    for mode in ("whole", "split"):
        with open(SWEEP % mode) as f:
            for r in csv.DictReader(l for l in f if not l.startswith("#")):
                shape = (int(r["M"]), int(r["N"]), int(r["K"]))
                us = float(r["ms_median"]) * 1000
                if r["kernel"] == "cublas_bt":
                    cublas[shape] = us
                elif r["kernel"] in KERNEL:
                    t[KERNEL[r["kernel"]] + (mode,) + shape] = us
    return t, cublas


def plan_wave(tiles, k_tiles, max_splits):  # schedule.cuh's plan_wave and wave_makespan
    r = tiles % SMS
    s = min(min(SMS // r, k_tiles) if r else 1, max_splits)
    if s >= 2:
        grid, split_tiles = (SMS if tiles >= SMS else r * s), r
    else:
        grid, split_tiles, s = min(tiles, SMS), 0, 1
    whole = (tiles - split_tiles + grid - 1) // grid
    makespan = whole * k_tiles + ((k_tiles + s - 1) // s if split_tiles else 0)
    return grid, split_tiles, s, whole, makespan


def cost(k_tile_us, rule, bm, bn, mode, M, N, K):  # schedule.cuh's hopper_cost
    tiles = -(-M // bm) * -(-N // bn)
    max_splits = 1 if mode == "whole" else 1 << 30
    grid, split_tiles, s, whole, makespan = plan_wave(tiles, -(-K // 64), max_splits)
    if mode == "split" and not split_tiles:
        return None
    load = 1 - rule["load"] + rule["load"] * grid / SMS
    compute = makespan * k_tile_us[(bm, bn)] * load + whole * rule["tile_us"]
    dram = ((M + N) * K * 2 + M * N * 4) / (rule["dram_tb_s"] * 1e6)
    return max(compute, dram) + rule["split_us_per_mib"] * split_tiles * s * bm * bn * 4 / 2**20


def picks(t, k_tile_us, rule):
    shapes = sorted({k[3:] for k in t})
    out = []
    for sh in shapes:
        pairs = [(bm, bn, mode) for bm, bn in MENU for mode in ("whole", "split")
                 if (bm, bn, mode) + sh in t
                 and cost(k_tile_us, rule, bm, bn, mode, *sh) is not None]
        pick = min(pairs, key=lambda p: cost(k_tile_us, rule, *p, *sh))
        best = min(pairs, key=lambda p: t[p + sh])
        out.append((sh, pick, best))
    return out


def main():
    t, cublas = load()
    k_tile_us = {}
    for bm, bn in MENU:
        makespan = plan_wave(-(-8192 // bm) * -(-8192 // bn), 128, 1)[4]
        k_tile_us[(bm, bn)] = t[(bm, bn, "whole", 8192, 8192, 8192)] / makespan
    print("K-tile time at 8192^3 (us):",
          ", ".join(f"{bm}x{bn} {v:.4f}" for (bm, bn), v in k_tile_us.items()))
    rule = dict(RULE)
    if "--search" in sys.argv:
        grid = itertools.product([0, 0.2, 0.4, 0.5, 0.6], [0, 0.5, 1, 1.5, 2],
                                 [0.5, 1, 1.5, 2, 3], [2, 2.5, 3])
        def loss(g):
            r = dict(zip(RULE, g))
            return sum(t[p + sh] / t[b + sh] - 1 for sh, p, b in picks(t, k_tile_us, r))
        rule = dict(zip(RULE, min(grid, key=loss)))
        print("least total slowdown:", rule)
    total = 0
    for sh, p, b in picks(t, k_tile_us, rule):
        slow = t[p + sh] / t[b + sh]
        total += slow - 1
        print(f"{'x'.join(map(str, sh)):>16}  pick {p[0]}x{p[1]} {p[2]:5}  "
              f"{slow:.3f} x the fastest "
              f"({b[0]}x{b[1]} {b[2]})  {100 * cublas[sh] / t[p + sh]:.1f}% of cublas_bt")
    print(f"total slowdown {total:.3f}")


if __name__ == "__main__":
    sys.exit(main())
