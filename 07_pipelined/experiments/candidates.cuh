// Chapter 07, experiment: the autotuner's candidates one by one, each with its own split-K plan
// (run_candidate, steps/6_pipelined.cuh), and the fifth candidate that left the list. Results:
// NOTES.md.
//   tune_128x256x64_s3, tune_256x128x64_s3, tune_128x256x32_s4, tune_128x128x64_s3
//                 step 6's candidates (pipelined_kernel at PipeConfig Pipe3, PipeTall,
//                 PipeBk32, PipeSmall)
//   tune_128x256x64_s3_16w
//                 16 warps of 64 x 32 on the 128 x 256 tile, 3 stages: more warps to hide
//                 latency, but 128 registers a thread leave no room for fragment double
//                 buffering, and the 64 x 32 warp tile needs half again as many ldmatrix per mma.
//                 It lost at every shape measured and left the candidate list. Its own copy of
//                 step 1's kernel (the ring without fragment double buffering, the 8-byte
//                 epilogue) with the block order and the split-K slice, tune_16w_kernel, below
//
//   ./build/07_pipelined/pipelined --kernel sweep --size 4096 --bench   # every experiment
//   ./build/07_pipelined/pipelined --kernel tune_128x256x64_s3_16w --size 4096 --bench
//
// Included once, by 07_pipelined/kernels.cu, after the steps.
#pragma once

#include "shared/tensorcore/mma_ptx.cuh"
#include "shared/tensorcore/splitk.cuh"
#include "shared/tensorcore/pad.cuh"
#include "shared/tensorcore/pipelined.cuh"
#include "07_pipelined/steps/6_pipelined.cuh"
#include "07_pipelined/tile_copier.cuh"
#include "common/device.h"

template <typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    tune_16w_kernel(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ Bt,
                    float* __restrict__ out, int group, int64_t slice_stride) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  constexpr int S = Cfg::kStages, KS = BK / 16;  // stages; k16 steps per tile
  using ATile = typename Cfg::ATile;
  using BTile = typename Cfg::BTile;
  static_assert(S >= 2, "a ring: one stage computed while the others fill (stages_1 has one)");

  const int tiles_m = ceil_div(M, BM), tiles_n = ceil_div(N, BN);
  const TileCoord tile = grouped_tile(blockIdx.x, tiles_m, tiles_n, group);
  const int m0 = tile.m * BM, n0 = tile.n * BN;
  // Split-K (chapter 06): slice blockIdx.z of gridDim.z sums the K range kr and writes its
  // partial tile to its own slice of the workspace (gridDim.z = 1: all of K, into C).
  const KRange kr = splitk_slice(K, BK, gridDim.z, blockIdx.z);
  float* __restrict__ C = out + blockIdx.z * slice_stride;
  const int tiles = ceil_div(kr.end - kr.begin, BK);

  extern __shared__ __align__(128) unsigned char smem_raw[];
  // S stages, each the (BM, BK) tile of A, then the (BN, BK) tile of Bᵀ. Shared memory is
  // addressed by 32-bit byte addresses (what ldmatrix and cp.async take), so that every
  // ldmatrix of a k16 step is one base register plus an immediate offset.
  const uint32_t smem = smem_addr(smem_raw);
  constexpr uint32_t kStageBytes = Cfg::kStageElems * 2;
  auto a_stage = [&](int s) { return smem + s * kStageBytes; };
  auto b_stage = [&](int s) { return smem + s * kStageBytes + ATile::kElems * 2; };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
  // The launcher guarantees 16-byte aligned rows (pad_operands_if_unaligned).
  using ACopier = TileCopier<BM, BK, Cfg::kThreads>;
  using BCopier = TileCopier<BN, BK, Cfg::kThreads>;
  const ACopier a_cp(A, M, K, m0, kr.begin);
  const BCopier b_cp(Bt, N, K, n0, kr.begin);
  // K tile t of the range into a stage. Where t is past the last tile the pieces are zero-filled
  // copies that read nothing: the group is still committed, and no branch is needed.
  auto copy_tile = [&](int t, int stage) {
    const bool ok = t < tiles && a_cp.k + t * BK < kr.end;  // a_cp.k == b_cp.k: the same k
    a_cp.copy(a_stage(stage), t * BK, ok);
    b_cp.copy(b_stage(stage), t * BK, ok);
  };

  // Per-lane byte offsets of this warp's first ldmatrix rows, one per k16 step (chapter 05).
  uint32_t a_off[KS], b_off[KS];
