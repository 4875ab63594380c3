// Chapter 12: one layer on many GPUs. The program starts one process per GPU itself (--gpus G:
// fork, the NCCL id shared through memory mapped before the fork), as training frameworks run
// one process per GPU; the parent process touches no GPU, watches the ranks with a deadline,
// and prints the slowest rank's times.
//
//   build/12_many_gpus/many_gpus --gpus 4                      check, then time, every step
//   build/12_many_gpus/many_gpus --gpus 2 --check --shapes 1000x1000x1000 --twice
//
// Each rank: its device (rank r uses GPU r), its NCCL communicator, its slices of the two layers
// filled from the same counter-based random stream as every chapter (A from --seed, W from
// --seed + 1), so that every rank can make any part of the whole problem without communicating.
// A step's output on each rank is compared with the whole layer computed on that one GPU: the
// exact product in double precision (gpu_gemm_fp64) where it takes a moment, else chapter 09's
// GEMM on the whole K or the whole A (the large timing shapes), within chapter 09's tolerance
// (tensor_core_tolerance).
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <ctime>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "12_many_gpus/layer.cuh"
#include "12_many_gpus/steps/1_unfused.cuh"
#include "12_many_gpus/steps/2_chunked.cuh"
#include "12_many_gpus/steps/3_copy_engine.cuh"
#include "12_many_gpus/steps/4_copy_engine_rs.cuh"
#include "12_many_gpus/steps/5_tile_wait.cuh"
#include "12_many_gpus/steps/6_others_first.cuh"
#include "12_many_gpus/steps/7_bf16_partials.cuh"
#include "12_many_gpus/steps/8_one_sum.cuh"
#include "12_many_gpus/steps/9_sum_epilogue.cuh"
#include "12_many_gpus/steps/10_slice_wait.cuh"
#include "common/cli.h"
#include "common/device.h"
#include "common/matrix.h"
#include "common/reference.h"
#include "common/timer.h"
#include "common/verify.h"

namespace {

constexpr int kMaxReps = 1000;  // the shared result area holds this many runs a row and rank
constexpr int kWarmup = 2;

// --- What the parent and the ranks share (mapped before the fork) ------------------------------
struct Probe {  // filled by a short-lived child: the parent itself never initializes CUDA
  int devices = -1;  // -1: the probe did not answer
  int cc[kMaxGpus] = {};
  char name[kMaxGpus][256] = {};
  int runtime = 0, driver = 0;
};
enum RowStatus : int { kNotRun = 0, kPass = 1, kFail = 2, kTimed = 3 };
struct RowSlot {  // one row of the table, on one rank
  int status = kNotRun;
  int reps = 0;
  double rel_err = 0;
  float ms[kMaxReps];
};
struct Shared {
  Probe probe;
  ncclUniqueId id;
  std::atomic<int> id_ready;
  std::atomic<int64_t> beat;  // counts the ranks' finished waits: the parent's sign of progress
  cudaIpcMemHandle_t shard_handle[kMaxGpus];  // step 3: each rank's a_shard, for its peers
  cudaIpcMemHandle_t stage_handle[kMaxGpus];  // step 4: each rank's stage, for its peers
  cudaIpcMemHandle_t stage16_handle[kMaxGpus];  // step 7: each rank's BF16 stage
  Published published[kMaxGpus];  // step 4: each rank's IPC events and their flags
  int rows = 0, gpus = 0;
  RowSlot slot[1];  // rows x gpus, row-major (sized at the mapping)
  RowSlot& at(int row, int rank) { return slot[size_t(row) * gpus + rank]; }
};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<int64_t>::is_always_lock_free,
              "the flags are shared between processes");
Shared* g_shared = nullptr;  // the ranks' heartbeat (wait_bounded)
std::string g_record_header;  // the CSVs' comment lines: device, versions, date, command

// --- The rows: per shape, per layer, the halves alone (with --bench) and the selected steps ----
enum class Kind {
  kGemm, kComm, kUnfused, kChunked, kCopyEngine, kTileWait, kOthersFirst, kBf16Partials, kOneSum,
  kSumEpilogue, kSliceWait,
  kGemmTiles, kCommBf16  // timed only: step 5's GEMM alone; the reduce-scatter of BF16 alone
};
// Each Kind's name, in the enum's order: a row is "ag_" or "rs_" and this (the CSV's step).
constexpr const char* kKindNames[] = {"gemm",          "comm",         "unfused",
                                      "chunked",       "copy_engine",  "tile_wait",
                                      "others_first",  "bf16_partials", "one_sum",
                                      "sum_epilogue",  "slice_wait",
                                      "gemm_tiles",    "comm_bf16"};
static_assert(sizeof kKindNames / sizeof kKindNames[0] == int(Kind::kCommBf16) + 1,
              "a name for every Kind");
// The Kind of a --kernel name (ag_... or rs_...; the CLI accepts only spec.kernels).
Kind kind_of(const std::string& kernel) {
  for (int k = 0; k <= int(Kind::kCommBf16); ++k)
    if (kernel.compare(3, std::string::npos, kKindNames[k]) == 0) return Kind(k);
  std::fprintf(stderr, "error: no step named %s\n", kernel.c_str());
  std::exit(kExitUsage);
}
// Steps 7-9: the peers' terms travel in BF16 (their check and their limit say so).
bool bf16_terms(Kind k) {
  return k == Kind::kBf16Partials || k == Kind::kOneSum || k == Kind::kSumEpilogue;
}

struct RowSpec {
  int shape;
  bool ag;  // the column-parallel layer (all-gather); else row-parallel (reduce-scatter)
  Kind kind;
  std::string name() const { return std::string(ag ? "ag_" : "rs_") + kKindNames[int(kind)]; }
};

const CliSpec& spec_with(int* gpus, int* chunks, int* wait_pieces, int* timeout, int* timeline) {
  static CliSpec s;
  s.program = "12_many_gpus/many_gpus";
  s.summary =
      "a tensor-parallel layer on G GPUs through NCCL (one process per GPU): column-parallel "
      "(ag: all-gather, then GEMM) and row-parallel (rs: GEMM, then reduce-scatter), unfused, "
      "in chunks, by the copy engines, with per-tile waits, others first, BF16 partials, one "
      "sum a piece, the sum in the epilogue and per-K-slice waits; "
      "each shape is the whole layer M x N x K";
  s.kernels = {"ag_unfused",     "ag_chunked",     "ag_copy_engine",  "ag_tile_wait",
               "ag_slice_wait",
               "rs_unfused",     "rs_chunked",     "rs_copy_engine",  "rs_others_first",
               "rs_bf16_partials", "rs_one_sum",     "rs_sum_epilogue"};
  s.options = {
      {"--gpus", "G", "GPUs, one process each (1-8; default: every visible GPU, at most 8)", 1,
       kMaxGpus, gpus, nullptr},
      {"--chunks", "C", "steps 2-4, 6-9: pieces of each shard (1-64, default 2)", 1, 64, chunks,
       nullptr},
      {"--wait-pieces", "P",
       "step 5: pieces of each shard, step 10: K slices, a flag each (1-64, default 4)", 1, 64,
       wait_pieces, nullptr},
      {"--timeout", "S", "seconds before a rank that waits is stopped (default 600)", 1, 86400,
       timeout, nullptr},
      {"--timeline", "1", "one more run of each row with its spans timed (rank 0's GEMMs, "
       "collectives, copies and sums per stream) into CSV_timeline.csv beside --csv", 0, 1,
       timeline, nullptr},
  };
  // The issue's layer shapes (M x N x K: tokens, outputs, inputs), each as both layers.
  s.default_shapes = {{8192, 28672, 8192}, {16384, 28672, 8192}, {4096, 8192, 8192},
                      {8192, 8192, 28672}};
  s.default_reps = 20;
  s.min_cc = 90;
  s.exact_cc = true;
  s.min_cc_why = "chapter 09's GEMM (wgmma, sm_90a)";
  return s;
}

