// Chapter 12, step 5: what the host tells the GEMM that waits per tile (steps/5_tile_wait.cuh
// builds it; steps/5_tile_wait_kernel.cuh, compiled for sm_90a in kernels.cu, reads it). No
// NCCL here, so that the sm_90a object needs only the toolkit's headers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "12_many_gpus/many_gpus.cuh"  // BlockWait, arrival_order

// The waits of one launch: C's 128-row blocks in the order they are taken (arrival_order: the
// block, the flags of the pieces its rows touch, or none for a block of the own shard, which
// reads a_shard), the flags and the number a flag must reach.
struct TileWait {
  const BlockWait* blocks;  // (tiles_m): the row blocks in arrival order
  const unsigned* ready;    // one flag per piece of every shard
  unsigned target;          // this launch's number: a flag at least this has arrived
  int own_row0;             // the own shard's first row in the layer (rank * S)
  // Step 10: 0, or the K slices of every shard (split_range(K, slices, 64, c)), a flag each:
  // then a block's flags [first, last] are the shards its rows touch (arrival_order with one
  // piece), and its producer waits for flag s * slices + c before its first K tile of slice c.
  int slices = 0;
};

// C (M, N) = A (M, K) Bt (N, K)^T, A's rows from a_shard (own_rows of them, the layer's rows
// wait.own_row0 on) or a_full (full_rows), in the order and with the waits of `wait`. K % 8 == 0
// (TMA's 16-byte rows). On stream 0.
void launch_ag_tile_wait_gemm(int M, int N, int K, const __nv_bfloat16* a_shard, int own_rows,
                              const __nv_bfloat16* a_full, int full_rows,
                              const __nv_bfloat16* Bt, float* C, int group, const TileWait& wait);

// Step 9: what the own rows' GEMM adds in its epilogue before it stores: the G - 1 BF16 terms of
// its rows that the copy engines pulled from the peers, term j in slot j + 1 of the receive area
// (rows (j + 1) shard + m), each piece of a term behind a flag that the copy stream sets after
// the piece's pull.
struct EpilogueTerms {
  const __nv_bfloat16* slots;  // (count + 1) shard rows of N: the receive area, slot 0 unused
  int count;                   // how many terms; 0 in steps 5 and 7 (nothing added)
  const unsigned* ready;       // flag j * pieces + p: piece p of term j is here
  unsigned target;             // this launch's number
  int pieces;                  // the pieces of the rows (piece_rows(shard, pieces, p))
  long long shard;             // the rows of a slot (the shard's S), which the pieces cut
};

// Step 7: C (M, N) BF16 = A (M, K) Bt (N, K)^T, rounded in the epilogue (the same kernel, no
// waits: `blocks` holds block m = m, no flags, at least ceil(M / 128) of them). K % 8 == 0.
void launch_gemm_bf16_out(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* Bt,
                          __nv_bfloat16* C, const BlockWait* blocks);

// Step 9: C (M, N) FP32 = A (M, K) Bt (N, K)^T + term 0 + term 1 + ..., added in that order in
// the epilogue of each tile, its rows of every term loaded by TMA once their pieces have arrived
// (the same kernel, no waits on A: `blocks` as in step 7). K % 8 == 0, N % 8 == 0 (TMA's rows).
// On stream 0.
void launch_gemm_sum_terms(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* Bt,
                           float* C, const BlockWait* blocks, const EpilogueTerms& terms);
