// Step 7: BF16 partials on the wire. Steps 4 and 6 move FP32 partial sums, chapter 09's output:
// twice the bytes of the BF16 layer PyTorch runs, and at most of the issue's shapes the
// exchange is the longer half (8192x28672x8192, TP = 4: NCCL's FP32 reduce-scatter alone 2.2
// ms, the GEMM 1.37). Here the GEMM of each piece of the peers' rows rounds its FP32
// accumulators to BF16 in its epilogue (step 5's kernel, its output type a template argument:
// launch_gemm_bf16_out) and writes half the bytes, and the peers pull the BF16 piece: half the
// bytes over NVLink, at no extra pass. Where TMA cannot take the K slice (K_r % 8 != 0), chapter
// 09's GEMM writes FP32 and round_partial_kernel rounds it in a pass. The sums stay FP32:
// the add reads the BF16 terms and adds them into the FP32 output in step 6's order (own rows
// are never sent, so they stay FP32).
// What it costs in accuracy: each peer's term is rounded once, to 8 significant bits, |error| <=
// 2^-8 |term| (round to nearest). Random terms round independently: the typical error of an
// element is about 2^-8 / sqrt(3) of a term's size times sqrt(G - 1), against chapter 09's
// FP32 accumulation far below it; the check adds that to its tolerance (main.cu,
// bf16_partials_tolerance). A missing or wrong term is of the size of a whole term, ~100x more.
// The handshake is step 4's.
// Measured first with the rounding as a pass after chapter 09's GEMM (NOTES.md, run 3): six
// 65-87 us passes on stream 0 cost more than the halved pulls saved.
// Counterparts: PyTorch's fused_matmul_reduce_scatter and NCCL's BF16 reduce-scatter (both sum
// in BF16 on the wire; here the sum is FP32 and in a fixed order).
//
//   build/12_many_gpus/many_gpus --gpus 4 --kernel rs_others_first,rs_bf16_partials
#pragma once

#include "12_many_gpus/layer.cuh"
#include "12_many_gpus/tile_wait.h"  // launch_gemm_bf16_out
#include "common/matrix.h"  // DeviceBuffer
#include "12_many_gpus/steps/2_chunked.cuh"  // launch_add_partial
#include "12_many_gpus/steps/4_copy_engine_rs.cuh"  // the signals

// dst (n BF16) = src (n FP32), rounded to nearest; 8 elements a thread-step where aligned.
__global__ void round_partial_kernel(bf16* dst, const float* src, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t i0 = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool vec = (reinterpret_cast<uintptr_t>(dst) & 15) == 0 &&
                   (reinterpret_cast<uintptr_t>(src) & 15) == 0;
  const int64_t n8 = vec ? n / 8 : 0;
  for (int64_t i = i0; i < n8; i += stride) {
    const float4 a = reinterpret_cast<const float4*>(src)[2 * i];
    const float4 b = reinterpret_cast<const float4*>(src)[2 * i + 1];
    __nv_bfloat162 o[4] = {__floats2bfloat162_rn(a.x, a.y), __floats2bfloat162_rn(a.z, a.w),
                           __floats2bfloat162_rn(b.x, b.y), __floats2bfloat162_rn(b.z, b.w)};
    reinterpret_cast<uint4*>(dst)[i] = *reinterpret_cast<const uint4*>(o);
  }
  for (int64_t i = 8 * n8 + i0; i < n; i += stride) dst[i] = __float2bfloat16_rn(src[i]);
}
// out (n FP32) = part (assign) or out + part, part BF16.
__global__ void add_bf16_kernel(float* out, const bf16* part, int64_t n, bool assign) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t i0 = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool vec = (reinterpret_cast<uintptr_t>(out) & 15) == 0 &&
                   (reinterpret_cast<uintptr_t>(part) & 7) == 0;
  const int64_t n4 = vec ? n / 4 : 0;
  for (int64_t i = i0; i < n4; i += stride) {
    const uint2 raw = reinterpret_cast<const uint2*>(part)[i];
    const float2 p0 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
    const float2 p1 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
    float4 o = assign ? make_float4(0.f, 0.f, 0.f, 0.f) : reinterpret_cast<float4*>(out)[i];
    o.x += p0.x, o.y += p0.y, o.z += p1.x, o.w += p1.y;
    reinterpret_cast<float4*>(out)[i] = o;
  }
  for (int64_t i = 4 * n4 + i0; i < n; i += stride)
    out[i] = (assign ? 0.f : out[i]) + __bfloat162float(part[i]);
}
// As launch_add_partial (step 2): at most 132 blocks, beside the GEMM.
void launch_round_partial(bf16* dst, const float* src, int64_t n, cudaStream_t s) {
  if (n <= 0) return;
  const int blocks = int(std::min<int64_t>(4 * 132, (n / 8 + 255) / 256 + 1));
  const int sp = span_begin(s, "round to BF16");
  round_partial_kernel<<<blocks, 256, 0, s>>>(dst, src, n);
  CUDA_CHECK_LAUNCH();
  span_end(sp);
}
void launch_add_bf16(float* out, const bf16* part, int64_t n, bool assign, cudaStream_t s) {
  if (n <= 0) return;
  const int blocks = int(std::min<int64_t>(132, (n / 4 + 255) / 256 + 1));
  const int sp = span_begin(s, "add");
  add_bf16_kernel<<<blocks, 256, 0, s>>>(out, part, n, assign);
  CUDA_CHECK_LAUNCH();
  span_end(sp);
}