std::string version_text(int v) {  // NCCL's code: 2.9 and later major*10000 + minor*100 + patch
  const int major = v >= 10000 ? v / 10000 : v / 1000;
  const int minor = v >= 10000 ? v / 100 % 100 : v / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// --- Filling the slices ----------------------------------------------------------------------
// d (rows, cols) = the block of a matrix with `ld` columns starting at (row0, col0), each
// element random_uniform(seed, global index) rounded to BF16, as fill_random makes the whole
// matrix; rows at or past valid_rows (the padding of a shard) are zero.
__global__ void fill_block_kernel(bf16* d, int64_t rows, int64_t cols, int64_t row0, int64_t col0,
                                  int64_t ld, int64_t valid_rows, uint64_t seed) {
  const int64_t n = rows * cols, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t r = row0 + i / cols, c = col0 + i % cols;
    d[i] = __float2bfloat16_rn(r < valid_rows ? random_uniform(seed, uint64_t(r * ld + c)) : 0.f);
  }
}
void fill_block(bf16* d, int64_t rows, int64_t cols, int64_t row0, int64_t col0, int64_t ld,
                int64_t valid_rows, uint64_t seed) {
  if (rows * cols == 0) return;
  fill_block_kernel<<<1024, 256>>>(d, rows, cols, row0, col0, ld, valid_rows, seed);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void wait_bounded(Rank& rk, cudaEvent_t e, const char* what) {
  const double t0 = now_s();
  for (int spin = 0;; ++spin) {
    const cudaError_t q = cudaEventQuery(e);
    if (q == cudaSuccess) {
      if (g_shared) g_shared->beat.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (q != cudaErrorNotReady) CUDA_CHECK(q);
    ncclResult_t async = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(rk.comm, &async));
    const bool late = now_s() - t0 > rk.wait_s;
    if (async != ncclSuccess || late) {
      std::fprintf(stderr, "rank %d (GPU %d): %s after %.0f s waiting for %s; aborting its "
                           "communicator\n",
                   rk.rank, rk.device, async != ncclSuccess ? ncclGetErrorString(async)
                                                            : "timed out",
                   now_s() - t0, what);
      ncclCommAbort(rk.comm);  // ends this rank's NCCL kernels; the parent stops the others
      std::exit(kExitFail);  // any exit but 0 ends the run (run_ranks)
    }
    // Spin for the first milliseconds (a timed run ends within them), then sleep.
    if (spin > 1000) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void wait_flag(Rank& rk, const std::atomic<int64_t>& flag, int64_t at_least, int peer,
               const char* what) {
  if (flag.load(std::memory_order_acquire) >= at_least) return;  // the usual case: no wait
  const double t0 = now_s();
  for (int spin = 0;; ++spin) {
    if (flag.load(std::memory_order_acquire) >= at_least) {
      if (g_shared) g_shared->beat.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    ncclResult_t async = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(rk.comm, &async));
    if (async != ncclSuccess || now_s() - t0 > rk.wait_s) {
      std::fprintf(stderr, "rank %d (GPU %d): %s after %.0f s waiting for rank %d's %s (launch "
                           "%lld); aborting its communicator\n",
                   rk.rank, rk.device, async != ncclSuccess ? ncclGetErrorString(async)
                                                            : "timed out",
                   now_s() - t0, peer, what, static_cast<long long>(at_least));
      ncclCommAbort(rk.comm);
      std::exit(kExitFail);
    }
    if (spin > 1000) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

namespace {

// --- One rank ------------------------------------------------------------------------------------
struct ShapeBuffers {  // this rank's slices of one shape, both layers
  DeviceBuffer<bf16> ag_shard, ag_full, ag_w, rs_a, rs_w;
  DeviceBuffer<float> ag_c, rs_partial, rs_send, rs_recv, rs_out, rs_stage;
  DeviceBuffer<bf16> rs_stage16, rs_recv16;  // step 7
  AgLayer ag;
  RsLayer rs;
  std::vector<float> ag_ref, rs_ref;  // this rank's output of the whole layer on one GPU
};

void poison_rows_keep_padding(float* d, int64_t real_floats) {
  if (real_floats > 0) poison(d, size_t(real_floats) * sizeof(float));
}

// The reference on this GPU: C (M, N) = A (M, K) Bt (N, K)^T exactly (FP64) where that takes a
// moment, else chapter 09's GEMM of the whole problem.
void reference(int64_t M, int64_t N, int64_t K, const bf16* A, const bf16* Bt, float* C) {
  if (M * N == 0) return;
  if (2.0 * M * N * K <= 2e11) {
    gpu_gemm_fp64(int(M), int(N), int(K), A, Bt, BLayout::kTransposed, C);
  } else {
    gemm(M, N, K, A, Bt, C);
  }
  CUDA_CHECK(cudaDeviceSynchronize());  // the result is copied to the host next
}

std::vector<float> to_host(const float* d, int64_t n) {
  std::vector<float> h(size_t(std::max<int64_t>(n, 0)));
  if (n > 0) CUDA_CHECK(cudaMemcpy(h.data(), d, size_t(n) * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// Bytes this rank needs for a shape (the layers in use), to refuse a shape that does not fit.
double bytes_needed(const Shape& s, int G, bool ag, bool rs, bool chunked_rs, bool copy_rs,
                    bool bf16_rs) {
  const double S = double(shard_rows(s.M, G)), M = s.M, N = s.N, K = s.K;
  double b = 0;
  if (ag) b += 2 * (S * K + G * S * K + (N / G + kNUnit) * K) + 4 * M * (N / G + kNUnit);
  if (rs) {
    b += 2 * (M * (K / G + kKUnit) + N * (K / G + kKUnit)) + 4 * (G * S * N + S * N);
    b += 2 * (S * K + N * K);  // the reference's operands: this rank's rows of A, all of W
    if (chunked_rs || copy_rs) b += 4 * G * S * N;  // recv
    if (chunked_rs) b += 4 * G * S * N;             // send
    if (copy_rs) b += 4 * G * S * N;                // stage
    if (bf16_rs) b += 2 * 2 * G * S * N;            // stage16, recv16
  }
  return b;
}

void setup_shape(const Shape& s, const Rank& rk, int pieces, int wait_pieces, uint64_t seed,
                 bool ag, bool rs, bool chunked_rs, bool copy_rs, bool bf16_rs,
                 RsSignals* signals, ShapeBuffers* b) {
  const int G = rk.gpus, r = rk.rank;
  const int64_t M = s.M, N = s.N, K = s.K, S = shard_rows(M, G);
  const uint64_t seed_a = seed, seed_w = seed + 1;
  if (ag) {
    AgLayer& l = b->ag;
    l.M = s.M, l.N = s.N, l.K = s.K, l.S = S, l.pieces = pieces, l.wait_pieces = wait_pieces;
    l.n = column_slice(N, G, r);
    b->ag_shard = DeviceBuffer<bf16>(size_t(S * K));
    b->ag_full = DeviceBuffer<bf16>(size_t(G * S * K));
    b->ag_w = DeviceBuffer<bf16>(size_t(std::max<int64_t>(l.n.size(), 1) * K));
    b->ag_c = DeviceBuffer<float>(size_t(std::max<int64_t>(M * l.n.size(), 1)));
    l.a_shard = b->ag_shard.get(), l.a_full = b->ag_full.get(), l.w = b->ag_w.get();
    l.c = b->ag_c.get();
    fill_block(b->ag_shard.get(), S, K, r * S, 0, K, M, seed_a);
    fill_block(b->ag_w.get(), l.n.size(), K, l.n.begin, 0, K, N, seed_w);
    // The reference: all of A, made here (a_full is the gather's output; overwritten later).
    fill_block(b->ag_full.get(), G * S, K, 0, 0, K, M, seed_a);
    reference(M, l.n.size(), K, l.a_full, l.w, l.c);
    b->ag_ref = to_host(l.c, M * l.n.size());
  }
  if (rs) {
    RsLayer& l = b->rs;
    l.M = s.M, l.N = s.N, l.K = s.K, l.S = S, l.pieces = pieces;
    l.k = k_slice(K, G, r);
    const int64_t Kr = std::max<int64_t>(l.k.size(), 1);
    b->rs_a = DeviceBuffer<bf16>(size_t(M * Kr));
    b->rs_w = DeviceBuffer<bf16>(size_t(N * Kr));
    b->rs_partial = DeviceBuffer<float>(size_t(G * S * N));
    b->rs_out = DeviceBuffer<float>(size_t(S * N));
    l.a = b->rs_a.get(), l.w = b->rs_w.get(), l.partial = b->rs_partial.get();
    l.out = b->rs_out.get();
    if (chunked_rs) {
      b->rs_send = DeviceBuffer<float>(size_t(G * S * N));
      l.send = b->rs_send.get();
    }
    if (chunked_rs || copy_rs) {  // step 4 receives into the same area as step 2
      b->rs_recv = DeviceBuffer<float>(size_t(G * S * N));
      l.recv = b->rs_recv.get();
    }
    if (copy_rs) {  // step 4: what the peers pull, only step 4 writes it
      b->rs_stage = DeviceBuffer<float>(size_t(G * S * N));
      l.stage = b->rs_stage.get();
      l.signals = signals;
    }
    if (bf16_rs) {  // step 7: the stage rounded, and where the peers' terms land
      b->rs_stage16 = DeviceBuffer<bf16>(size_t(G * S * N));
      b->rs_recv16 = DeviceBuffer<bf16>(size_t(G * S * N));
      l.stage16 = b->rs_stage16.get(), l.recv16 = b->rs_recv16.get();
    }
    fill_block(b->rs_a.get(), M, l.k.size(), 0, l.k.begin, K, M, seed_a);
    fill_block(b->rs_w.get(), N, l.k.size(), 0, l.k.begin, K, N, seed_w);
    // The partial's padding rows stay zero: the GEMM writes M rows, NCCL sums all G S.
    CUDA_CHECK(cudaMemset(l.partial, 0, size_t(G * S * N) * sizeof(float)));
    // The reference: this rank's real rows of A, whole K, against all of W.
    const Range mine = shard_real_rows(M, G, r);
    DeviceBuffer<bf16> a_rows(size_t(std::max<int64_t>(mine.size(), 1) * K)), w_all(size_t(N * K));
    fill_block(a_rows.get(), mine.size(), K, mine.begin, 0, K, M, seed_a);
    fill_block(w_all.get(), N, K, 0, 0, K, N, seed_w);
    reference(mine.size(), N, K, a_rows.get(), w_all.get(), l.out);
    b->rs_ref = to_host(l.out, mine.size() * N);
  }
  CUDA_CHECK(cudaDeviceSynchronize());  // the fills are done before any rank's NCCL reads them
}

// Every piece GEMM of steps 2-4 and 6-9 (each shard's pieces, cut at its real rows), once.
template <class GemmRows>
void prewarm_pieces(const Rank& rk, int64_t M, int64_t S, int pieces, GemmRows&& gemm_rows) {
  for (int s = 0; s < rk.gpus; ++s) {
    const Range real = shard_real_rows(M, rk.gpus, s);
    for (int p = 0; p < pieces; ++p) {
      const Range piece = piece_rows(S, pieces, p);
      gemm_rows(std::max<int64_t>(0, std::min(piece.end, real.size()) - piece.begin));
    }
  }
}
// Every GEMM shape a launch calls, once, alone: chapter 09's launcher tunes a shape on its first
// call (timing candidates, synchronizing the device) and grows its workspaces; inside a launch
// whose peers wait on NCCL that would stall them, and a device-wide sync could wait on a receive
// whose sender is itself waiting.
void prewarm(const Rank& rk, Kind kind, bool ag, const ShapeBuffers& b) {
  const bool pieces = kind == Kind::kChunked || kind == Kind::kCopyEngine ||
                      kind == Kind::kOthersFirst || bf16_terms(kind) ||
                      ((kind == Kind::kTileWait || kind == Kind::kSliceWait) && b.ag.K % 8 != 0);
  if (ag) {
    const AgLayer& l = b.ag;
    const int64_t Nr = l.n.size();
    gemm(l.M, Nr, l.K, l.a_full, l.w, l.c);
    if (kind == Kind::kTileWait || kind == Kind::kGemmTiles)
      prepare_ag_tile_wait(rk, l);  // its flags and order of blocks
    if (kind == Kind::kSliceWait) prepare_ag_slice_wait(rk, l);
    if (pieces)
      prewarm_pieces(rk, l.M, l.S, l.pieces,
                     [&](int64_t rows) { gemm(rows, Nr, l.K, l.a_full, l.w, l.c); });
  } else {
    const RsLayer& l = b.rs;
    gemm(l.M, l.N, l.k.size(), l.a, l.w, l.partial);
    if (bf16_terms(kind)) identity_blocks(l.S);  // step 7's GEMM's blocks
    if (kind == Kind::kSumEpilogue) sum_flags();  // step 9's flags
    if (pieces)
      prewarm_pieces(rk, l.M, l.S, l.pieces,
                     [&](int64_t rows) { gemm(rows, l.N, l.k.size(), l.a, l.w, l.partial); });
  }
  CUDA_CHECK(cudaDeviceSynchronize());  // tuned and grown before any launch that talks to peers
}

// The steps (verified); the rest are timed only, as pieces of the layer.
bool is_step(Kind k) {
  return k != Kind::kGemm && k != Kind::kComm && k != Kind::kGemmTiles && k != Kind::kCommBf16;
}

// Step 7's check: chapter 09's tolerance, plus the rounding of each peer's term to BF16 (|error|
// <= 2^-8 |term|, round to nearest). For random inputs the G - 1 rounding errors of an element
// are independent, each uniform within half a BF16 step: rms at most 2^-8 / sqrt(3) of its
// term's rms, and the terms' variances add up to at most the output's (independent K slices),
// so the element's error has rms at most sigma = 2^-8 / sqrt(3) rms(C). Allowed: 8 sigma per
// element (as gemm_tolerance allows 8 typical errors) and 4 sigma / rms(C) norm-wise. A missing
// term is about rms(C) / sqrt(G) per element, 30x the elementwise allowance at G = 8.
Tolerance bf16_partials_tolerance(int K, double ref_rms) {
  const double sigma = std::ldexp(1.0, -8) / std::sqrt(3.0);
  Tolerance t = tensor_core_tolerance(K, ref_rms);
  t.atol += 8 * sigma * ref_rms;
  t.max_rel_err += 4 * sigma;
  return t;
}

// The steps whose ranks pull from their peers' memory (CUDA IPC): 3, 5 and 10 the shards, 4 and
// 6-9 the stage.
bool peer_pulls(Kind k) {
  return k == Kind::kCopyEngine || k == Kind::kTileWait || k == Kind::kOthersFirst ||
         bf16_terms(k) || k == Kind::kSliceWait;
}

void launch_row(Rank& rk, const RowSpec& row, const ShapeBuffers& b) {
  switch (row.kind) {
    case Kind::kGemm: return row.ag ? launch_ag_gemm(rk, b.ag) : launch_rs_gemm(rk, b.rs);
    case Kind::kComm: return row.ag ? launch_ag_comm(rk, b.ag) : launch_rs_comm(rk, b.rs);
    case Kind::kUnfused: return row.ag ? launch_ag_unfused(rk, b.ag) : launch_rs_unfused(rk, b.rs);
    case Kind::kChunked: return row.ag ? launch_ag_chunked(rk, b.ag) : launch_rs_chunked(rk, b.rs);
    case Kind::kCopyEngine:
      return row.ag ? launch_ag_copy_engine(rk, b.ag) : launch_rs_copy_engine(rk, b.rs);
    case Kind::kTileWait: return launch_ag_tile_wait(rk, b.ag);
    case Kind::kOthersFirst: return launch_rs_others_first(rk, b.rs);
    case Kind::kBf16Partials: return launch_rs_bf16_partials(rk, b.rs);
    case Kind::kOneSum: return launch_rs_one_sum(rk, b.rs);
    case Kind::kSumEpilogue: return launch_rs_sum_epilogue(rk, b.rs);
    case Kind::kSliceWait: return launch_ag_slice_wait(rk, b.ag);
    case Kind::kGemmTiles: return launch_ag_gemm_tiles(rk, b.ag);
    case Kind::kCommBf16: return launch_rs_comm_bf16(rk, b.rs);
  }
}

void barrier(Rank& rk, float* token, cudaEvent_t done, const char* what);

// The output of a step on this rank, after poisoning it (and its intermediates) with NaN.
std::vector<float> run_verified(Rank& rk, const RowSpec& row, ShapeBuffers& b, float* token,
                                cudaEvent_t done) {
  const int G = rk.gpus;
  if (row.ag) {
    poison(b.ag.a_full, size_t(G * b.ag.S * b.ag.K) * sizeof(bf16));
    poison_rows_keep_padding(b.ag.c, int64_t(b.ag.M) * b.ag.n.size());
  } else {
    poison_rows_keep_padding(b.rs.partial, int64_t(b.rs.M) * b.rs.N);  // padding rows: zero
    poison(b.rs.out, size_t(b.rs.S * b.rs.N) * sizeof(float));
    if (b.rs.send) poison(b.rs.send, size_t(G * b.rs.S * b.rs.N) * sizeof(float));
    if (b.rs.recv) poison(b.rs.recv, size_t(G * b.rs.S * b.rs.N) * sizeof(float));
    if (b.rs.recv16) poison(b.rs.recv16, size_t(G * b.rs.S * b.rs.N) * sizeof(bf16));
    if (!row.ag && peer_pulls(row.kind)) {
      // The peers read this rank's stage: poisoned only when every rank has ended its last
      // run (a rank's run ends with its own pulls done; the timed runs begin with a barrier).
      barrier(rk, token, done, "the other ranks to end their runs (step 4's stage)");
      poison(b.rs.stage, size_t(G * b.rs.S * b.rs.N) * sizeof(float));
      if (b.rs.stage16) poison(b.rs.stage16, size_t(G * b.rs.S * b.rs.N) * sizeof(bf16));
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());  // poisoned before the launch reads or writes
  launch_row(rk, row, b);
  CUDA_CHECK(cudaEventRecord(done, 0));
  wait_bounded(rk, done, ("the verified run of " + row.name()).c_str());
  if (row.ag) return to_host(b.ag.c, int64_t(b.ag.M) * b.ag.n.size());
  return to_host(b.rs.out, shard_real_rows(b.rs.M, G, rk.rank).size() * b.rs.N);
}

// All ranks meet: an all-reduce of one float, waited for (bounded).
void barrier(Rank& rk, float* token, cudaEvent_t done, const char* what) {
  NCCL_CHECK(ncclAllReduce(token, token, 1, ncclFloat, ncclSum, rk.comm, rk.comm_stream));
  CUDA_CHECK(cudaEventRecord(done, rk.comm_stream));
  wait_bounded(rk, done, what);
}

// The peers' buffers, opened through CUDA IPC for one shape (step 3: their a_shard; step 4:
// their stage): each rank publishes the handle of its buffer in the shared area (handle[rank]),
// all meet, then each opens the others'. Closed (and all meet again, so that no rank frees a
// buffer a peer still has open) before the shape's buffers go.
struct PeerBuffers {
  Rank* rk = nullptr;
  float* token = nullptr;
  cudaEvent_t done = nullptr;
  std::vector<void*> opened;
  template <typename T>
  void open(Rank& r, cudaIpcMemHandle_t* handle, const T* mine, const T** peer, float* t,
            cudaEvent_t d) {
    rk = &r, token = t, done = d;
    CUDA_CHECK(cudaIpcGetMemHandle(&handle[r.rank], const_cast<T*>(mine)));
    barrier(r, token, done, "the other ranks' IPC handles");  // every handle is written
    for (int s = 0; s < r.gpus; ++s) {
      if (s == r.rank) {
        peer[s] = mine;
        continue;
      }
      void* p = nullptr;
      CUDA_CHECK(cudaIpcOpenMemHandle(&p, handle[s], cudaIpcMemLazyEnablePeerAccess));
      opened.push_back(p);
      peer[s] = static_cast<const T*>(p);
    }
  }
  ~PeerBuffers() {
    if (!rk) return;
    for (void* p : opened) CUDA_CHECK(cudaIpcCloseMemHandle(p));
    barrier(*rk, token, done, "the other ranks to close their IPC handles");
  }
};

// Step 4's events, once a run: this rank's own, made for other processes to wait on
// (cudaEventInterprocess; no timing, which such events cannot have), their handles published in
// the shared area; after a barrier (every handle written), the peers' events opened from theirs.
// Their flags count launches and never go back, so the events serve every shape.
void open_signals(Rank& rk, Shared* sh, int pieces, float* token, cudaEvent_t done,
                  RsSignals* s) {
  const int G = rk.gpus, r = rk.rank;
  s->mine = &sh->published[r];
  for (int q = 0; q < G; ++q) s->of[q] = &sh->published[q];
  const unsigned flags = cudaEventInterprocess | cudaEventDisableTiming;
  for (int j = 1; j < G; ++j) {
    for (int p = 0; p < pieces; ++p) {
      CUDA_CHECK(cudaEventCreateWithFlags(&s->written[j][p], flags));
      CUDA_CHECK(cudaIpcGetEventHandle(&s->mine->written[j][p], s->written[j][p]));
    }
    CUDA_CHECK(cudaEventCreateWithFlags(&s->pulled[j], flags));
    CUDA_CHECK(cudaIpcGetEventHandle(&s->mine->pulled[j], s->pulled[j]));
  }
  barrier(rk, token, done, "the other ranks' IPC event handles");
  for (int j = 1; j < G; ++j) {
    // Slot j of rank rs_from(r, j) holds this rank's rows; this rank's slot j, rs_to(r, j)'s.
    const Published& from = sh->published[rs_from(r, G, j)];
    const Published& to = sh->published[rs_to(r, G, j)];
    for (int p = 0; p < pieces; ++p)
      CUDA_CHECK(cudaIpcOpenEventHandle(&s->peer_written[j][p], from.written[j][p]));
    CUDA_CHECK(cudaIpcOpenEventHandle(&s->peer_pulled[j], to.pulled[j]));
  }
}

// --timeline: where rank 0 writes the spans (beside --csv, else in the working folder).
std::string timeline_path(const Options& opt) {
  std::string base = opt.csv.empty() ? "many_gpus.csv" : opt.csv;
  const size_t n = base.size();
  if (n > 4 && base.compare(n - 4, 4, ".csv") == 0) base.resize(n - 4);
  return base + "_timeline.csv";
}

// One more run of a row with every span timed (layer.cuh, span_begin): rank 0 writes each span,
// microseconds from the launch's start on stream 0, and the whole launch as stream "all".
void traced_run(Rank& rk, const RowSpec& row, const Shape& s, const ShapeBuffers& b,
                float* token, cudaEvent_t start, cudaEvent_t stop, cudaEvent_t done, FILE* out) {
  barrier(rk, token, done, "the other ranks (the timeline's run)");
  Trace& t = trace();
  t.on = true;
  t.spans.clear();
  t.next = 0;
  CUDA_CHECK(cudaEventRecord(start, 0));
  launch_row(rk, row, b);
  CUDA_CHECK(cudaEventRecord(stop, 0));
  wait_bounded(rk, stop, ("the timeline's run of " + row.name()).c_str());
  t.on = false;
  if (!out) return;
  auto since = [&](cudaEvent_t e) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, e));
    return 1000.0 * ms;
  };
  auto stream_name = [&](cudaStream_t st) -> std::string {
    if (st == 0) return "stream 0";
    if (st == rk.comm_stream) return "comm";
    if (st == rk.sum_stream) return "sums";
    for (int j = 1; j < rk.gpus; ++j)  // step j's peer in steps 3, 4, 6, 7; all of step 5's
      if (st == rk.copy_streams[size_t(j - 1)]) return "copy stream " + std::to_string(j);
    return "other";
  };
  const std::string head = std::string(row.ag ? "ag," : "rs,") + row.name().substr(3) + "," +
                           std::to_string(rk.gpus) + "," + std::to_string(s.M) + "," +
                           std::to_string(s.N) + "," + std::to_string(s.K) + ",";
  for (const Span& sp : t.spans)
    std::fprintf(out, "%s%s,%s,%.1f,%.1f\n", head.c_str(), stream_name(sp.stream).c_str(),
                 sp.what.c_str(), since(sp.begin), since(sp.end));
  std::fprintf(out, "%sall,launch,0.0,%.1f\n", head.c_str(), since(stop));
}

int run_rank(int r, int G, const Options& opt, const std::vector<RowSpec>& rows, int pieces,
             int wait_pieces, int timeout_s, bool timeline, Shared* sh) {
  Rank rk;
  rk.rank = r, rk.gpus = G, rk.device = r, rk.wait_s = timeout_s;
  CUDA_CHECK(cudaSetDevice(r));
  CUDA_CHECK(cudaStreamCreateWithFlags(&rk.comm_stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&rk.sum_stream, cudaStreamNonBlocking));
  rk.copy_streams.resize(size_t(G - 1));
  for (cudaStream_t& c : rk.copy_streams)
    CUDA_CHECK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
  if (r == 0) {
    print_device_report(stdout);
    std::fflush(stdout);
    NCCL_CHECK(ncclGetUniqueId(&sh->id));
    sh->id_ready.store(1, std::memory_order_release);
  } else {
    const double t0 = now_s();
    while (!sh->id_ready.load(std::memory_order_acquire)) {
      if (now_s() - t0 > timeout_s) {
        std::fprintf(stderr, "rank %d: no NCCL id from rank 0 after %d s\n", r, timeout_s);
        return kExitFail;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  NCCL_CHECK(ncclCommInitRank(&rk.comm, G, sh->id, r));

  DeviceBuffer<float> token(1);  // the barrier's all-reduce
  DeviceBuffer<unsigned char> flush(2 * device_facts().l2_bytes);
  CUDA_CHECK(cudaMemset(token.get(), 0, sizeof(float)));
  cudaEvent_t start, stop, done;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  FILE* tl = nullptr;  // --timeline: rank 0's spans
  if (timeline && r == 0) {
    tl = std::fopen(timeline_path(opt).c_str(), "w");
    if (!tl) {
      std::fprintf(stderr, "rank 0: cannot write %s\n", timeline_path(opt).c_str());
      return kExitUsage;
    }
    std::fprintf(tl, "%s# rank 0's spans, microseconds from the launch's start on stream 0\n"
                     "layer,step,gpus,M,N,K,stream,what,begin_us,end_us\n",
                 g_record_header.c_str());
  }
  RsSignals signals;  // step 4's
  if (std::any_of(rows.begin(), rows.end(),
                  [](const RowSpec& x) { return !x.ag && peer_pulls(x.kind); }))
    open_signals(rk, sh, pieces, token.get(), done, &signals);

  for (size_t si = 0; si < opt.shapes.size(); ++si) {
    const Shape& s = opt.shapes[si];
    std::vector<int> here;  // this shape's rows
    bool ag = false, rs = false, chunked_rs = false, copy_ag = false, copy_rs = false;
    bool bf16_rs = false;
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].shape == int(si)) {
        here.push_back(int(i));
        (rows[i].ag ? ag : rs) = true;
        chunked_rs = chunked_rs || (!rows[i].ag && rows[i].kind == Kind::kChunked);
        (rows[i].ag ? copy_ag : copy_rs) |= peer_pulls(rows[i].kind);
        bf16_rs = bf16_rs || (!rows[i].ag && (bf16_terms(rows[i].kind) ||
                                              rows[i].kind == Kind::kCommBf16));
      }
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double need = bytes_needed(s, G, ag, rs, chunked_rs, copy_rs, bf16_rs);
    if (need > 0.9 * double(free_b)) {
      std::fprintf(stderr, "%dx%dx%d needs %.1f GiB on each of %d GPUs; GPU %d has %.1f GiB "
                           "free\n", s.M, s.N, s.K, need / (1 << 30), G, r,
                   double(free_b) / (1 << 30));
      return kExitUsage;
    }
    ShapeBuffers b;
    setup_shape(s, rk, pieces, wait_pieces, opt.seed, ag, rs, chunked_rs, copy_rs, bf16_rs,
                &signals, &b);
    // Destroyed before b: closed while the peers' buffers still exist.
    PeerBuffers shards, stages, stages16;
    if (copy_ag)
      shards.open(rk, sh->shard_handle, b.ag.a_shard, b.ag.peer_shard, token.get(), done);
    if (copy_rs)
      stages.open(rk, sh->stage_handle, static_cast<const float*>(b.rs.stage), b.rs.peer_stage,
                  token.get(), done);
    if (bf16_rs && copy_rs)
      stages16.open(rk, sh->stage16_handle, static_cast<const bf16*>(b.rs.stage16),
                    b.rs.peer_stage16, token.get(), done);

    // Verify each step (not the halves alone, which are pieces of the unfused step).
    std::vector<int> timed;
    for (int i : here) {
      RowSlot& slot = sh->at(i, r);
      const RowSpec& row = rows[i];
      if (!is_step(row.kind)) {
        prewarm(rk, row.kind, row.ag, b);
        slot.status = kTimed;
        timed.push_back(i);
        continue;
      }
      prewarm(rk, row.kind, row.ag, b);
      const std::vector<float> got = run_verified(rk, row, b, token.get(), done);
      const std::vector<float>& ref = row.ag ? b.ag_ref : b.rs_ref;
      const int64_t cols = row.ag ? b.ag.n.size() : s.N;
      const int64_t nrows = cols ? int64_t(ref.size()) / cols : 0;
      VerifyResult v;
      v.pass = true;
      if (nrows * cols > 0) {
        const double ref_rms = rms(ref.data(), int64_t(ref.size()));
        const Tolerance tol = bf16_terms(row.kind) ? bf16_partials_tolerance(s.K, ref_rms)
                                  : tensor_core_tolerance(s.K, ref_rms);
        v = verify(got.data(), ref.data(), int(nrows), int(cols), tol);
      }
      slot.rel_err = v.rel_err;
      if (!v.pass) {
        char what[160];
        std::snprintf(what, sizeof what, "%dx%dx%d %s on %d GPUs, rank %d", s.M, s.N, s.K,
                      row.name().c_str(), G, r);
        print_mismatches(stderr, what, v);
      }
      if (opt.twice) {  // on every rank, passed or not: the ranks' launches must match
        const std::vector<float> again = run_verified(rk, row, b, token.get(), done);
        if (v.pass && std::memcmp(again.data(), got.data(), got.size() * sizeof(float)) != 0) {
          std::fprintf(stderr, "%dx%dx%d %s on %d GPUs, rank %d: FAIL the second run gave "
                               "other bits\n", s.M, s.N, s.K, row.name().c_str(), G, r);
          v.pass = false;
        }
      }
      slot.status = v.pass ? kPass : kFail;
      // Every rank times the same rows (the collectives must match): a row that failed on any
      // rank is still timed here and reported FAIL by the parent.
      if (opt.bench) timed.push_back(i);
    }
    if (timeline)
      for (int i : here) traced_run(rk, rows[i], s, b, token.get(), start, stop, done, tl);
    if (!opt.bench) continue;

    // Timing: rounds of every row of this shape, each round in round_order (the same on every
    // rank: NCCL's calls must match), each run between a barrier and two events on stream 0.
    // --sequential: each row's runs back to back instead (its warm-up runs before each row).
    const int reps = std::min(opt.reps, kMaxReps), runs = kWarmup + reps;
    std::vector<std::pair<int, int>> plan;  // (round, index into timed), in the order run
    if (opt.sequential) {
      for (int o = 0; o < int(timed.size()); ++o)
        for (int round = 0; round < runs; ++round) plan.push_back({round, o});
    } else {
      for (int round = 0; round < runs; ++round)
        for (int o : round_order(int(timed.size()), round)) plan.push_back({round, o});
    }
    {
      for (const auto& [round, o] : plan) {
        const int i = timed[o];
        // The L2 flushed (a memset of twice its size, as every chapter's timer does), then the
        // barrier: every rank's run starts when the slowest rank is ready, so one rank's late
        // start is not counted as another's communication time.
        CUDA_CHECK(cudaMemsetAsync(flush.get(), round & 0xff, flush.size(), 0));
        rk.reset();
        stream_waits(rk, rk.comm_stream, 0);
        NCCL_CHECK(ncclAllReduce(token.get(), token.get(), 1, ncclFloat, ncclSum, rk.comm,
                                 rk.comm_stream));
        stream_waits(rk, 0, rk.comm_stream);
        CUDA_CHECK(cudaEventRecord(start, 0));
        launch_row(rk, rows[i], b);
        CUDA_CHECK(cudaEventRecord(stop, 0));
        wait_bounded(rk, stop, ("a timed run of " + rows[i].name()).c_str());
        if (round >= kWarmup) {
          float ms = 0;
          CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
          RowSlot& slot = sh->at(i, r);
          slot.ms[slot.reps++] = ms;
        }
      }
    }
  }
  if (tl) std::fclose(tl);
  ncclCommDestroy(rk.comm);
  // Completed: 0, whatever the checks found (the parent reads them from the slots). Any other
  // exit status means this rank stopped early, and the others must be stopped.
  return kExitPass;
}

// --- The parent ----------------------------------------------------------------------------------
// Forks f(rank) for each rank and waits for all. A rank that exits with anything but 0 stopped
// early (an error, bad usage, a skip): the others would wait for it inside NCCL forever, so
// they are stopped (each by its pid) and its status is the run's. A run in which no rank
// finishes a wait for timeout_s + 60 s (the ranks' own bounded waits end first) is stopped too.
int run_ranks(int G, int timeout_s, const std::function<int(int)>& f) {
  std::fflush(nullptr);  // nothing buffered is printed twice by the children
  std::vector<pid_t> pids(G, -1);
  for (int r = 0; r < G; ++r) {
    const pid_t p = fork();
    if (p < 0) {
      std::perror("fork");
      for (int q = 0; q < r; ++q) kill(pids[q], SIGKILL);
      return kExitFail;
    }
    if (p == 0) {
      const int code = f(r);
      std::fflush(nullptr);
      _exit(code);  // not exit(): the parent's atexit handlers and buffers are not the child's
    }
    pids[r] = p;
  }
  std::vector<int> code(G, -1);
  int left = G, worst = kExitPass;
  double t0 = now_s();  // the last sign of progress
  int64_t last_beat = -1;
  auto stop_all = [&] {
    for (int r = 0; r < G; ++r)
      if (code[r] < 0) kill(pids[r], SIGKILL);
    for (int r = 0; r < G; ++r)
      if (code[r] < 0) waitpid(pids[r], nullptr, 0), code[r] = kExitFail;
  };
  while (left > 0) {
    int st = 0;
    const pid_t p = waitpid(-1, &st, WNOHANG);
    if (p > 0) {
      const int r = int(std::find(pids.begin(), pids.end(), p) - pids.begin());
      if (r >= G) continue;
      code[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      --left;
      if (code[r] != kExitPass) {
        if (left > 0)
          std::fprintf(stderr, "rank %d ended with exit status %d; stopping the others\n", r,
                       code[r]);
        worst = code[r] == kExitUsage || code[r] == kExitSkip ? code[r] : kExitFail;
        stop_all();
        return worst;
      }
      continue;
    }
    const int64_t beat = g_shared ? g_shared->beat.load(std::memory_order_relaxed) : 0;
    if (beat != last_beat) last_beat = beat, t0 = now_s();
    if (now_s() - t0 > timeout_s + 60.0) {  // the ranks' own waits end first; this is the net
      std::string late;
      for (int r = 0; r < G; ++r)
        if (code[r] < 0) late += (late.empty() ? "" : ", ") + std::to_string(r);
      std::fprintf(stderr, "timed out: rank(s) %s made no progress for %d s (a hang in NCCL?); "
                           "stopped\n", late.c_str(), timeout_s + 60);
      stop_all();
      return kExitFail;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return worst;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  int gpus_opt = 0, chunks = 2, wait_pieces = 4, timeout_s = 600, timeline = 0;
  const CliSpec& spec = spec_with(&gpus_opt, &chunks, &wait_pieces, &timeout_s, &timeline);
  Options opt;
  std::string error;
  switch (parse_cli(spec, argc, argv, &opt, &error)) {
    case CliStatus::kHelp:
      std::printf("%s", usage_text(spec).c_str());
      std::printf("Environment: MANY_GPUS_SKIP_FEWER=1 makes too few GPUs a skip (77, the "
                  "tests) rather than bad usage (2).\n");
      return kExitPass;
    case CliStatus::kList:
      for (const auto& k : spec.kernels)
        std::printf("%s step bf16 %dx%dx%d\n", k.c_str(), spec.default_shapes[0].M,
                    spec.default_shapes[0].N, spec.default_shapes[0].K);
      return kExitPass;
    case CliStatus::kError:
      std::fprintf(stderr, "%s: %s\n", spec.program.c_str(), error.c_str());
      return kExitUsage;
    case CliStatus::kOk:
      break;
  }
  if (opt.reps > kMaxReps) {
    std::fprintf(stderr, "%s: --reps %d: at most %d here\n", spec.program.c_str(), opt.reps,
                 kMaxReps);
    return kExitUsage;
  }

  // The CSV is opened now, so that a path that cannot be written is bad usage, before any GPU
  // work; the rows are written at the end.
  FILE* csv = opt.csv.empty() ? nullptr : std::fopen(opt.csv.c_str(), "w");
  if (!opt.csv.empty() && !csv) {
    std::fprintf(stderr, "%s: error: --csv: cannot write '%s'\n", spec.program.c_str(),
                 opt.csv.c_str());
    return kExitUsage;
  }

  // NVLink multicast (NVLS) stays off: on shared hosts it can take the GPUs out of service.
  // Set before any NCCL call (NCCL reads its environment once, at its first initialization).
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  if (!nvls || std::strcmp(nvls, "0") != 0) {
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    std::printf("NCCL_NVLS_ENABLE=0 (%s): NVLink multicast stays off\n",
                nvls ? (std::string("was ") + nvls + ", overridden").c_str() : "set by this program");
  } else {
    std::printf("NCCL_NVLS_ENABLE=0 (from the environment): NVLink multicast stays off\n");
  }
  int nccl_runtime = 0;
  NCCL_CHECK(ncclGetVersion(&nccl_runtime));  // no CUDA: safe before the fork
  std::printf("NCCL: header %s, runtime %s\n", version_text(NCCL_VERSION_CODE).c_str(),
              version_text(nccl_runtime).c_str());
  if (nccl_runtime < 21000) {  // 2.10: BF16; ncclSend/ncclRecv since 2.7
    std::fprintf(stderr, "NCCL runtime %s is older than 2.10, which this program needs (BF16, "
                         "ncclSend/ncclRecv)\n", version_text(nccl_runtime).c_str());
    return kExitUsage;
  }

  // The rows and the shared area. The parent never initializes CUDA (a child forked after that
  // could not use the GPU): a probe child counts the GPUs.
  std::vector<RowSpec> rows;
  const bool any_ag = std::any_of(opt.kernels.begin(), opt.kernels.end(),
                                  [](const std::string& k) { return k[0] == 'a'; });
  const bool any_rs = std::any_of(opt.kernels.begin(), opt.kernels.end(),
                                  [](const std::string& k) { return k[0] == 'r'; });
  for (int si = 0; si < int(opt.shapes.size()); ++si)
    for (bool ag : {true, false}) {
      if (!(ag ? any_ag : any_rs)) continue;
      if (opt.bench) {
        rows.push_back({si, ag, Kind::kGemm});
        rows.push_back({si, ag, Kind::kComm});
        // Beside a step whose GEMM or bytes differ, the pieces of its own limit.
        auto asked = [&](const char* k) {
          return std::find(opt.kernels.begin(), opt.kernels.end(), k) != opt.kernels.end();
        };
        if (ag && (asked("ag_tile_wait") || asked("ag_slice_wait")))
          rows.push_back({si, ag, Kind::kGemmTiles});
        if (!ag &&
            (asked("rs_bf16_partials") || asked("rs_one_sum") || asked("rs_sum_epilogue")))
          rows.push_back({si, ag, Kind::kCommBf16});
      }
      for (const auto& k : opt.kernels)
        if ((k[0] == 'a') == ag)
          rows.push_back({si, ag, kind_of(k)});
    }
  const size_t map_bytes = sizeof(Shared) + sizeof(RowSlot) * rows.size() * kMaxGpus;
  void* mem = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("mmap");
    return kExitFail;
  }
  Shared* sh = new (mem) Shared();
  sh->id_ready.store(0);
  sh->beat.store(0);
  for (Published& p : sh->published) {  // step 4's flags: no launch yet
    for (auto& piece_flags : p.written_at)
      for (std::atomic<int64_t>& f : piece_flags) f.store(0);
    for (std::atomic<int64_t>& f : p.pulled_at) f.store(0);
  }
  g_shared = sh;
  run_ranks(1, 120, [&](int) {
    Probe& p = sh->probe;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    p.devices = n;
    for (int d = 0; d < std::min(n, kMaxGpus); ++d) {
      cudaDeviceProp prop;
      if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
      p.cc[d] = 10 * prop.major + prop.minor;
      std::snprintf(p.name[d], sizeof p.name[d], "%s", prop.name);
    }
    cudaRuntimeGetVersion(&p.runtime);
    cudaDriverGetVersion(&p.driver);
    return 0;
  });
  const Probe& probe = sh->probe;
  if (probe.devices <= 0) {
    std::fprintf(stderr, "%s: no usable CUDA device; skipping\n", spec.program.c_str());
    return kExitSkip;
  }
  const int visible = std::min(probe.devices, kMaxGpus);
  const int G = gpus_opt ? gpus_opt : visible;
  if (G > probe.devices) {
    const char* skip = std::getenv("MANY_GPUS_SKIP_FEWER");
    const bool as_skip = skip && std::strcmp(skip, "1") == 0;
    std::fprintf(stderr, "%s: --gpus %d: this machine has %d GPU%s%s\n", spec.program.c_str(), G,
                 probe.devices, probe.devices == 1 ? "" : "s", as_skip ? "; skipping" : "");
    return as_skip ? kExitSkip : kExitUsage;
  }
  for (int d = 0; d < G; ++d)
    if (probe.cc[d] != spec.min_cc) {
      std::fprintf(stderr, "%s: needs compute capability 9.0 (%s); GPU %d is %d.%d; skipping\n",
                   spec.program.c_str(), spec.min_cc_why.c_str(), d, probe.cc[d] / 10,
                   probe.cc[d] % 10);
      return kExitSkip;
    }
  std::printf("%d GPU%s, one process each; rows of A padded to %d shards of ceil(M / %d) rows, "
              "a multiple of %d\n", G, G == 1 ? "" : "s", G, G, int(kShardAlign));

  {  // the records' comment lines (the CSV and the timeline), made before the fork
    char date[32], line[512];
    const std::time_t t = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&t));
    std::string cmd;
    for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + std::string(argv[i]);
    std::snprintf(line, sizeof line, "# device: %d x %s, sm_%d\n# versions: CUDA runtime %d.%d, "
                  "driver %d.%d; NCCL header %s, runtime %s; NCCL_NVLS_ENABLE=0\n# date: %s\n",
                  G, probe.name[0], probe.cc[0], probe.runtime / 1000,
                  probe.runtime % 1000 / 10, probe.driver / 1000, probe.driver % 1000 / 10,
                  version_text(NCCL_VERSION_CODE).c_str(), version_text(nccl_runtime).c_str(),
                  date);
    g_record_header = line + ("# command: " + cmd + "\n");
  }
  sh->rows = int(rows.size());
  sh->gpus = G;
  const int code = run_ranks(G, timeout_s, [&](int r) {
    return run_rank(r, G, opt, rows, chunks, wait_pieces, timeout_s, timeline != 0, sh);
  });
  if (code != kExitPass && code != kExitFail) return code;

  // The table: per row, each run's slowest rank, then the median over runs.
  struct Out {
    double ms = 0, lo = 0, hi = 0, rel_err = 0;
    int reps = 0;
    bool pass = true, timed = false;
  };
  std::vector<Out> out(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    Out& o = out[i];
    int reps = kMaxReps;
    for (int r = 0; r < G; ++r) {
      const RowSlot& s = sh->at(int(i), r);
      o.pass = o.pass && s.status != kFail && s.status != kNotRun;
      o.rel_err = std::max(o.rel_err, s.rel_err);
      reps = std::min(reps, s.reps);
    }
    if (reps == 0 || reps == kMaxReps) continue;
    std::vector<double> slowest(reps, 0);
    for (int k = 0; k < reps; ++k)
      for (int r = 0; r < G; ++r) slowest[k] = std::max<double>(slowest[k], sh->at(int(i), r).ms[k]);
    o.ms = median(slowest);
    o.lo = *std::min_element(slowest.begin(), slowest.end());
    o.hi = *std::max_element(slowest.begin(), slowest.end());
    o.reps = reps;
    o.timed = true;
  }
  auto find = [&](int shape, bool ag, Kind k) -> const Out* {
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].shape == shape && rows[i].ag == ag && rows[i].kind == k) return &out[i];
    return nullptr;
  };
  if (csv) {
    std::fprintf(csv, "%s", g_record_header.c_str());
    std::fprintf(csv, "program,layer,step,gpus,M,N,K,chunks,ms_median,ms_min,ms_max,reps,"
                      "tflops,limit_ms,pct_of_limit,x_unfused,rel_err,status\n");
  }
  std::printf("\n%-12s %4s %20s %10s %10s %10s %9s %9s %9s %9s %s\n", "step", "gpus", "M x N x K",
              "ms", "min", "max", "TFLOP/s", "limit ms", "% limit", "x unfused", "status");
  bool all_pass = code == kExitPass;
  for (size_t i = 0; i < rows.size(); ++i) {
    const RowSpec& row = rows[i];
    const Out& o = out[i];
    const Shape& s = opt.shapes[row.shape];
    // The limit: the faster GEMM alone (chapter 09's; step 5's where timed) and the comm alone
    // of the bytes the row moves (BF16 for steps 7-9).
    const Out* g = find(row.shape, row.ag, Kind::kGemm);
    const Out* gt = find(row.shape, row.ag, Kind::kGemmTiles);
    if (g && gt && gt->timed && (!g->timed || gt->ms < g->ms)) g = gt;
    const bool bf16 = bf16_terms(row.kind) || row.kind == Kind::kCommBf16;
    const Out* c = find(row.shape, row.ag, bf16 ? Kind::kCommBf16 : Kind::kComm);
    const Out* u = find(row.shape, row.ag, Kind::kUnfused);
    const double limit = g && c && g->timed && c->timed ? std::max(g->ms, c->ms) : 0;
    const bool step = is_step(row.kind);  // verified; the GEMMs and comms alone are only timed
    const double pct = step && o.timed && limit > 0 ? 100 * limit / o.ms : 0;
    const double xu = step && o.timed && u && u->timed ? u->ms / o.ms : 0;
    // The whole layer's rate (every GPU): the GEMM's FLOPs over the slowest rank's time.
    const double tflops = o.timed && row.kind != Kind::kComm && row.kind != Kind::kCommBf16
                              ? 2.0 * s.M * s.N * s.K / (o.ms * 1e9) : 0;
    const char* status = !step ? "timed" : o.pass ? "pass" : "FAIL";
    all_pass = all_pass && o.pass;
    char shape[48];
    std::snprintf(shape, sizeof shape, "%dx%dx%d", s.M, s.N, s.K);
    if (o.timed)
      std::printf("%-12s %4d %20s %10.4f %10.4f %10.4f %9.1f %9.4f %8.1f%% %9.2f %s\n",
                  row.name().c_str(), G, shape, o.ms, o.lo, o.hi, tflops, limit, pct, xu, status);
    else
      std::printf("%-12s %4d %20s %10s %10s %10s %9s %9s %9s %9s %s (rel_err %.2e)\n",
                  row.name().c_str(), G, shape, "-", "-", "-", "-", "-", "-", "-", status,
                  o.rel_err);
    const bool waits = row.kind == Kind::kTileWait || row.kind == Kind::kSliceWait;
    if (csv)
      std::fprintf(csv, "many_gpus,%s,%s,%d,%d,%d,%d,%d,%.6f,%.6f,%.6f,%d,%.2f,%.6f,%.2f,%.3f,"
                        "%.3e,%s\n", row.ag ? "ag" : "rs", row.name().substr(3).c_str(), G, s.M,
                   s.N, s.K, waits ? wait_pieces : chunks, o.ms, o.lo, o.hi, o.reps, tflops,
                   limit, pct, xu, o.rel_err, status);
  }
  if (csv) std::fclose(csv);
  std::printf("%s\n", all_pass ? "PASSED" : "FAILED");
  return all_pass ? kExitPass : kExitFail;
}
