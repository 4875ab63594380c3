// Step 10: the GEMM waits per K slice, not per row. Step 5's tile waits until all of its rows
// have arrived, every K of them: a tile whose rows come last starts only then, and takes a whole
// tile's time after the last copy (8192x8192x28672, TP = 4: a 128 x 256 tile at K = 28672 is
// about 0.3 ms; step 5 ends 0.3 ms after its last piece lands). Here each peer's shard is pulled
// whole, one shard after another (the order step 5's blocks assume with one piece a shard), but
// in K slices: slice c of a shard is columns split_range(K, slices, 64, c) of all its rows, a
// strided copy (cudaMemcpy2DAsync, still a copy engine's work), and its flag is set after it.
// A tile's producer waits before the first K tile of each slice, for that slice alone
// (TileWait::slices), so a tile runs through K while its rows are still arriving, and after the
// last slice lands only that slice's share of a tile is left. --wait-pieces sets the slices
// (default 4).
// K % 8 != 0: TMA cannot describe the rows; such a layer takes step 3's path, as step 5's.
// Counterparts: Flux (arXiv 2406.06858) and PyTorch's async-TP wait for whole rows, per tile or
// per chunk, as step 5 does.
//
//   build/12_many_gpus/many_gpus --gpus 4 --kernel ag_tile_wait,ag_slice_wait
#pragma once

#include "12_many_gpus/layer.cuh"
#include "12_many_gpus/tile_wait.h"
#include "12_many_gpus/steps/5_tile_wait.cuh"  // write_flag, the flags, own_rows_in_full

// The row blocks in shard order (step 5's order with one piece a shard: a block's flags are the
// shards its rows touch), made once outside the timed runs, as step 5's.
inline const BlockWait* prepare_ag_slice_wait(const Rank& rk, const AgLayer& l) {
  AgLayer one = l;
  one.wait_pieces = 1;
  return prepare_ag_tile_wait(rk, one);
}

void launch_ag_slice_wait(Rank& rk, const AgLayer& l) {
  if (l.K % 8 != 0) return launch_ag_copy_engine(rk, l);
  const int G = rk.gpus, r = rk.rank, slices = l.wait_pieces;
  const int64_t Nr = l.n.size();
  if (Nr == 0 || l.M == 0) return;  // no columns here: nothing to compute, nothing to fetch
  TileWaitState& st = tile_wait_state();
  const BlockWait* blocks = prepare_ag_slice_wait(rk, l);
  const unsigned target = ++st.launches;
  unsigned* ready = st.ready.get();
  rk.reset();
  fork_streams(rk);
  // The copy stream starts after stream 0's earlier work (a_full may be read by the previous
  // launch's GEMM until then), and not after the GEMM below, which waits for its copies.
  cudaStream_t copy = G > 1 ? rk.copy_streams[0] : nullptr;
  if (G > 1) stream_waits(rk, copy, 0);
  // Own rows that a block reads from a_full: copied there first, in stream order before the GEMM.
  if (own_rows_in_full(l.M, G, r)) {
    const Range own = shard_real_rows(l.M, G, r);
    if (own.size() > 0)
      CUDA_CHECK(cudaMemcpyAsync(l.a_full + r * l.S * l.K, l.a_shard,
                                 size_t(own.size()) * l.K * sizeof(bf16),
                                 cudaMemcpyDeviceToDevice, 0));
    for (int c = 0; c < slices; ++c) write_flag(0, ready + r * slices + c, target);
  }
  // One GEMM for the whole layer, launched first: its own shard's tiles start at once, the
  // others wait, slice by slice.
  TileWait wait{blocks, ready, target, int(r * l.S)};
  wait.slices = slices;
  const int sp = span_begin(0, "GEMM (slices wait)");
  launch_ag_tile_wait_gemm(l.M, int(Nr), l.K, l.a_shard, int(l.S), l.a_full, int(G * l.S), l.w,
                           l.c, /*group=*/8, wait);
  span_end(sp);
  // Then every pull on one stream: the shard of ag_from(r, 1) slice by slice, then the next
  // peer's. Each slice's flag is set after its copy (an empty slice's too).
  for (int j = 1; j < G; ++j) {
    const int from = ag_from(r, G, j);
    const Range theirs = shard_real_rows(l.M, G, from);
    for (int c = 0; c < slices; ++c) {
      const Range cols = split_range(l.K, slices, kKUnit, c);
      if (theirs.size() > 0 && cols.size() > 0) {
        const int sp_copy = span_begin(copy, "pull from", from);
        CUDA_CHECK(cudaMemcpy2DAsync(l.a_full + from * l.S * l.K + cols.begin,
                                     size_t(l.K) * sizeof(bf16),
                                     l.peer_shard[from] + cols.begin, size_t(l.K) * sizeof(bf16),
                                     size_t(cols.size()) * sizeof(bf16), size_t(theirs.size()),
                                     cudaMemcpyDeviceToDevice, copy));
        span_end(sp_copy);
      }
      write_flag(copy, ready + from * slices + c, target);
    }
  }
  if (G > 1) stream_waits(rk, 0, copy);
  join_streams(rk);
}