#pragma unroll
  for (int s = 0; s < KS; ++s) {
    a_off[s] = 2 * ATile::offset(wm + Ldmatrix::a_row(lane), 16 * s + Ldmatrix::a_col(lane));
    b_off[s] = 2 * BTile::offset(wn + Ldmatrix::b_row(lane), 16 * s + Ldmatrix::b_col(lane));
  }
  // The fragments of k16 step s of a stage: MI A tiles, NI B tiles (two per ldmatrix.x4).
  // Fragment i is 16 i rows on: 16 i * BK elements in the swizzled tile (MmaConfig's argument).
  auto load_frags = [&](uint32_t(&a)[MI][4], uint32_t(&b)[NI][2], int stage, int s) {
    const uint32_t as = a_stage(stage) + a_off[s];
    const uint32_t bs = b_stage(stage) + b_off[s];
#pragma unroll
    for (int i = 0; i < MI; ++i) ldmatrix_x4(a[i], as + 2 * 16 * i * BK);
#pragma unroll
    for (int j = 0; j < NI; j += 2) {
      uint32_t r[4];
      ldmatrix_x4(r, bs + 2 * 8 * j * BK);
      b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
    }
  };

  float acc[MI][NI][4] = {};  // C fragments: MI x NI tiles of (16, 8), 4 FP32 a lane each
  auto mma_all = [&](const uint32_t(&a)[MI][4], const uint32_t(&b)[NI][2]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], a[i], b[j]);
  };

  // ---- PREFETCH: tiles 0 .. S - 2 into stages 0 .. S - 2, one commit group each ----
  // Every tile position gets a group, empty or zero-filled where there is no tile, so that
  // group t is always tile t and cp_async_wait<S - 2> below always means "tile t has landed".
#pragma unroll
  for (int t = 0; t < S - 1; ++t) {
    copy_tile(t, t);
    cp_async_commit();
  }
  int read_stage = 0, write_stage = S - 1;
  auto next = [](int s) { return s + 1 == S ? 0 : s + 1; };

  // ---- PIPELINED MAIN LOOP: one barrier per tile ----
  for (int t = 0; t < tiles; ++t) {
    cp_async_wait<S - 2>();  // this thread's copies of tile t have landed
    // Everyone's copies of tile t have landed, and every warp has finished tile t - 1, whose
    // stage (write_stage) is now free for tile t + S - 1.
    __syncthreads();
    copy_tile(t + S - 1, write_stage);
    cp_async_commit();
#pragma unroll
    for (int s = 0; s < KS; ++s) {
      uint32_t a[MI][4], b[NI][2];
      load_frags(a, b, read_stage, s);
      mma_all(a, b);
    }
    read_stage = next(read_stage), write_stage = next(write_stage);
  }

  // ---- EPILOGUE ----
  // Straight from the registers (chapter 05): c0, c1 (and c2, c3, 8 rows down) are adjacent
  // columns, one 8-byte store where the row allows it. A quad of lanes writes 32 bytes of a row.
  const bool c_vec = N % 2 == 0 && aligned(C, 8);
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = m0 + wm + 16 * i + Mma16816::c_row(lane, 2 * h);
        const int n = n0 + wn + 8 * j + Mma16816::c_col(lane, 0);
        if (m >= M) continue;
        float* c = C + static_cast<int64_t>(m) * N + n;
        if (c_vec && n + 1 < N) {
          *reinterpret_cast<float2*>(c) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (n < N) c[0] = acc[i][j][2 * h];
          if (n + 1 < N) c[1] = acc[i][j][2 * h + 1];
        }
      }
}

// As step 6's launch_pipelined_cfg and pipelined_blocks_per_sm, for this kernel.
template <typename Cfg>
auto tune_16w_opted_in() {
  static const auto kernel = [] {
    require_smem_per_block(Cfg::kSmemBytes);
    auto k = tune_16w_kernel<Cfg>;
    CUDA_CHECK(
        cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
    return k;
  }();
  return kernel;
}
template <typename Cfg>
void launch_tune_16w_cfg(int M, int N, int K, const bf16* A, const bf16* Bt, float* out, int splits,
                         size_t slice_stride, bool atomic) {
  if (atomic) throw std::invalid_argument("tune_16w_kernel: SplitMode::kWorkspace only");
  auto kernel = tune_16w_opted_in<Cfg>();
  pad_operands_if_unaligned(M, N, K, A, Bt);  // pad.cu
  const dim3 grid(unsigned(ceil_div(M, Cfg::BM)) * unsigned(ceil_div(N, Cfg::BN)), 1,
                  unsigned(splits));
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes>>>(M, N, K, A, Bt, out, kPipeGroup,
                                                   int64_t(slice_stride));
  CUDA_CHECK_LAUNCH();
}
template <typename Cfg>
int tune_16w_blocks_per_sm() {
  static const int n = [] {
    auto kernel = tune_16w_opted_in<Cfg>();
    int b = 0;
    CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, Cfg::kThreads, Cfg::kSmemBytes));
    return b;
  }();
  return n;
}

// 16 warps of (64, 32), 3 stages: 144 KiB.
using PipeWarps16 = PipeConfig<128, 256, 64, 64, 32, 3>;

// Each candidate by name, through run_candidate as tuned() runs it.
template <typename Cfg>
void launch_tune(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  static const PipeCandidate c = make_candidate<Cfg>("");
  run_candidate(c, M, N, K, A, Bt, C);
}
void launch_tune_16w(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  static const PipeCandidate c{
      "128x256x64_s3_16w",
      SplitKBase<bf16>{TileShape{PipeWarps16::BM, PipeWarps16::BN, PipeWarps16::BK, 0},
                       launch_tune_16w_cfg<PipeWarps16>, tune_16w_blocks_per_sm<PipeWarps16>},
      PipeWarps16::kSmemBytes};
  run_candidate(c, M, N, K, A, Bt, C);
}
