// Step 4: communication without SMs (the row-parallel layer). Step 2's reduce-scatter sends each
// piece of partial rows with NCCL's kernels, on SMs that the persistent GEMM wants; here each
// rank pulls the pieces of its own rows from its peers' memory instead, with cudaMemcpyAsync
// from their stage (opened once per shape through CUDA IPC; main.cu, PeerBuffers) into its
// receive area, one copy stream per peer so that the copy engines work side by side, and adds
// each piece into its output on the sum stream in step order (own rows, then from r - 1, r - 2,
// ...): the same order every run, so the same bits (--twice). The adds are the one kernel of
// the exchange, and a small one (launch_add_partial: at most 132 blocks of 256 threads).
// Unlike step 3's shards, a partial is written during the layer, by the peer's GEMM, so a pull
// waits for a signal, and the peer must not overwrite a piece that has not been pulled:
//   written: after the GEMM of piece p of slot j, the producer records its IPC event
//     written[j][p] on stream 0, then sets written_at[j][p] to this launch's number (shared
//     memory, release). The consumer spins on the host (wait_flag, bounded by --timeout) until
//     it reads this launch there, and only then enqueues its copy stream's wait on the event:
//     cudaStreamWaitEvent waits for the record that is the latest at the time of the call.
//   pulled: after its last copy from a peer, the consumer records pulled[j] on that copy stream
//     and sets pulled_at[j]; before its GEMM writes slot j again, the producer waits, on the
//     host and then on stream 0, for the previous launch's pulled[j] of the rank it writes for.
// Each handshake also keeps the other's event from being recorded again before its wait is
// enqueued: a producer records written[j] of the next launch only after the consumer has
// recorded pulled[j], which it does after enqueueing its waits on written[j].
// Counterparts: PyTorch's async-TP (fused_matmul_reduce_scatter: the partials in symmetric
// memory, the reduction by kernels), TransformerEngine's userbuffers (the reduce-scatter by the
// copy engines where it can, with flags in peer memory).
//
//   build/12_many_gpus/many_gpus --gpus 4 --kernel rs_chunked,rs_copy_engine --chunks 2
#pragma once

#include "12_many_gpus/layer.cuh"
#include "12_many_gpus/steps/2_chunked.cuh"  // launch_add_partial

void launch_rs_copy_engine(Rank& rk, const RsLayer& l) {
  const int G = rk.gpus, r = rk.rank;
  const int64_t N = l.N, Kr = l.k.size(), slot = l.S * N;
  RsSignals& sig = *l.signals;
  const int64_t launch = ++sig.launches;  // the same count on every rank
  rk.reset();
  fork_streams(rk);
  // recv may be read by the previous launch's sums until stream 0 began this launch.
  for (int j = 1; j < G; ++j) stream_waits(rk, rk.copy_streams[j - 1], 0);
  // Own rows first, straight into out; then the rows of rs_to(r, j) into stage slot j.
  const Range own = shard_real_rows(l.M, G, r);
  for (int p = 0; p < l.pieces; ++p) {
    const Range piece = piece_rows(l.S, l.pieces, p);
    const int64_t rows = std::max<int64_t>(0, std::min(piece.end, own.size()) - piece.begin);
    gemm(rows, N, Kr, l.a + (own.begin + piece.begin) * Kr, l.w, l.out + piece.begin * N);
  }
  stream_waits(rk, rk.sum_stream, 0);  // the sums add into out: after the own rows are in it
  for (int j = 1; j < G; ++j) {
    const int to = rs_to(r, G, j);
    const Range theirs = shard_real_rows(l.M, G, to);
    // Slot j is written again only after `to` has pulled the previous launch's pieces.
    wait_flag(rk, sig.of[to]->pulled_at[j], launch - 1, to, "pulls of the previous launch");
    CUDA_CHECK(cudaStreamWaitEvent(0, sig.peer_pulled[j], 0));
    for (int p = 0; p < l.pieces; ++p) {
      const Range piece = piece_rows(l.S, l.pieces, p);
      const int64_t rows = std::max<int64_t>(0, std::min(piece.end, theirs.size()) - piece.begin);
      gemm(rows, N, Kr, l.a + (theirs.begin + piece.begin) * Kr, l.w,
           l.stage + j * slot + piece.begin * N);
      CUDA_CHECK(cudaEventRecord(sig.written[j][p], 0));  // recorded, then said so
      sig.mine->written_at[j][p].store(launch, std::memory_order_release);
    }
  }
  // Every pull, each peer's on its own stream; each piece added when it has arrived.
  for (int j = 1; j < G; ++j) {
    const int from = rs_from(r, G, j);
    cudaStream_t copy = rk.copy_streams[j - 1];
    for (int p = 0; p < l.pieces; ++p) {
      const Range piece = piece_rows(l.S, l.pieces, p);
      const int64_t rows = std::max<int64_t>(0, std::min(piece.end, own.size()) - piece.begin);
      if (rows == 0) continue;
      // This launch's record of the piece's event first, then the wait on it.
      wait_flag(rk, sig.of[from]->written_at[j][p], launch, from, "a piece of partial rows");
      CUDA_CHECK(cudaStreamWaitEvent(copy, sig.peer_written[j][p], 0));
      float* got = l.recv + j * slot + piece.begin * N;
      pull(got, l.peer_stage[from] + j * slot + piece.begin * N, size_t(rows) * N * sizeof(float),
           copy, from);
      stream_waits(rk, rk.sum_stream, copy);  // the piece has arrived
      // In step order on one stream: out = own + from(r, 1) + from(r, 2) + ..., every run.
      launch_add_partial(l.out + piece.begin * N, got, rows * N, rk.sum_stream);
    }
    CUDA_CHECK(cudaEventRecord(sig.pulled[j], copy));  // every piece from `from` is here
    sig.mine->pulled_at[j].store(launch, std::memory_order_release);
  }
  for (int j = 1; j < G; ++j) stream_waits(rk, 0, rk.copy_streams[j - 1]);
  join_streams(rk);
}
