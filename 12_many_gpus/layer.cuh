// Chapter 12: a rank (one GPU, its NCCL communicator and streams), the two layers' buffers on
// it, and the pieces every step shares: the GEMM (chapter 09's answer, launch_hopper), the fork
// and join of the streams, and a bounded wait. The splits themselves are in many_gpus.cuh.
//
// One process per GPU (main.cu forks them): chapter 09's launchers keep per-process state (the
// shared-memory opt-in, done once per kernel; the split tiles' workspace and the padded operands,
// grown and kept; the tuned choice per shape and its timer), all of it on the device that was
// current at the first call. One device per process keeps every piece of it on that device.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "12_many_gpus/many_gpus.cuh"
#include "09_every_shape/schedule.cuh"  // launch_hopper
#include "common/check.h"

#define NCCL_CHECK(expr)                                                                      \
  do {                                                                                        \
    ncclResult_t r_ = (expr);                                                                 \
    if (r_ != ncclSuccess) {                                                                  \
      std::fprintf(stderr, "error: %s failed: %s (%s) at %s:%d\n", #expr,                    \
                   ncclGetErrorString(r_), ncclGetLastError(nullptr), __FILE__, __LINE__);    \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

constexpr int kMaxGpus = 8;     // ranks of one host
constexpr int kMaxPieces = 64;  // --chunks at most

// One GPU of the layer. Two streams: chapter 09's launchers launch on stream 0, the legacy
// default stream (they take no stream argument), so the GEMMs run there; NCCL runs on
// comm_stream, created non-blocking, because the legacy stream waits for every *blocking*
// stream of its device before each launch and would serialize the overlap we are after. The
// streams are ordered with events only (fork_comm, join_comm).
struct Rank {
  int rank = 0, gpus = 1, device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t comm_stream = nullptr;  // NCCL and the copies
  cudaStream_t sum_stream = nullptr;   // step 2's reduce-scatter sums, beside both
  std::vector<cudaStream_t> copy_streams;  // steps 3, 4: one per peer (G - 1), non-blocking
  double wait_s = 600;                 // the bounded wait's limit (--timeout)
  std::vector<cudaEvent_t> pool;       // ordering events, reused by every launch
  size_t next = 0;
  // An ordering event (no timing). A launch starts with reset(): recording an event again is
  // safe once every wait on it has been enqueued (a wait takes the event's state at that call).
  cudaEvent_t event() {
    if (next == pool.size()) {
      cudaEvent_t e;
      CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      pool.push_back(e);
    }
    return pool[next++];
  }
  void reset() { next = 0; }
};

// `to` waits for what `from` has enqueued so far.
inline void stream_waits(Rank& rk, cudaStream_t to, cudaStream_t from) {
  cudaEvent_t e = rk.event();
  CUDA_CHECK(cudaEventRecord(e, from));
  CUDA_CHECK(cudaStreamWaitEvent(to, e, 0));
}
// Every launch begins on stream 0 and ends there: the side streams first wait for stream 0's
// earlier work (the inputs, the timer's start event), and stream 0 waits for them at the end,
// so that an event recorded on stream 0 after the launch covers all of it.
inline void fork_streams(Rank& rk) {
  stream_waits(rk, rk.comm_stream, 0);
  stream_waits(rk, rk.sum_stream, 0);
}
inline void join_streams(Rank& rk) {
  stream_waits(rk, 0, rk.comm_stream);
  stream_waits(rk, 0, rk.sum_stream);
}

// --- The timeline (--timeline 1) ---------------------------------------------------------------
// When on, every GEMM, collective, copy and sum a step enqueues is bracketed by two timing
// events on its stream (span_begin, span_end); main.cu reads them after the run, relative to an
// event recorded on stream 0 when the launch began. Off (the timed runs): nothing is recorded.
struct Span {
  cudaStream_t stream;
  std::string what;
  cudaEvent_t begin, end;
};
struct Trace {
  bool on = false;
  std::vector<Span> spans;
  std::vector<cudaEvent_t> pool;
  size_t next = 0;
  cudaEvent_t event() {
    if (next == pool.size()) {
      cudaEvent_t e;
      CUDA_CHECK(cudaEventCreate(&e));
      pool.push_back(e);
    }
    return pool[next++];
  }
};
inline Trace& trace() {
  static Trace t;  // one rank per process
  return t;
}
// The label is `what`, or "what n" / "what n unit" where n >= 0: built only when tracing, so
// the timed runs make no string.
inline int span_begin(cudaStream_t s, const char* what, int64_t n = -1,
                      const char* unit = nullptr) {
  Trace& t = trace();
  if (!t.on) return -1;
  std::string label = what;
  if (n >= 0) label += " " + std::to_string(n) + (unit ? std::string(" ") + unit : "");
  t.spans.push_back({s, label, t.event(), t.event()});
  CUDA_CHECK(cudaEventRecord(t.spans.back().begin, s));
  return int(t.spans.size()) - 1;
}
inline void span_end(int i) {
  if (i < 0) return;
  const Span& sp = trace().spans[size_t(i)];
  CUDA_CHECK(cudaEventRecord(sp.end, sp.stream));
}

// A pull (steps 3-7): bytes from rank `from`'s memory (opened through CUDA IPC) into this GPU's, on
// stream s; the driver gives a copy between GPUs to a copy engine, not to an SM.
inline void pull(void* dst, const void* src, size_t bytes, cudaStream_t s, int from) {
  const int sp = span_begin(s, "pull from", from);
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  span_end(sp);
}

// C (M, N) = A (M, K) Bt (N, K)^T on stream 0: chapter 09's answer (launch_hopper: a tile and a
// schedule per shape, timed on its first call; main.cu calls every shape once before timing).
// An empty product writes nothing; K = 0 (a K slice a rank did not get) writes zeros.
inline void gemm(int64_t M, int64_t N, int64_t K, const bf16* A, const bf16* Bt, float* C) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    CUDA_CHECK(cudaMemsetAsync(C, 0, size_t(M) * N * sizeof(float), 0));
    return;
  }
  const int sp = span_begin(0, "GEMM", M, "rows");
  launch_hopper(int(M), int(N), int(K), A, Bt, C);
  span_end(sp);
}

