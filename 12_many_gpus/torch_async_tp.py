#!/usr/bin/env python3
"""Chapter 12's PyTorch baseline: the same two layers through torch.distributed (NCCL), one
process per GPU (mp.spawn, no torchrun), timed like many_gpus: CUDA events around each run after
a barrier, the median over runs of the slowest rank.

usage: torch_async_tp.py [--gpus G] [--shapes MxNxK,...] [--reps R] [--csv FILE]

Per shape (the whole layer: tokens M, outputs N, inputs K; BF16 in and out, as a model runs it):
  ag_unfused   all_gather_into_tensor of A's row shards, then mm with this rank's W slice
  ag_fused     torch.ops.symm_mem.fused_all_gather_matmul (async-TP: symmetric memory, copy
               engines, one chunk per rank)
  rs_unfused   mm on this rank's K slice, then reduce_scatter_tensor of the rows
  rs_fused     torch.ops.symm_mem.fused_matmul_reduce_scatter
  ag_gemm, ag_comm, rs_gemm, rs_comm   the halves alone, for the limit max(GEMM, comm)
Needs M and N divisible by G (as torch's ops do) and K divisible by G for the row-parallel layer.
NVLink multicast stays off: TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NCCL_NVLS_ENABLE=0 are set
before torch.distributed is imported. Exit status: 0, 1 on an error, 77 with too few GPUs.

Note the bytes: the row-parallel layer here reduce-scatters BF16 partials (mm's output type);
many_gpus reduce-scatters chapter 09's FP32 output, twice the bytes.
"""
import argparse
import datetime
import os
import sys

os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ["NCCL_NVLS_ENABLE"] = "0"  # never NVLink multicast on these shared hosts

DEFAULT_SHAPES = "8192x28672x8192,16384x28672x8192,4096x8192x8192,8192x8192x28672"


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        parts = item.lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise SystemExit(f"torch_async_tp.py: --shapes: '{item}' is not MxNxK")
        shapes.append(tuple(int(p) for p in parts))
    return shapes


