// Exercise (chapter 07): the bookkeeping of the cp.async ring. A DELIBERATELY WRONG BODY
// (tests/meson.build expects it to fail). The loop copies tile t + S, one tile too far ahead,
// into the stage of tile t - 1. Its waits, barriers and commits are the solution's, one group
// per tile position, so the wait counts still hold and nothing races; but tile S - 1 is never
// copied: the loop reads tiles 0 .. S - 2, then S, S + 1, ... and last a zero-filled position
// past the end, so every element of C misses tile S - 1's products, on every run alike (with
// K <= (S - 1) BK it is right). It cannot hang: wait_group waits only for this thread's own
// copies, which always complete, and every thread reaches every barrier. (A wrong wait count
// or a misplaced barrier would be likelier, but it races, and a test that must fail cannot
// rest on a race.)
//
// cp_async2's kernel (steps/1_cp_async2.cuh: Pipe2, a ring of S = 2 stages) with the ring's
// bookkeeping taken out. The copies themselves are written (TileCopier, and copy_tile(t,
// stage), which zero-fills a tile position past the last tile, reading nothing), and so are the
// fragment loads and the mma, the epilogue and the launcher (the padding copy, the opt-in to
// S * 48 KiB of shared memory). Yours are:
//   - the prefetch: tiles 0 .. S - 2 into stages 0 .. S - 2 (at S = 2, tile 0 into stage 0),
//     each closed by a commit, and the stages that tile 0 is read from and tile S - 1 copied
//     into;
//   - at the top of the loop, for tile t: the wait (cp_async_wait<N>: which N?), the barrier,
//     the copies of tile t + S - 1 into the stage that tile t - 1 was read from, and a commit
//     (for every tile position, even past the last tile);
//   - at the bottom: the stages of tile t + 1.
// Write them for any S = Cfg::kStages: the kernel is built and tested at S = 2
// (ex_cp_async_pipeline, next to cp_async2) and at S = 3 (ex_cp_async_pipeline_s3, next to
// stages, the same step with Pipe3).
//
//   1. Delete the line `#define EXERCISE_NOT_WRITTEN_CP_ASYNC_PIPELINE` below.
//   2. Write the three marked parts of ex_cp_async_pipeline_kernel (the two placeholder lines
//      in the first, `int read_stage = 0;` and `copy_tile(tiles, 0);`, are there to change).
//   3. meson test -C build --suite exercises       # correct at every test shape? then its speed
//      ./build/07_pipelined/pipelined --kernel ex_cp_async_pipeline,cp_async2 --size 4096 --bench
//      ./build/07_pipelined/pipelined --kernel ex_cp_async_pipeline_s3,stages --size 4096 --bench
//   4. Compare with 07_pipelined/steps/1_cp_async2.cuh (the prefetch and the main loop of
//      cp_async2_kernel).
//
// Careful: a PASS says that the right tiles were read; it does not prove the synchronization.
// A wait that leaves too many groups in flight (N too large), or a barrier left out or put
// after the copy, is a race: a warp reads a stage still being written, or a copy overwrites a
// stage a slower warp still reads. It may pass on one run and fail on the next. (N too small
// is correct, only slower: it waits for tiles that are not needed yet.) Nothing here can hang
// as long as every thread reaches every barrier (keep them out of branches): wait_group waits
// only for this thread's own copies, which always complete.
//
// Hint (README, "The ring of stages"): with S stages, tiles 0 .. S - 2 are in flight before
// the loop starts, one commit group each. At tile t the kernel waits for group t, meets the
// other warps at a barrier, issues the copies of tile t + S - 1 into the stage of tile t - 1,
// and computes on stage t mod S. cp.async.wait_group N waits until at most N of this thread's
// committed groups are still in flight: count the groups committed when tile t's wait comes,
// and how many of them may stay in flight once group t has landed. A group is committed for
// every tile position, an empty or zero-filled one past the last tile, so that "group t" is
// always tile t (with K shorter than the pipeline, the count must still hold). One barrier a
// tile does both jobs: the copies of tile t have landed for every thread (the wait covers only
// this thread's own), and no warp still reads the stage about to be overwritten. The README's
// time diagram:
//
//   time ->          tile t-1        tile t          tile t+1
//   stage (t-1)%S    compute         <- copy t+S-1 ->
//   stage t%S        (landed)        compute         <- copy t+S ->
//   stage (t+1)%S    <- in flight -> (landed)        compute
//
// Done when: PASS at every shape (K shorter than the pipeline included) at S = 2 and S = 3, and
// about the speed of cp_async2 and of stages (their rows in the chapter README's Results table).
// `meson test` times each next to its step and prints the ratio; more than 1.5x slower FAILS, with
// a sentence on what the lesson is about (tests/exercise.py).
#pragma once

#include "shared/tensorcore/mma_ptx.cuh"
#include "shared/tensorcore/pad.cuh"
#include "shared/tensorcore/pipelined.cuh"
#include "07_pipelined/tile_copier.cuh"
#include "common/device.h"
#include "common/exercise.h"

