// Step 5: the GEMM waits per tile, not per piece. Step 3 cuts each shard into pieces and runs
// one GEMM launch per piece, each after its piece's copy: a piece of 1024 rows is a small GEMM
// (its last wave part-empty, its pipeline filled and drained again), and a launch cannot start
// before its whole piece is in. Here one persistent GEMM (steps/5_tile_wait_kernel.cuh) is
// launched first, before anything has arrived; the copies follow as in step 3 (on one stream,
// in a fixed order), and after each piece's copy the copy stream sets that piece's flag
// (cuStreamWriteValue32: written by the stream's front end after the copy's writes, with no
// kernel). --wait-pieces sets the pieces (default 4). The GEMM's tiles walk C's row
// blocks in the order their rows arrive (own shard first, then the peers' pieces:
// arrival_order, many_gpus.cuh), and each tile's producer waits only for the flags of its own
// rows. The last piece to arrive leaves one block row's worth of tiles to compute after it, not
// a piece's GEMM launch.
// The flags count launches (the target is this launch's number), so nothing resets them. A tile
// inside the own shard reads a_shard where it lies; where a block straddles the own shard's edge
// (S no multiple of 128), the own rows are first copied into a_full on stream 0.
// K % 8 != 0: TMA cannot describe the rows; such a layer takes step 3's path (chapter 09 pads).
// Counterparts: Flux (arXiv 2406.06858: the GEMM's tiles wait on signals set by the
// communication), CUTLASS example 65 (distributed GEMM: a GEMM per step, waiting per step).
//
//   build/12_many_gpus/many_gpus --gpus 4 --kernel ag_copy_engine,ag_tile_wait --chunks 4
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_cuStreamWriteValue32

#include <map>
#include <tuple>

#include "12_many_gpus/layer.cuh"
#include "12_many_gpus/tile_wait.h"
#include "common/matrix.h"  // DeviceBuffer
#include "12_many_gpus/steps/3_copy_engine.cuh"  // K % 8 != 0

// *flag = value on stream s, after the stream's earlier work, its writes made visible first
// (CU_STREAM_WRITE_VALUE_DEFAULT: a memory barrier before the write). A driver function,
// reached through the runtime (common/check.h, driver_function).
inline void write_flag(cudaStream_t s, unsigned* flag, unsigned value) {
  static const auto fn = reinterpret_cast<PFN_cuStreamWriteValue32_v11070>(
      driver_function("cuStreamWriteValue32", 11070));
  const CUresult r = fn(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(flag), value,
                        CU_STREAM_WRITE_VALUE_DEFAULT);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "error: cuStreamWriteValue32 failed (%d)\n", int(r));
    std::exit(1);
  }
}

// The flags (one per piece of every shard, zero at first) and the launch count of this process
// (one rank), and each shape's order of blocks on the device, made once (prepare_ag_tile_wait,
// from main.cu's warm-up, outside the timed runs).
struct TileWaitState {
  DeviceBuffer<unsigned> ready;
  unsigned launches = 0;
  std::map<std::tuple<int64_t, int, int, int>, DeviceBuffer<BlockWait>> plans;
};
inline TileWaitState& tile_wait_state() {
  static TileWaitState st;
  return st;
}
inline const BlockWait* prepare_ag_tile_wait(const Rank& rk, const AgLayer& l) {
  TileWaitState& st = tile_wait_state();
  if (!st.ready.get()) {
    st.ready = DeviceBuffer<unsigned>(size_t(kMaxGpus) * kMaxPieces);
    CUDA_CHECK(cudaMemset(st.ready.get(), 0, st.ready.size() * sizeof(unsigned)));
  }
  const auto key = std::make_tuple(int64_t(l.M), rk.gpus, rk.rank, l.wait_pieces);
  auto it = st.plans.find(key);
  if (it == st.plans.end()) {
    const std::vector<BlockWait> order = arrival_order(l.M, rk.gpus, rk.rank, l.wait_pieces);
    DeviceBuffer<BlockWait> d(std::max<size_t>(order.size(), 1));
    if (!order.empty())
      CUDA_CHECK(cudaMemcpy(d.get(), order.data(), order.size() * sizeof(BlockWait),
                            cudaMemcpyHostToDevice));
    it = st.plans.emplace(key, std::move(d)).first;
  }
  return it->second.get();
}
// Whether some block reads own rows from a_full (a block across the own shard's edge).
inline bool own_rows_in_full(int64_t M, int G, int r) {
  const int64_t S = shard_rows(M, G);
  return (r * S) % kArrivalBlock != 0 || (r * S + S) % kArrivalBlock != 0;
}

