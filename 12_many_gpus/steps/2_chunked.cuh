// Step 2: chunks on two streams. The exchange is cut into G - 1 steps of point-to-point sends
// (every pair of GPUs is one NVSwitch hop: rank r sends straight to r + j, no ring relay) and
// each shard into `--chunks` pieces of rows, so that the GEMM of one piece runs on stream 0 while
// NCCL moves the next on the comm stream; events, not the host, order them.
//   all-gather: each rank multiplies its own shard first, which needs no wait, while the first
//     pieces of the others arrive; piece by piece, the GEMM waits only for its own piece.
//   reduce-scatter: each rank multiplies its own rows first, straight into its output, then the
//     rows of the others, one piece at a time, each sent as soon as it is written; the pieces it
//     receives are added into its output on a third stream, in the order of the steps (own rows,
//     then from r - 1, r - 2, ...): the same order every run, so the same bits (--twice).
// What is left in series: the first piece's transfer (all-gather) or the last (reduce-scatter),
// and NCCL's kernels take SMs from the GEMM while they run (NCCL_MIN_CTAS / NCCL_MAX_CTAS bound
// them; step 3's copy engines take none).
// Counterparts: PyTorch's fused_all_gather_matmul / fused_matmul_reduce_scatter (async-TP, one
// chunk per rank, symmetric memory), TransformerEngine's userbuffers ring exchange, Flux (arXiv
// 2406.06858: the same overlap fused into the GEMM's tiles), CUTLASS example 65 (distributed
// GEMM: one GEMM per step of a fixed peer order).
//
//   build/12_many_gpus/many_gpus --gpus 4 --kernel ag_chunked,rs_chunked --chunks 2
#pragma once

#include "12_many_gpus/layer.cuh"

// out (n floats) += part (n floats), float4 at a time where both are 16-byte aligned.
__global__ void add_partial_kernel(float* out, const float* part, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t i0 = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool vec = (reinterpret_cast<uintptr_t>(out) & 15) == 0 &&
                   (reinterpret_cast<uintptr_t>(part) & 15) == 0;
  const int64_t n4 = vec ? n / 4 : 0;
  for (int64_t i = i0; i < n4; i += stride) {
    float4 o = reinterpret_cast<float4*>(out)[i];
    const float4 p = reinterpret_cast<const float4*>(part)[i];
    o.x += p.x, o.y += p.y, o.z += p.z, o.w += p.w;
    reinterpret_cast<float4*>(out)[i] = o;
  }
  for (int64_t i = 4 * n4 + i0; i < n; i += stride) out[i] += part[i];
}
void launch_add_partial(float* out, const float* part, int64_t n, cudaStream_t s) {
  if (n <= 0) return;
  // Enough blocks to keep the DRAM busy, few enough to leave the GEMM its SMs: 4 per SM would
  // fill every SM at once; 132 blocks of 256 threads (one per SM, a quarter of its warps) still
  // stream at close to the copy rate (chapter 02).
  const int blocks = int(std::min<int64_t>(132, (n / 4 + 255) / 256 + 1));
  const int sp = span_begin(s, "add");
  add_partial_kernel<<<blocks, 256, 0, s>>>(out, part, n);
  CUDA_CHECK_LAUNCH();
  span_end(sp);
}

