// Step 3: communication without SMs (the column-parallel layer). Step 2's NCCL kernels run on
// SMs that the persistent GEMM wants; here the shards move with the copy engines instead: each
// rank pulls every other rank's shard, piece by piece, with cudaMemcpyAsync from the peer's
// memory (opened once per shape through CUDA IPC: cudaIpcGetMemHandle, cudaIpcOpenMemHandle;
// main.cu, open_peer_shards) into its gathered A, one copy stream per peer so that the copy
// engines work side by side. The GEMM of each piece waits for that piece's copy only, as in
// step 2, and keeps every SM. A pull needs no signal from the peer: a shard is an input, written
// before the layer starts and never again.
// Counterparts: PyTorch's async-TP (fused_all_gather_matmul copies the shards with the copy
// engines from symmetric memory), NCCL 2.28's copy-engine collectives on symmetric windows.
//
//   build/12_many_gpus/many_gpus --gpus 4 --kernel ag_chunked,ag_copy_engine --chunks 2
#pragma once

#include "12_many_gpus/layer.cuh"

void launch_ag_copy_engine(Rank& rk, const AgLayer& l) {
  const int G = rk.gpus, r = rk.rank;
  const int64_t Nr = l.n.size();
  rk.reset();
  fork_streams(rk);
  // Every copy first, each peer's on its own stream.
  std::vector<cudaEvent_t> arrived(size_t(G) * l.pieces, nullptr);
  for (int j = 1; j < G; ++j) {
    const int from = ag_from(r, G, j);
    cudaStream_t copy = rk.copy_streams[j - 1];
    stream_waits(rk, copy, 0);  // a_full may be read by the previous launch's GEMMs until then
    const Range theirs = shard_real_rows(l.M, G, from);
    for (int p = 0; p < l.pieces; ++p) {
      const Range piece = piece_rows(l.S, l.pieces, p);
      const int64_t rows = std::max<int64_t>(0, std::min(piece.end, theirs.size()) - piece.begin);
      if (rows == 0) continue;
      pull(l.a_full + (from * l.S + piece.begin) * l.K, l.peer_shard[from] + piece.begin * l.K,
           size_t(rows) * l.K * sizeof(bf16), copy, from);
      arrived[size_t(j) * l.pieces + p] = rk.event();
      CUDA_CHECK(cudaEventRecord(arrived[size_t(j) * l.pieces + p], copy));
    }
  }
  // The GEMMs, own shard first; piece p of shard `from` waits for its own copy only.
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
  for (int j = 1; j < G; ++j) stream_waits(rk, 0, rk.copy_streams[j - 1]);
  join_streams(rk);
}
