// Step 8: one sum a piece. Step 7's sums add each term into the FP32 output as it arrives, one
// pass over the output per term: at TP = 4 three read-modify-write passes of the output and
// one for the own rows, each a kernel beside the GEMM, and the last ones after it (step 7's
// timeline). Here a piece of the output is summed once, when all its terms are here: one
// kernel reads the G - 1 BF16 terms and the FP32 own rows and writes the output, in a fixed
// order (from r - 1, ..., from r - G + 1, then own), on every SM it can get. Fewer bytes an
// element: 2 (G - 1) + 4 read and 4 written (14 at G = 4), against step 7's 2 + 4 for the
// first term, 2 + 4 + 4 for each other, 4 + 4 + 4 for the own rows (6 + 10 (G - 2) + 12: 38
// at G = 4); one launch a piece, and nothing summed while the GEMM runs but what is complete.
//
//   build/12_many_gpus/many_gpus --gpus 4 --kernel rs_bf16_partials,rs_one_sum
#pragma once

#include "12_many_gpus/layer.cuh"
#include "12_many_gpus/steps/7_bf16_partials.cuh"  // gemm_bf16, the rounding

// The G - 1 BF16 terms of a piece, in the sum's order.
struct Terms {
  const bf16* term[kMaxGpus - 1];
  int count;
};
// out (n) = term 0 + term 1 + ... + own, FP32, left to right; 4 elements a step where aligned.
__global__ void sum_terms_kernel(float* out, const Terms t, const float* own, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t i0 = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  bool vec = (reinterpret_cast<uintptr_t>(out) & 15) == 0 &&
             (reinterpret_cast<uintptr_t>(own) & 15) == 0;
  // Every loop over the terms unrolled to kMaxGpus - 1 with a bound test, so that t.term is
  // indexed by constants and stays in the parameter space (a variable index would copy it to
  // a stack frame).
#pragma unroll
  for (int j = 0; j < kMaxGpus - 1; ++j)
    if (j < t.count) vec = vec && (reinterpret_cast<uintptr_t>(t.term[j]) & 7) == 0;
  const int64_t n4 = vec ? n / 4 : 0;
  for (int64_t i = i0; i < n4; i += stride) {
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int j = 0; j < kMaxGpus - 1; ++j) {
      if (j >= t.count) break;
      const uint2 raw = reinterpret_cast<const uint2*>(t.term[j])[i];
      const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
      const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
      s.x += a.x, s.y += a.y, s.z += b.x, s.w += b.y;
    }
    const float4 o = reinterpret_cast<const float4*>(own)[i];
    s.x += o.x, s.y += o.y, s.z += o.z, s.w += o.w;
    reinterpret_cast<float4*>(out)[i] = s;
  }
  for (int64_t i = 4 * n4 + i0; i < n; i += stride) {
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < kMaxGpus - 1; ++j)
      if (j < t.count) s += __bfloat162float(t.term[j][i]);
    out[i] = s + own[i];
  }
}
void launch_sum_terms(float* out, const Terms& t, const float* own, int64_t n, cudaStream_t s) {
  if (n <= 0) return;
  const int blocks = int(std::min<int64_t>(4 * 132, (n / 4 + 255) / 256 + 1));
  const int sp = span_begin(s, "add");
  sum_terms_kernel<<<blocks, 256, 0, s>>>(out, t, own, n);
  CUDA_CHECK_LAUNCH();
  span_end(sp);
}

void launch_rs_one_sum(Rank& rk, const RsLayer& l) {
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
  // The own rows, last: into out where no peer adds (G = 1), else into receive slot 0, free;
  // each piece's end marked (own_done[p]) for its sum.
  float* own_rows = G == 1 ? l.out : l.recv;
  std::vector<cudaEvent_t> own_done(size_t(l.pieces)), arrived(size_t(G) * l.pieces, nullptr);
  for (int p = 0; p < l.pieces; ++p) {
    const Range piece = piece_rows(l.S, l.pieces, p);
    const int64_t rows = std::max<int64_t>(0, std::min(piece.end, own.size()) - piece.begin);
    gemm(rows, N, Kr, l.a + (own.begin + piece.begin) * Kr, l.w, own_rows + piece.begin * N);
    own_done[size_t(p)] = rk.event();
    CUDA_CHECK(cudaEventRecord(own_done[size_t(p)], 0));
  }
  // Every pull, each peer's on its own stream, BF16 into receive area recv16.
  for (int j = 1; j < G; ++j) {
    const int from = rs_from(r, G, j);
    cudaStream_t copy = rk.copy_streams[j - 1];
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
      arrived[size_t(j) * l.pieces + p] = rk.event();
      CUDA_CHECK(cudaEventRecord(arrived[size_t(j) * l.pieces + p], copy));
    }
    CUDA_CHECK(cudaEventRecord(sig.pulled[j], copy));  // every piece from `from` is here
    sig.mine->pulled_at[j].store(launch, std::memory_order_release);
  }
  // One sum a piece, when all its terms are here: out = from(r, 1) + ... + from(r, G - 1) + own,
  // in that order for every element, every run.
  if (G > 1)
    for (int p = 0; p < l.pieces; ++p) {
      const Range piece = piece_rows(l.S, l.pieces, p);
      const int64_t rows = std::max<int64_t>(0, std::min(piece.end, own.size()) - piece.begin);
      if (rows == 0) continue;
      CUDA_CHECK(cudaStreamWaitEvent(rk.sum_stream, own_done[size_t(p)], 0));
      Terms t;
      t.count = G - 1;
      for (int j = 1; j < G; ++j) {
        CUDA_CHECK(cudaStreamWaitEvent(rk.sum_stream, arrived[size_t(j) * l.pieces + p], 0));
        t.term[j - 1] = l.recv16 + j * slot + piece.begin * N;
      }
      launch_sum_terms(l.out + piece.begin * N, t, l.recv + piece.begin * N, rows * N,
                       rk.sum_stream);
    }
  for (int j = 1; j < G; ++j) stream_waits(rk, 0, rk.copy_streams[j - 1]);
  join_streams(rk);
}
