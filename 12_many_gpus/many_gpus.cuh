// Chapter 12: one layer on many GPUs (tensor parallelism). How a layer's rows, columns and K are
// split between G GPUs ("ranks"), and in what order the chunks move; __host__ __device__ and
// free of NCCL, so that the host tests (12_many_gpus/test_shards.cpp) check the very functions
// the program calls. The ranks, the layers' buffers and the launchers are in layer.cuh.
//
// The two layers of a tensor-parallel MLP (Megatron-LM's column- and row-parallel linear layers),
// each the whole layer M x N x K: tokens M, outputs N, inputs K; W is N x K (chapter 09's Bt).
//   column-parallel ("ag"): rank r holds rows [r S, r S + S) of A (a sequence shard) and rows
//     n_r of W; it gathers all of A, then C_r (M, N_r) = A (M, K) W_r^T.
//   row-parallel ("rs"): rank r holds columns k_r of A and of W; its partial P_r (M, N) =
//     A[:, k_r] W[:, k_r]^T; the sum over ranks of P_r is reduce-scattered by rows: rank r keeps
//     rows [r S, r S + S) of sum_r P_r.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>  // __host__ __device__ (the host tests compile this with g++)

// A half-open range [begin, end).
struct Range {
  int64_t begin = 0, end = 0;
  __host__ __device__ constexpr int64_t size() const { return end - begin; }
};

__host__ __device__ constexpr int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Part `part` of `parts` of [0, total), cut at multiples of `unit` (the tail of total is in the
// last non-empty part): the units are dealt as evenly as integers allow, the first
// (units mod parts) parts one more. Parts past the last unit are empty. Contiguous, in order,
// together exactly [0, total).
__host__ __device__ constexpr Range split_range(int64_t total, int parts, int64_t unit, int part) {
  const int64_t units = (total + unit - 1) / unit, base = units / parts, extra = units % parts;
  const int64_t u0 = part * base + (part < extra ? part : extra);
  const int64_t u1 = u0 + base + (part < extra ? 1 : 0);
  const int64_t b = u0 * unit < total ? u0 * unit : total;
  const int64_t e = u1 * unit < total ? u1 * unit : total;
  return {b, e};
}

// --- Row shards (both layers) -----------------------------------------------------------------
// NCCL's all-gather and reduce-scatter move the same count from and to every rank, so M is padded
// up: every rank's shard has S rows, S = ceil(M / G) rounded up to a multiple of kShardAlign, and
// the layer has G S rows; the rows past M are zero (or ignored) and the GEMMs never compute them.
// kShardAlign = 8 keeps the first row of every shard 16-byte aligned in A (BF16, K % 8 == 0) and
// in C (FP32, N % 4 == 0), as TMA and the 16-byte epilogue want (chapter 09 copies unaligned
// operands first: pad_operands_if_unaligned).
constexpr int64_t kShardAlign = 8;
__host__ __device__ constexpr int64_t shard_rows(int64_t M, int G) {
  return round_up((M + G - 1) / G, kShardAlign);
}
// Rows [s S, s S + S) of the padded layer, clipped to M: the real rows of shard s (maybe none).
__host__ __device__ constexpr Range shard_real_rows(int64_t M, int G, int s) {
  const int64_t S = shard_rows(M, G), b = s * S < M ? s * S : M, e = s * S + S < M ? s * S + S : M;
  return {b, e};
}

// --- Column and K slices ----------------------------------------------------------------------
// The column-parallel layer's W rows (outputs) of rank r, in units of 64 (chapter 09's BN tiles
// are multiples of 64); the row-parallel layer's K slice of rank r, in units of 64 (BK): every
// slice but the last a whole number of K-tiles, and 16-byte aligned rows.
constexpr int64_t kNUnit = 64, kKUnit = 64;
__host__ __device__ constexpr Range column_slice(int64_t N, int G, int r) {
  return split_range(N, G, kNUnit, r);
}
__host__ __device__ constexpr Range k_slice(int64_t K, int G, int r) {
  return split_range(K, G, kKUnit, r);
}

// --- Chunks (step 2) ----------------------------------------------------------------------------
// A shard is moved and multiplied in `pieces` pieces of rows, cut at multiples of 64 rows (BM),
// so that a piece's GEMM has whole tiles but the last.
constexpr int64_t kPieceUnit = 64;
__host__ __device__ constexpr Range piece_rows(int64_t shard, int pieces, int p) {
  return split_range(shard, pieces, kPieceUnit, p);
}

// --- Step 5: the row blocks in the order their rows arrive --------------------------------------
// Step 5's GEMM takes C's 128-row blocks (kArrivalBlock) in the order their rows of A arrive and
// waits per block for the pieces its rows touch. Piece p of shard s has flag s * pieces + p (the
// flags of consecutive rows are consecutive). Step 5 pulls piece 0 of every peer (in step order
// j = 1, 2, ...), then piece 1, ..., one after another on one stream, so a block's rank in time
// is the latest of its pieces' (p G + j, j the step at which its shard arrives, ag_from(r, j) =
// s). A block inside the own shard needs no wait (first = last = -1) and goes first. Blocks of
// equal rank keep row order.
constexpr int64_t kArrivalBlock = 128;
struct BlockWait {
  int m, first, last;  // block m (rows [128 m, 128 m + 128)); flags [first, last], or -1: none
  int rank;            // when its last piece arrives (-1: own shard)
};
__host__ __device__ constexpr int piece_of(int64_t S, int pieces, int64_t row_in_shard) {
  int p = 0;
  while (p + 1 < pieces && piece_rows(S, pieces, p + 1).begin <= row_in_shard &&
         piece_rows(S, pieces, p + 1).size() > 0)
    ++p;
  return p;
}
inline std::vector<BlockWait> arrival_order(int64_t M, int G, int r, int pieces) {
  const int64_t S = shard_rows(M, G), own0 = r * S;
  const int tiles_m = int((M + kArrivalBlock - 1) / kArrivalBlock);
  std::vector<BlockWait> order;
  for (int m = 0; m < tiles_m; ++m) {
    const int64_t lo = m * kArrivalBlock, hi = lo + kArrivalBlock < M ? lo + kArrivalBlock : M;
    if (lo >= own0 && hi <= own0 + S) {
      order.push_back({m, -1, -1, -1});
      continue;
    }
    const int s_lo = int(lo / S), s_hi = int((hi - 1) / S);
    const int first = s_lo * pieces + piece_of(S, pieces, lo - s_lo * S);
    const int last = s_hi * pieces + piece_of(S, pieces, hi - 1 - s_hi * S);
    int when = 0;
    for (int f = first; f <= last; ++f) {
      const int s = f / pieces, p = f % pieces, j = (r - s + G) % G;
      when = p * G + j > when ? p * G + j : when;
    }
    order.push_back({m, first, last, when});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const BlockWait& a, const BlockWait& b) { return a.rank < b.rank; });
  return order;
}