void launch_ag_tile_wait(Rank& rk, const AgLayer& l) {
  if (l.K % 8 != 0) return launch_ag_copy_engine(rk, l);
  const int G = rk.gpus, r = rk.rank;
  const int64_t Nr = l.n.size();
  if (Nr == 0 || l.M == 0) return;  // no columns here: nothing to compute, nothing to fetch
  TileWaitState& st = tile_wait_state();
  const BlockWait* blocks = prepare_ag_tile_wait(rk, l);
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
    for (int p = 0; p < l.wait_pieces; ++p) write_flag(0, ready + r * l.wait_pieces + p, target);
  }
  // One GEMM for the whole layer, launched first: its own shard's tiles start at once, the
  // others wait for their rows.
  const TileWait wait{blocks, ready, target, int(r * l.S)};
  const int sp = span_begin(0, "GEMM (tiles wait)");
  launch_ag_tile_wait_gemm(l.M, int(Nr), l.K, l.a_shard, int(l.S), l.a_full, int(G * l.S), l.w,
                           l.c, /*group=*/8, wait);
  span_end(sp);
  // Then every pull, on one stream in the order arrival_order assumes: piece 0 of every peer
  // (step 1, 2, ...), then piece 1, ... The copy engines move one peer's piece at a time anyway
  // (measured: pulls on G - 1 streams ran one after another, at 330 GB/s each); one stream
  // makes the order the GEMM's. Each piece's flag is set after its copy (a piece with no real
  // rows too: a block's flags are a contiguous range).
  for (int p = 0; p < l.wait_pieces; ++p) {
    const Range piece = piece_rows(l.S, l.wait_pieces, p);
    for (int j = 1; j < G; ++j) {
      const int from = ag_from(r, G, j);
      const Range theirs = shard_real_rows(l.M, G, from);
      const int64_t rows = std::max<int64_t>(0, std::min(piece.end, theirs.size()) - piece.begin);
      if (rows > 0)
        pull(l.a_full + (from * l.S + piece.begin) * l.K, l.peer_shard[from] + piece.begin * l.K,
             size_t(rows) * l.K * sizeof(bf16), copy, from);
      write_flag(copy, ready + from * l.wait_pieces + p, target);
    }
  }
  if (G > 1) stream_waits(rk, 0, copy);
  join_streams(rk);
}

// Step 5's GEMM alone, for the limit beside step 5 (main.cu): every flag already passes (target
// 0), the rows as a_full holds them, nothing copied.
void launch_ag_gemm_tiles(Rank& rk, const AgLayer& l) {
  rk.reset();
  if (l.K % 8 != 0 || l.n.size() == 0 || l.M == 0)
    return gemm(l.M, l.n.size(), l.K, l.a_full, l.w, l.c);
  const TileWait wait{prepare_ag_tile_wait(rk, l), tile_wait_state().ready.get(), 0u,
                      int(rk.rank * l.S)};
  launch_ag_tile_wait_gemm(l.M, int(l.n.size()), l.K, l.a_shard, int(l.S), l.a_full,
                           int(rk.gpus * l.S), l.w, l.c, /*group=*/8, wait);
}
