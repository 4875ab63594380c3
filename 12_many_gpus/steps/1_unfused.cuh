// Step 1: the layer, unfused. The column-parallel layer gathers A's row shards with NCCL's
// all-gather, then runs chapter 09's GEMM on the whole A against this rank's slice of W; the
// row-parallel layer runs the GEMM on this rank's K slice, then NCCL's reduce-scatter sums the
// partials and leaves each rank its S rows. Communication, then computation, in series: the
// baseline of the chapter, and what PyTorch runs without async-TP (all_gather_into_tensor then
// mm; mm then reduce_scatter_tensor). Beside it the program times the two halves alone on the
// same buffers; the limit of any overlap is the slower of them.
//
//   build/12_many_gpus/many_gpus --gpus 4 --kernel ag_unfused,rs_unfused --shapes 8192x28672x8192
//
// The reduce-scatter sums in NCCL's order, fixed for a communicator, a count and a type (the
// ring or tree, the channels and the protocol are chosen from those alone, unless NCCL_ALGO or
// NCCL_PROTO change): the same bits every run (the determinism test runs it twice), though not
// the same bits as another number of GPUs or another NCCL.
#pragma once

#include "12_many_gpus/layer.cuh"

// Column-parallel: A (G S, K) gathered, rank-major: shard s lands at rows [s S, s S + S).
void launch_ag_unfused(Rank& rk, const AgLayer& l) {
  rk.reset();
  fork_streams(rk);
  const int sp = span_begin(rk.comm_stream, "NCCL all-gather");
  NCCL_CHECK(ncclAllGather(l.a_shard, l.a_full, size_t(l.S) * l.K, ncclBfloat16, rk.comm,
                           rk.comm_stream));
  span_end(sp);
  stream_waits(rk, 0, rk.comm_stream);  // the GEMM reads all of A: after the whole gather
  gemm(l.M, l.n.size(), l.K, l.a_full, l.w, l.c);
  join_streams(rk);
}

// Row-parallel: the partial (G S, N), then each rank's S rows of the sum over ranks.
void launch_rs_unfused(Rank& rk, const RsLayer& l) {
  rk.reset();
  fork_streams(rk);
  gemm(l.M, l.N, l.k.size(), l.a, l.w, l.partial);
  stream_waits(rk, rk.comm_stream, 0);  // NCCL sends the partial: after the GEMM wrote it
  const int sp = span_begin(rk.comm_stream, "NCCL reduce-scatter");
  NCCL_CHECK(ncclReduceScatter(l.partial, l.out, size_t(l.S) * l.N, ncclFloat, ncclSum, rk.comm,
                               rk.comm_stream));
  span_end(sp);
  join_streams(rk);
}

// The halves alone, on the same buffers: the GEMM of the whole layer's share of this rank, and
// NCCL's collective of the same bytes.
void launch_ag_gemm(Rank& rk, const AgLayer& l) {
  rk.reset();
  gemm(l.M, l.n.size(), l.K, l.a_full, l.w, l.c);
}
void launch_rs_gemm(Rank& rk, const RsLayer& l) {
  rk.reset();
  gemm(l.M, l.N, l.k.size(), l.a, l.w, l.partial);
}
void launch_ag_comm(Rank& rk, const AgLayer& l) {
  rk.reset();
  fork_streams(rk);
  NCCL_CHECK(ncclAllGather(l.a_shard, l.a_full, size_t(l.S) * l.K, ncclBfloat16, rk.comm,
                           rk.comm_stream));
  join_streams(rk);
}
void launch_rs_comm(Rank& rk, const RsLayer& l) {
  rk.reset();
  fork_streams(rk);
  NCCL_CHECK(ncclReduceScatter(l.partial, l.out, size_t(l.S) * l.N, ncclFloat, ncclSum, rk.comm,
                               rk.comm_stream));
  join_streams(rk);
}