// Column-parallel, in pieces: rank r's own shard from a_shard, shard s (s != r) into rows
// [s S, s S + S) of a_full as it arrives; C's rows in place (M rows, N_r columns).
void launch_ag_chunked(Rank& rk, const AgLayer& l) {
  const int G = rk.gpus, r = rk.rank;
  const int64_t Nr = l.n.size();
  rk.reset();
  fork_streams(rk);
  // Every transfer first, so that NCCL starts while the host still enqueues the GEMMs.
  std::vector<cudaEvent_t> arrived(size_t(G) * l.pieces, nullptr);
  for (int j = 1; j < G; ++j) {
    const int to = ag_to(r, G, j), from = ag_from(r, G, j);
    for (int p = 0; p < l.pieces; ++p) {
      const Range mine = piece_rows(l.S, l.pieces, p);
      // The real rows only (the padding is never read): both sides compute the same counts.
      const Range own = shard_real_rows(l.M, G, r), theirs = shard_real_rows(l.M, G, from);
      const int64_t send_rows =
          std::max<int64_t>(0, std::min(mine.end, own.size()) - mine.begin);
      const int64_t recv_rows =
          std::max<int64_t>(0, std::min(mine.end, theirs.size()) - mine.begin);
      if (send_rows == 0 && recv_rows == 0) continue;
      const int sp = span_begin(rk.comm_stream, "NCCL send/recv");
      NCCL_CHECK(ncclGroupStart());  // the send and the receive of a step go together
      if (send_rows > 0)
        NCCL_CHECK(ncclSend(l.a_shard + mine.begin * l.K, size_t(send_rows) * l.K, ncclBfloat16,
                            to, rk.comm, rk.comm_stream));
      if (recv_rows > 0)
        NCCL_CHECK(ncclRecv(l.a_full + (from * l.S + mine.begin) * l.K, size_t(recv_rows) * l.K,
                            ncclBfloat16, from, rk.comm, rk.comm_stream));
      NCCL_CHECK(ncclGroupEnd());
      span_end(sp);
      arrived[size_t(j) * l.pieces + p] = rk.event();
      CUDA_CHECK(cudaEventRecord(arrived[size_t(j) * l.pieces + p], rk.comm_stream));
    }
  }
  // The GEMMs, own shard first; piece p of shard `from` waits for its own arrival only.
  for (int j = 0; j < G; ++j) {
    const int from = ag_from(r, G, j);
    const Range real = shard_real_rows(l.M, G, from);
    for (int p = 0; p < l.pieces; ++p) {
      const Range piece = piece_rows(l.S, l.pieces, p);
      const int64_t rows = std::max<int64_t>(0, std::min(piece.end, real.size()) - piece.begin);
      if (rows == 0) continue;
      if (cudaEvent_t e = arrived[size_t(j) * l.pieces + p])
        CUDA_CHECK(cudaStreamWaitEvent(0, e, 0));  // this piece is in a_full
      const bf16* a = j == 0 ? l.a_shard + piece.begin * l.K
                             : l.a_full + (from * l.S + piece.begin) * l.K;
      gemm(rows, Nr, l.K, a, l.w, l.c + (real.begin + piece.begin) * Nr);
    }
  }
  join_streams(rk);
}

// Row-parallel, in pieces: own rows first (the GEMM writes them into out), then for each step j
// the rows of rank rs_to(r, j) into send slot j, each piece sent when written; the piece
// received from rs_from(r, j) into recv slot j is added into out on the sum stream.
void launch_rs_chunked(Rank& rk, const RsLayer& l) {
  const int G = rk.gpus, r = rk.rank;
  const int64_t N = l.N, Kr = l.k.size(), slot = l.S * N;
  rk.reset();
  fork_streams(rk);
  const Range own = shard_real_rows(l.M, G, r);
  for (int p = 0; p < l.pieces; ++p) {
    const Range piece = piece_rows(l.S, l.pieces, p);
    const int64_t rows = std::max<int64_t>(0, std::min(piece.end, own.size()) - piece.begin);
    gemm(rows, N, Kr, l.a + (own.begin + piece.begin) * Kr, l.w, l.out + piece.begin * N);
  }
  stream_waits(rk, rk.sum_stream, 0);  // the sums add into out: after the own rows are in it
  for (int j = 1; j < G; ++j) {
    const int to = rs_to(r, G, j), from = rs_from(r, G, j);
    const Range theirs = shard_real_rows(l.M, G, to);
    for (int p = 0; p < l.pieces; ++p) {
      const Range piece = piece_rows(l.S, l.pieces, p);
      const int64_t send_rows =
          std::max<int64_t>(0, std::min(piece.end, theirs.size()) - piece.begin);
      const int64_t recv_rows =
          std::max<int64_t>(0, std::min(piece.end, own.size()) - piece.begin);
      float* sent = l.send + j * slot + piece.begin * N;
      float* got = l.recv + j * slot + piece.begin * N;
      gemm(send_rows, N, Kr, l.a + (theirs.begin + piece.begin) * Kr, l.w, sent);
      if (send_rows == 0 && recv_rows == 0) continue;
      stream_waits(rk, rk.comm_stream, 0);  // NCCL sends the piece: after the GEMM wrote it
      const int sp = span_begin(rk.comm_stream, "NCCL send/recv");
      NCCL_CHECK(ncclGroupStart());
      if (send_rows > 0)
        NCCL_CHECK(ncclSend(sent, size_t(send_rows) * N, ncclFloat, to, rk.comm, rk.comm_stream));
      if (recv_rows > 0)
        NCCL_CHECK(ncclRecv(got, size_t(recv_rows) * N, ncclFloat, from, rk.comm, rk.comm_stream));
      NCCL_CHECK(ncclGroupEnd());
      span_end(sp);
      if (recv_rows == 0) continue;
      stream_waits(rk, rk.sum_stream, rk.comm_stream);  // the piece has arrived
      // In step order on one stream: out = own + from(r, 1) + from(r, 2) + ..., every run.
      launch_add_partial(l.out + piece.begin * N, got, recv_rows * N, rk.sum_stream);
    }
  }
  join_streams(rk);
}