// Block m = row block m, no flags: what launch_gemm_bf16_out reads, for up to `rows` rows.
// Made (and grown) outside the timed runs: main.cu's warm-up calls it with the shard's rows.
inline const BlockWait* identity_blocks(int64_t rows) {
  static DeviceBuffer<BlockWait> d;
  const size_t need = size_t(std::max<int64_t>(1, (rows + kArrivalBlock - 1) / kArrivalBlock));
  if (d.size() < need) {
    // One rank, one piece: every block is "own", in row order.
    const std::vector<BlockWait> h = arrival_order(int64_t(need) * kArrivalBlock, 1, 0, 1);
    d = DeviceBuffer<BlockWait>(need);
    CUDA_CHECK(cudaMemcpy(d.get(), h.data(), need * sizeof(BlockWait), cudaMemcpyHostToDevice));
  }
  return d.get();
}

// C16 (rows, N) BF16 = A (rows, K_r) W^T on stream 0: rounded in the GEMM's epilogue, or (K_r %
// 8 != 0) chapter 09's FP32 GEMM into c32, then a rounding pass.
void gemm_bf16(int64_t rows, int64_t N, int64_t Kr, const bf16* A, const bf16* W, bf16* c16,
               float* c32) {
  if (rows <= 0 || N <= 0) return;
  if (Kr > 0 && Kr % 8 == 0) {
    const int sp = span_begin(0, "GEMM", rows, "rows to BF16");
    launch_gemm_bf16_out(int(rows), int(N), int(Kr), A, W, c16, identity_blocks(rows));
    span_end(sp);
    return;
  }
  gemm(rows, N, Kr, A, W, c32);
  launch_round_partial(c16, c32, rows * N, 0);
}

void launch_rs_bf16_partials(Rank& rk, const RsLayer& l) {
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
      gemm_bf16(rows, N, Kr, l.a + (theirs.begin + piece.begin) * Kr, l.w,
                l.stage16 + j * slot + piece.begin * N, l.stage + j * slot + piece.begin * N);
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
  // Every pull, each peer's on its own stream, BF16 into receive area recv16; each term added
  // into out (from(r, 1)'s assigned) when it has arrived, in step 6's order on the sum stream.
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
      bf16* got = l.recv16 + j * slot + piece.begin * N;
      pull(got, l.peer_stage16[from] + j * slot + piece.begin * N, size_t(rows) * N * sizeof(bf16),
           copy, from);
      stream_waits(rk, rk.sum_stream, copy);  // the piece has arrived
      // In one order on one stream, every run: out = from(r, 1) + ... + own + from(r, G - 1).
      launch_add_bf16(l.out + piece.begin * N, got, rows * N, j == 1, rk.sum_stream);
    }
    CUDA_CHECK(cudaEventRecord(sig.pulled[j], copy));  // every piece from `from` is here
    sig.mine->pulled_at[j].store(launch, std::memory_order_release);
  }
  if (G == 2) add_own();  // from(r, 1) + own
  for (int j = 1; j < G; ++j) stream_waits(rk, 0, rk.copy_streams[j - 1]);
  join_streams(rk);
}

// NCCL's reduce-scatter of BF16 partials alone (the bytes step 7 moves), for its limit.
void launch_rs_comm_bf16(Rank& rk, const RsLayer& l) {
  rk.reset();
  fork_streams(rk);
  NCCL_CHECK(ncclReduceScatter(l.stage16, l.recv16, size_t(l.S) * l.N, ncclBfloat16, ncclSum,
                               rk.comm, rk.comm_stream));
  join_streams(rk);
}
