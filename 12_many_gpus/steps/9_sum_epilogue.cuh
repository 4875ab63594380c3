// Step 9: the sum in the own rows' epilogue. Step 8 sums a piece once all its terms are in, in
// a kernel of its own: the own rows' GEMM first writes its partial in FP32 (4 bytes an
// element), the sum reads it back with the G - 1 BF16 terms and writes the output, and the last
// piece's sum can only start when the GEMM has ended (step 8's timeline: 341 us after it at
// 8192x28672x8192, TP = 4). Here the own rows' GEMM is one launch of step 5's kernel that adds
// the terms itself (launch_gemm_sum_terms). After a tile's K tiles, its producer waits for the
// flags of its rows' pieces of every term (set on the copy stream after each pull, as step 5's
// flags) and loads those rows of each term into the pipeline's stages by TMA, as it loads K
// tiles; the consumers add them to the accumulators in a fixed order (own, then from r - 1,
// ..., from r - G + 1: the same every run) and store the output once. The own partial never
// goes to memory, the sum needs no SM of its own, and after the GEMM's last tile nothing is left.
// The terms come in time: the last peer computes this rank's rows one step before this rank
// computes its own (rs_to), so each piece has a step's GEMM time to be pulled.
// Measured first with the terms read from global memory by each thread in the epilogue
// (NOTES.md, run 6): the own rows' GEMM took 2.9-4.5x its time without them; not kept.
// K_r == 0, K_r % 8 != 0 or N % 8 != 0 (no TMA rows): step 8's path; the handshake is step 8's,
// so ranks that take different paths still meet.
// Counterparts: Flux (arXiv 2406.06858) reduces in its GEMM's epilogue too, the other way round:
// each tile's epilogue writes its partial to the owner (its epilogue_reduce_scatter); here the
// owner's epilogue reads what the copy engines brought. CUTLASS's epilogues load a source
// matrix C by TMA into shared memory the same way (its TMA warp-specialized epilogue).
//
//   build/12_many_gpus/many_gpus --gpus 4 --kernel rs_one_sum,rs_sum_epilogue
#pragma once

#include "12_many_gpus/layer.cuh"
#include "12_many_gpus/tile_wait.h"  // launch_gemm_sum_terms, EpilogueTerms
#include "common/matrix.h"  // DeviceBuffer
#include "12_many_gpus/steps/5_tile_wait.cuh"  // write_flag
#include "12_many_gpus/steps/8_one_sum.cuh"    // K_r % 8 != 0

// The flags (term j's piece p: j * pieces + p), zero at first, counting launches as step 5's:
// made once, from main.cu's warm-up, outside the timed runs.
inline unsigned* sum_flags() {
  static DeviceBuffer<unsigned> d;
  if (!d.get()) {
    d = DeviceBuffer<unsigned>(size_t(kMaxGpus) * kMaxPieces);
    CUDA_CHECK(cudaMemset(d.get(), 0, d.size() * sizeof(unsigned)));
  }
  return d.get();
}

void launch_rs_sum_epilogue(Rank& rk, const RsLayer& l) {
  const int G = rk.gpus, r = rk.rank;
  const int64_t N = l.N, Kr = l.k.size(), slot = l.S * N;
  if (G == 1 || Kr == 0 || Kr % 8 != 0 || N % 8 != 0) return launch_rs_one_sum(rk, l);
  RsSignals& sig = *l.signals;
  const int64_t launch = ++sig.launches;  // the same count on every rank
  rk.reset();
  fork_streams(rk);
  // recv16 may be read by the previous launch's GEMM until stream 0 began this launch.
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
      gemm_bf16(rows, N, Kr, l.a + (theirs.begin + piece.begin) * Kr, l.w,
                l.stage16 + j * slot + piece.begin * N, l.stage + j * slot + piece.begin * N);
      CUDA_CHECK(cudaEventRecord(sig.written[j][p], 0));  // recorded, then said so
      sig.mine->written_at[j][p].store(launch, std::memory_order_release);
    }
  }
  // The own rows, last, in one launch that adds the terms in its epilogue: terms 0 .. G - 2 are
  // the pulls from rs_from(r, 1), ..., rs_from(r, G - 1) (receive slots 1 .. G - 1).
  EpilogueTerms terms{};
  terms.slots = l.recv16;  // term j - 1 in slot j: the pulls from rs_from(r, j)
  terms.count = G - 1;
  unsigned* ready = sum_flags();
  terms.ready = ready;
  terms.target = unsigned(launch);  // flags count launches (wrapping), as step 5's
  terms.pieces = l.pieces;
  terms.shard = l.S;
  if (own.size() > 0) {
    const int sp = span_begin(0, "GEMM", own.size(), "rows + terms");
    launch_gemm_sum_terms(int(own.size()), int(N), int(Kr), l.a + own.begin * Kr, l.w, l.out,
                          identity_blocks(own.size()), terms);
    span_end(sp);
  }
  // Every pull, each peer's on its own stream, BF16 into receive area recv16; after each piece,
  // its flag (the GEMM above is already waiting for it).
  for (int j = 1; j < G; ++j) {
    const int from = rs_from(r, G, j);
    cudaStream_t copy = rk.copy_streams[j - 1];
    for (int p = 0; p < l.pieces; ++p) {
      const Range piece = piece_rows(l.S, l.pieces, p);
      const int64_t rows = std::max<int64_t>(0, std::min(piece.end, own.size()) - piece.begin);
      if (rows == 0) continue;  // no own rows there: no tile waits for it
      // This launch's record of the piece's event first, then the wait on it.
      wait_flag(rk, sig.of[from]->written_at[j][p], launch, from, "a piece of partial rows");
      CUDA_CHECK(cudaStreamWaitEvent(copy, sig.peer_written[j][p], 0));
      pull(l.recv16 + j * slot + piece.begin * N,
           l.peer_stage16[from] + j * slot + piece.begin * N, size_t(rows) * N * sizeof(bf16),
           copy, from);
      write_flag(copy, ready + (j - 1) * l.pieces + p, terms.target);
    }
    CUDA_CHECK(cudaEventRecord(sig.pulled[j], copy));  // every piece from `from` is here
    sig.mine->pulled_at[j].store(launch, std::memory_order_release);
  }
  for (int j = 1; j < G; ++j) stream_waits(rk, 0, rk.copy_streams[j - 1]);
  join_streams(rk);
}