// Waits for event e, checking NCCL's asynchronous errors every millisecond. On an NCCL error,
// or when rk.wait_s pass first (a peer that died or never joined leaves NCCL's kernels spinning),
// one line names the rank and what it waited for; the communicator is aborted (which ends its
// kernels) and the process exits 1. main.cu's parent process stops the other ranks then.
void wait_bounded(Rank& rk, cudaEvent_t e, const char* what);
// The same bound for a flag in memory shared between the ranks' processes: waits until
// flag >= at_least (acquire); on timeout or an NCCL error, one line names this rank, the rank
// `peer` it waited for, what, and the launch.
void wait_flag(Rank& rk, const std::atomic<int64_t>& flag, int64_t at_least, int peer,
               const char* what);

// The column-parallel layer ("ag") on rank r: C_r (M, N_r) = A (M, K) W_r^T.
struct AgLayer {
  int M = 0, N = 0, K = 0;  // the whole layer
  int64_t S = 0;            // rows of a shard (shard_rows); A padded to G S rows
  Range n;                  // this rank's rows of W: columns n of C
  int pieces = 1;           // steps 2-3: pieces a shard
  int wait_pieces = 1;      // step 5: pieces a shard, a flag each
  const bf16* a_shard = nullptr;  // (S, K): rows [r S, r S + S) of A, zero past M
  bf16* a_full = nullptr;         // (G S, K): the gathered A
  const bf16* w = nullptr;        // (N_r, K): rows n of W
  float* c = nullptr;             // (M, N_r): the output
  const bf16* peer_shard[kMaxGpus] = {};  // step 3: every rank's a_shard, opened through CUDA IPC
};

// The row-parallel layer ("rs") on rank r: out_r (S, N) = rows [r S, r S + S) of
// sum_s A[:, k_s] W[:, k_s]^T.
struct RsLayer {
  int M = 0, N = 0, K = 0;
  int64_t S = 0;
  Range k;                  // this rank's K slice
  int pieces = 1;
  // Every pointer null until setup_shape gives it a buffer: the checks poison only the buffers
  // that exist (an uninitialized `send` was poisoned when no step 2 ran: cudaMemset failed).
  const bf16* a = nullptr;      // (M, K_r): columns k of A
  const bf16* w = nullptr;      // (N, K_r): columns k of W
  float* partial = nullptr;     // step 1: (G S, N), this rank's partial; rows past M zero
  float* send = nullptr;        // step 2: (G, S, N): slot j, the rows sent at step j
  float* recv = nullptr;        // steps 2, 4, 6-8: (G, S, N): slot j, the rows received at
                                // step j; steps 6-8: slot 0, the own rows' partial
  float* out = nullptr;         // (S, N): the output (rows past M: padding, not compared)
  float* stage = nullptr;   // step 4: (G, S, N): slot j, the rows of rs_to(r, j), pulled by it
  const float* peer_stage[kMaxGpus] = {};  // step 4: every rank's stage, opened through CUDA IPC
  bf16* stage16 = nullptr;  // step 7: (G, S, N) BF16: the stage rounded, pulled by the peers
  bf16* recv16 = nullptr;   // step 7: (G, S, N) BF16: slot j, the terms pulled at step j
  const bf16* peer_stage16[kMaxGpus] = {};  // step 7: every rank's stage16
  struct RsSignals* signals = nullptr;     // step 4: the events and flags between the ranks
};

