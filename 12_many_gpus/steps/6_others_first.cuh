// Step 6: the reduce-scatter's GEMM computes the others' rows first. Step 4 computes its own
// rows first (they go straight into the output, no exchange), then the rows of each peer in
// turn: the first piece a peer can pull is ready a G-th of the GEMM in, and the last only at
// the GEMM's end, so the exchange (the longer half at most of the issue's shapes) starts late.
// Here the GEMM computes the rows of rs_to(r, 1), ..., rs_to(r, G - 1) first, into the stage
// as in step 4, and its own rows last, into receive slot 0; the pulls start a G-th of the GEMM
// earlier, and the own rows are computed while the last pulls run.
// Measured first with the own rows added last (4x H100, 8192x28672x8192, TP = 4, 2 pieces): the
// own rows' add (235 MB) then ran after the last pull and was most of a 0.6 ms tail (NOTES.md).
// The sum keeps a fixed order, another than step 4's, in which its terms are ready: out =
// from(r, 1) (pulled straight into the output, no add), + from(r, 2), ..., + own rows (computed
// while the last peer's partial is pulled), + from(r, G - 1) (the last to arrive); at G = 2,
// from(r, 1) + own. The same bits every run (--twice), not step 4's bits.
// The handshake (written, pulled) is step 4's, unchanged.
//
//   build/12_many_gpus/many_gpus --gpus 4 --kernel rs_copy_engine,rs_others_first --chunks 2
#pragma once

#include "12_many_gpus/layer.cuh"
#include "12_many_gpus/steps/2_chunked.cuh"  // launch_add_partial
#include "12_many_gpus/steps/4_copy_engine_rs.cuh"  // the signals

void launch_rs_others_first(Rank& rk, const RsLayer& l) {
  const int G = rk.gpus, r = rk.rank;
  const int64_t N = l.N, Kr = l.k.size(), slot = l.S * N;
  RsSignals& sig = *l.signals;
  const int64_t launch = ++sig.launches;  // the same count on every rank
  rk.reset();
  fork_streams(rk);
  // recv may be read by the previous launch's sums until stream 0 began this launch.
  for (int j = 1; j < G; ++j) stream_waits(rk, rk.copy_streams[j - 1], 0);
  // The rows of rs_to(r, j) into stage slot j, j = 1 .. G - 1; the own rows come last.
  const Range own = shard_real_rows(l.M, G, r);
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
  // The own rows, last: into out where no peer adds (G = 1), else into receive slot 0, free.
  float* own_rows = G == 1 ? l.out : l.recv;
  for (int p = 0; p < l.pieces; ++p) {
    const Range piece = piece_rows(l.S, l.pieces, p);
    const int64_t rows = std::max<int64_t>(0, std::min(piece.end, own.size()) - piece.begin);
    gemm(rows, N, Kr, l.a + (own.begin + piece.begin) * Kr, l.w, own_rows + piece.begin * N);
  }
  // + own rows, on the sum stream after the GEMMs (all enqueued above, the own rows last).
  auto add_own = [&] {
    stream_waits(rk, rk.sum_stream, 0);  // the own rows are in slot 0
    launch_add_partial(l.out, l.recv, own.size() * N, rk.sum_stream);
  };
  // Every pull, each peer's on its own stream: from(r, 1)'s straight into out, the others' each
  // added when it has arrived, in the sum's order on the sum stream.
  for (int j = 1; j < G; ++j) {
    const int from = rs_from(r, G, j);
    cudaStream_t copy = rk.copy_streams[j - 1];
    if (j == G - 1 && G > 2) add_own();  // before the last peer's terms
    for (int p = 0; p < l.pieces; ++p) {
      const Range piece = piece_rows(l.S, l.pieces, p);
      const int64_t rows = std::max<int64_t>(0, std::min(piece.end, own.size()) - piece.begin);
      if (rows == 0) continue;
      // This launch's record of the piece's event first, then the wait on it.
      wait_flag(rk, sig.of[from]->written_at[j][p], launch, from, "a piece of partial rows");
      CUDA_CHECK(cudaStreamWaitEvent(copy, sig.peer_written[j][p], 0));
      float* got = (j == 1 ? l.out : l.recv + j * slot) + piece.begin * N;
      pull(got, l.peer_stage[from] + j * slot + piece.begin * N, size_t(rows) * N * sizeof(float),
           copy, from);
      stream_waits(rk, rk.sum_stream, copy);  // the piece has arrived
      // In step order on one stream: out = from(r, 1) + from(r, 2) + ... + own, every run.
      if (j > 1) launch_add_partial(l.out + piece.begin * N, got, rows * N, rk.sum_stream);
    }
    CUDA_CHECK(cudaEventRecord(sig.pulled[j], copy));  // every piece from `from` is here
    sig.mine->pulled_at[j].store(launch, std::memory_order_release);
  }
  if (G == 2) add_own();  // from(r, 1) + own
  for (int j = 1; j < G; ++j) stream_waits(rk, 0, rk.copy_streams[j - 1]);
  join_streams(rk);
}