// The order of the exchange, G - 1 steps after step 0 (every pair of GPUs is one NVLink hop
// through the NVSwitch, so each step is a direct send, not a ring's relay):
//   all-gather, step j: rank r sends its own shard to ag_to(r, j) and receives the shard of
//   ag_from(r, j); it multiplies its own shard at step 0 (no wait), then shard ag_from(r, j).
//   reduce-scatter, step j < G: rank r computes the partial rows owned by rs_to(r, j) and sends
//   them there, receiving its own rows' partial from rs_from(r, j); at step G it computes its
//   own rows' partial (no send), then sums the G partials of its rows in rank order 0 .. G - 1.
// Every rank meets every other exactly once as a sender and once as a receiver; at step j, the
// rank r sends to is the rank that receives from r (ag_from(ag_to(r, j), j) == r).
__host__ __device__ constexpr int ag_to(int r, int G, int j) { return (r + j) % G; }
__host__ __device__ constexpr int ag_from(int r, int G, int j) { return (r - j % G + G) % G; }
__host__ __device__ constexpr int rs_to(int r, int G, int j) { return ag_to(r, G, j); }
__host__ __device__ constexpr int rs_from(int r, int G, int j) { return ag_from(r, G, j); }

static_assert(shard_rows(8192, 4) == 2048 && shard_rows(5, 4) == 8, "S = ceil(M / G), to 8");
static_assert(split_range(100, 3, 64, 0).size() == 64 && split_range(100, 3, 64, 1).size() == 36 &&
                  split_range(100, 3, 64, 2).size() == 0,
              "units dealt in order, the tail in the last non-empty part");
static_assert(ag_from(ag_to(3, 4, 1), 4, 1) == 3, "a send meets its receive");