def worker(rank, args, shapes, port, results):
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem

    G = args.gpus
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("nccl", rank=rank, world_size=G, device_id=dev)
    group = dist.group.WORLD
    enable = getattr(symm_mem, "enable_symm_mem_for_group", None)
    if enable:  # needed up to torch 2.8; later versions enable it themselves (and may warn)
        enable(group.group_name)
    torch.manual_seed(1234 + rank)

    def timed(fn):
        for _ in range(2):  # warm-up: NCCL's connections, the symmetric buffers, cuBLAS's choice
            fn()
        start = [torch.cuda.Event(enable_timing=True) for _ in range(args.reps)]
        stop = [torch.cuda.Event(enable_timing=True) for _ in range(args.reps)]
        for i in range(args.reps):
            dist.barrier(device_ids=[rank])  # every rank starts together, as in many_gpus
            start[i].record()
            fn()
            stop[i].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(start, stop)]

    out = []
    for M, N, K in shapes:
        if M % G or N % G or K % G:
            out.append((M, N, K, None))
            continue
        S = M // G
        # Column-parallel: A's row shard (S, K), W_r (N / G, K).
        a_shard = torch.randn(S, K, device=dev, dtype=torch.bfloat16)
        w_col = torch.randn(N // G, K, device=dev, dtype=torch.bfloat16)
        a_full = torch.empty(M, K, device=dev, dtype=torch.bfloat16)
        # Row-parallel: A[:, k_r] (M, K / G), W[:, k_r] (N, K / G).
        a_k = torch.randn(M, K // G, device=dev, dtype=torch.bfloat16)
        w_k = torch.randn(N, K // G, device=dev, dtype=torch.bfloat16)
        part = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        rows = torch.empty(S, N, device=dev, dtype=torch.bfloat16)
        wt_col, wt_k = w_col.t(), w_k.t()

        def ag_comm():
            dist.all_gather_into_tensor(a_full, a_shard)

        def ag_gemm():
            torch.mm(a_full, wt_col)

        def ag_unfused():
            ag_comm()
            ag_gemm()

        def ag_fused():
            torch.ops.symm_mem.fused_all_gather_matmul(a_shard, [wt_col], gather_dim=0,
                                                       group_name=group.group_name)

        def rs_gemm():
            torch.mm(a_k, wt_k, out=part)

        def rs_comm():
            dist.reduce_scatter_tensor(rows, part)

        def rs_unfused():
            rs_gemm()
            rs_comm()

        def rs_fused():
            torch.ops.symm_mem.fused_matmul_reduce_scatter(a_k, wt_k, "sum", scatter_dim=0,
                                                           group_name=group.group_name)

        row = {}
        for name, fn in [("ag_gemm", ag_gemm), ("ag_comm", ag_comm), ("ag_unfused", ag_unfused),
                         ("ag_fused", ag_fused), ("rs_gemm", rs_gemm), ("rs_comm", rs_comm),
                         ("rs_unfused", rs_unfused), ("rs_fused", rs_fused)]:
            try:
                row[name] = timed(fn)
            except Exception as e:  # an op this torch lacks: say so, keep the others
                if rank == 0:
                    print(f"{M}x{N}x{K} {name}: {type(e).__name__}: {e}", file=sys.stderr)
                row[name] = None
        out.append((M, N, K, row))
        del a_shard, w_col, a_full, a_k, w_k, part, rows
        torch.cuda.empty_cache()
    results[rank] = out
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", type=int, default=0)
    p.add_argument("--shapes", default=DEFAULT_SHAPES)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--csv", default="")
    args = p.parse_args()
    shapes = parse_shapes(args.shapes)
    if args.reps < 1:
        raise SystemExit("torch_async_tp.py: --reps: at least 1")

    import torch
    import torch.multiprocessing as mp

    have = torch.cuda.device_count()  # NVML-based in recent torch: no CUDA context here
    if have == 0:
        print("torch_async_tp.py: no CUDA device; skipping", file=sys.stderr)
        return 77
    args.gpus = args.gpus or min(have, 8)
    if args.gpus > have:
        print(f"torch_async_tp.py: --gpus {args.gpus}: this machine has {have}; skipping",
              file=sys.stderr)
        return 77
    import socket
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = mp.Manager().dict()
    mp.spawn(worker, args=(args, shapes, port, results), nprocs=args.gpus, join=True)

    name = torch.cuda.get_device_name(0)
    lines = [f"# device: {args.gpus} x {name}",
             f"# versions: torch {torch.__version__}, CUDA {torch.version.cuda}, NCCL "
             f"{'.'.join(map(str, torch.cuda.nccl.version()))}; NCCL_NVLS_ENABLE=0, "
             f"TORCH_SYMM_MEM_DISABLE_MULTICAST={os.environ['TORCH_SYMM_MEM_DISABLE_MULTICAST']}",
             f"# date: {datetime.date.today().isoformat()}",
             "# command: " + " ".join(sys.argv),
             "program,layer,step,gpus,M,N,K,ms_median,ms_min,ms_max,reps,limit_ms,pct_of_limit,"
             "x_unfused"]
    print("\n".join(lines[:4]))
    print(f"{'step':12} {'gpus':>4} {'M x N x K':>20} {'ms':>10} {'limit ms':>10} {'% limit':>8} "
          f"{'x unfused':>9}")
    for i, (M, N, K, _) in enumerate(results[0]):
        rows = [results[r][i][3] for r in range(args.gpus)]
        if rows[0] is None:
            print(f"{M}x{N}x{K}: M, N and K must be multiples of {args.gpus}: skipped")
            continue

        def slowest(name):  # per run, the slowest rank; then the median over runs
            if any(r[name] is None for r in rows):
                return None
            per_run = sorted(max(r[name][k] for r in rows) for k in range(args.reps))
            n = len(per_run)
            med = per_run[n // 2] if n % 2 else 0.5 * (per_run[n // 2 - 1] + per_run[n // 2])
            return med, per_run[0], per_run[-1]

        for layer in ("ag", "rs"):
            g, c, u = (slowest(f"{layer}_{x}") for x in ("gemm", "comm", "unfused"))
            limit = max(g[0], c[0]) if g and c else 0
            for step in ("gemm", "comm", "unfused", "fused"):
                t = slowest(f"{layer}_{step}")
                if t is None:
                    continue
                is_step = step in ("unfused", "fused")
                pct = 100 * limit / t[0] if is_step and limit else 0
                xu = u[0] / t[0] if is_step and u else 0
                shape = f"{M}x{N}x{K}"
                print(f"{layer + '_' + step:12} {args.gpus:4} {shape:>20} {t[0]:10.4f} "
                      f"{limit:10.4f} {pct:7.1f}% {xu:9.2f}")
                lines.append(f"torch,{layer},{step},{args.gpus},{M},{N},{K},{t[0]:.6f},"
                             f"{t[1]:.6f},{t[2]:.6f},{args.reps},{limit:.6f},{pct:.2f},{xu:.3f}")
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