// Step 4's signals between the processes. What a rank publishes lives in memory the parent
// mapped before the fork (main.cu's Shared), one Published per rank: each flag holds the number
// of the last launch for which that event was recorded (launches count from 1, the same on
// every rank, which run the same launches in the same order).
struct Published {
  cudaIpcEventHandle_t written[kMaxGpus][kMaxPieces];  // [j][p]: piece p of stage slot j
  cudaIpcEventHandle_t pulled[kMaxGpus];               // [j]: every piece from rs_from(r, j)
  std::atomic<int64_t> written_at[kMaxGpus][kMaxPieces];
  std::atomic<int64_t> pulled_at[kMaxGpus];
  cudaIpcMemHandle_t stage;  // this shape's stage (main.cu, PeerStages)
};
// A rank's side of them (main.cu, open_signals): its own IPC events (created with
// cudaEventInterprocess | cudaEventDisableTiming), the peers' events opened from their handles,
// and the launch count.
struct RsSignals {
  Published* mine = nullptr;              // this rank's, in the shared mapping
  Published* of[kMaxGpus] = {};           // every rank's (the same mapping in every process)
  cudaEvent_t written[kMaxGpus][kMaxPieces] = {};       // mine: [j][p], recorded on stream 0
  cudaEvent_t pulled[kMaxGpus] = {};                    // mine: [j], on copy stream j - 1
  cudaEvent_t peer_written[kMaxGpus][kMaxPieces] = {};  // [j][p]: of rank rs_from(r, j)
  cudaEvent_t peer_pulled[kMaxGpus] = {};               // [j]: of rank rs_to(r, j)
  int64_t launches = 0;
};

// The steps (steps/), each enqueued on this rank's streams, beginning and ending on stream 0.
// The pieces timed beside them: the GEMM alone and NCCL's collective alone, on the same buffers.
void launch_ag_unfused(Rank& rk, const AgLayer& l);    // 1: ncclAllGather, then the GEMM
void launch_rs_unfused(Rank& rk, const RsLayer& l);    // 1: the GEMM, then ncclReduceScatter
void launch_ag_chunked(Rank& rk, const AgLayer& l);    // 2: a piece's GEMM while the next moves
void launch_ag_copy_engine(Rank& rk, const AgLayer& l);  // 3: the pieces pulled by copy engines
void launch_rs_chunked(Rank& rk, const RsLayer& l);    // 2: the same, the sums in a fixed order
void launch_rs_copy_engine(Rank& rk, const RsLayer& l);  // 4: each rank pulls its rows' pieces
void launch_ag_tile_wait(Rank& rk, const AgLayer& l);    // 5: one GEMM; a tile waits for its rows
void launch_rs_others_first(Rank& rk, const RsLayer& l);  // 6: the peers' rows first, own last
void launch_rs_bf16_partials(Rank& rk, const RsLayer& l);  // 7: BF16 partials on the wire
void launch_rs_one_sum(Rank& rk, const RsLayer& l);        // 8: one sum a piece, all terms in
void launch_rs_sum_epilogue(Rank& rk, const RsLayer& l);   // 9: the sum in the own GEMM's epilogue
void launch_ag_slice_wait(Rank& rk, const AgLayer& l);     // 10: step 5, waiting per K slice
void launch_ag_gemm_tiles(Rank& rk, const AgLayer& l);     // step 5's GEMM alone, nothing waited
void launch_rs_comm_bf16(Rank& rk, const RsLayer& l);      // NCCL's BF16 reduce-scatter alone
void launch_ag_gemm(Rank& rk, const AgLayer& l);
void launch_rs_gemm(Rank& rk, const RsLayer& l);
void launch_ag_comm(Rank& rk, const AgLayer& l);
void launch_rs_comm(Rank& rk, const RsLayer& l);