// cp_async2's kernel for any Cfg: (128, 256) block tiles, BK 64, 8 warps of (64, 64), S stages
// of the swizzled A and Bᵀ tiles (48 KiB each), one block per SM. Built twice: S = 2 (Pipe2,
// as cp_async2) and S = 3 (Pipe3, as stages).
template <typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    ex_cp_async_pipeline_kernel(int M, int N, int K, const bf16* __restrict__ A,
                                const bf16* __restrict__ Bt, float* __restrict__ C) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  constexpr int S = Cfg::kStages, KS = BK / 16;  // stages; k16 steps per tile
  using ATile = typename Cfg::ATile;
  using BTile = typename Cfg::BTile;
  static_assert(S >= 2, "a ring: one stage computed while the others fill (stages_1 has one)");

  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tiles = ceil_div(K, BK);

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
  const ACopier a_cp(A, M, K, m0, 0);
  const BCopier b_cp(Bt, N, K, n0, 0);
  // K tile t into a stage. Where t is past the last tile the pieces are zero-filled copies that
  // read nothing: the group is still committed, and no branch is needed.
  auto copy_tile = [&](int t, int stage) {
    const bool ok = t < tiles && a_cp.k + t * BK < K;  // a_cp.k == b_cp.k: the same k
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
  // ---- your code (1 of 3): the prefetch (copy_tile, cp_async_commit); then the stage tile 0
  // is read from (read_stage) and the stage tile S - 1 will be copied into ----
  // Every tile position gets a group, empty or zero-filled where there is no tile, so that
  // group t is always tile t and cp_async_wait<S - 2> below always means "tile t has landed".
#pragma unroll
  for (int t = 0; t < S - 1; ++t) {
    copy_tile(t, t);
    cp_async_commit();
  }
  int read_stage = 0, write_stage = S - 1;
  auto next = [](int s) { return s + 1 == S ? 0 : s + 1; };
  // ---- end of your code ----

  // ---- PIPELINED MAIN LOOP: one barrier per tile ----
  for (int t = 0; t < tiles; ++t) {
    // ---- your code (2 of 3): wait until tile t has landed (cp_async_wait<N>), the barrier,
    // the copies of tile t + S - 1 into the stage of tile t - 1, and their commit ----
    cp_async_wait<S - 2>();  // this thread's copies of tile t have landed
    // Everyone's copies of tile t have landed, and every warp has finished tile t - 1, whose
    // stage (write_stage) is now free for tile t + S - 1.
    __syncthreads();
    copy_tile(t + S, write_stage);  // WRONG: S tiles ahead, one too far
    cp_async_commit();
    // ---- end of your code ----
#pragma unroll
    for (int s = 0; s < KS; ++s) {
      uint32_t a[MI][4], b[NI][2];
      load_frags(a, b, read_stage, s);
      mma_all(a, b);
    }
    // ---- your code (3 of 3): the stages of tile t + 1 ----
    read_stage = next(read_stage), write_stage = next(write_stage);
    // ---- end of your code ----
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

// cp_async2's launch: rows that are not 16-byte aligned are first copied into padded operands
// (rows of round_up(K, 8), zeros after K; pad.cu), counted in the time like any other part of
// the GEMM; one block of 256 threads per (128, 256) tile of C, S * 48 KiB of dynamic shared
// memory.
template <typename Cfg>
void launch_ex_cp_async_pipeline_cfg(int M, int N, int K, const bf16* A, const bf16* Bt,
                                     float* C) {
#ifdef EXERCISE_NOT_WRITTEN_CP_ASYNC_PIPELINE
  exercise_not_written("07_pipelined/exercises/cp_async_pipeline.cuh");
#endif
  auto kernel = ex_cp_async_pipeline_kernel<Cfg>;
  // Above 48 KiB of dynamic shared memory a kernel must opt in: once, at its first launch,
  // which is never a timed one (every kernel is verified first). A GPU with less shared memory
  // per block than Cfg needs reports the kernel as skipped (KernelNotSupported).
  static const bool opted_in = [&] {
    require_smem_per_block(Cfg::kSmemBytes);
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
    return true;
  }();
  (void)opted_in;
  pad_operands_if_unaligned(M, N, K, A, Bt);  // pad.cu
  const dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM));
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}

// The same lines at two depths of the ring: --kernel ex_cp_async_pipeline (S = 2, next to
// cp_async2) and ex_cp_async_pipeline_s3 (S = 3, next to stages).
void launch_ex_cp_async_pipeline(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_ex_cp_async_pipeline_cfg<Pipe2>(M, N, K, A, Bt, C);
}
void launch_ex_cp_async_pipeline_s3(int M, int N, int K, const bf16* A, const bf16* Bt,
                                    float* C) {
  launch_ex_cp_async_pipeline_cfg<Pipe3>(M, N, K, A, Bt, C);
}
