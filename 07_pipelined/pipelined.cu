// Chapter 07 — cp.async software pipelining: the tile copies run in the background while the
// tensor cores work.
//
// New since chapter 05 (whose best kernel, mma_tuned, is the starting point: the same swizzled
// tiles, ldmatrix fragments and mma.sync.m16n8k16; diff against mma_block_tile there):
//   cp_async2  the tiles go global -> shared by cp.async (LDGSTS), with no registers on the way;
//              two stages, as chapter 05's double buffering; zero-fill (src-size 0) at the edges
//   stages     S stages in a ring: the copies of S - 1 tiles are in flight during the math
//   frag_db    the next k16 step's fragments are loaded by ldmatrix while the mma run on this one
//   spread     the copies of the next tile are issued a share per k16 step, among the mma
//   raster     blocks walk the tiles in groups of 16 tile rows, for L2 reuse (grouped_tile)
//   epilogue   C leaves through shared memory in 16-byte stores
//   pipelined  the chapter's answer: a measured choice among a few tilings per shape class,
//              chapter 06's split-K beneath, and unaligned rows copied once into padded operands
// Every M, N, K >= 1: tiles at the matrix edges are zero-filled by cp.async (src-size 0); rows
// that are not 16-byte aligned (K % 8 != 0) are first copied into padded operands by every
// launcher (pad_operands_if_unaligned, pad.cu); --kernel unaligned_sync measures element loads instead (README).
//
// Build and run (from the repository root):
//   meson setup build && meson compile -C build
//   ./build/07_pipelined/pipelined                 # check, then bench at the default shapes
//   ./build/07_pipelined/pipelined --kernel frag_db --size 4096 --bench
//   ./build/07_pipelined/pipelined --kernel sweep --size 4096 --bench    # stages, tilings
//   meson test -C build --suite 07_pipelined
// Explanation and measurements: 07_pipelined/README.md
#include "07_pipelined/pipelined.cuh"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

#include "05_tensorcore/mma_ptx.cuh"
#include "06_splitk/splitk.cuh"
#include "07_pipelined/pad.cuh"
#include "common/matrix.h"

namespace {

// ---------------------------------------------------------------------------------------------
// cp.async (PTX ISA, "Data Movement and Conversion Instructions: cp.async")
// ---------------------------------------------------------------------------------------------
// 16 bytes global -> shared, bypassing L1 (.cg) and the registers. The copy reads src_bytes
// (16 or 0) and zero-fills the rest: 0 gives a tile of zeros beyond the matrix edge.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
// A 16-byte shared store to a 32-bit shared address (the synchronous path's stores).
__device__ __forceinline__ void st_shared_16(uint32_t dst, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}
// Closes the group of this thread's copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// One 16-byte piece by element loads, 0 outside the matrix: for rows that are not 16-byte
// aligned, where cp.async cannot copy 16 bytes (and at odd K not even 4).
__device__ __forceinline__ uint4 load_piece_elems(const bf16* X, int rows, int ld, int x, int k,
                                                  int k_end) {
  const unsigned short* q = reinterpret_cast<const unsigned short*>(X + int64_t(x) * ld + k);
  uint32_t w[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const uint32_t lo = (x < rows && k + 2 * e < k_end) ? q[2 * e] : 0;
    const uint32_t hi = (x < rows && k + 2 * e + 1 < k_end) ? q[2 * e + 1] : 0;
    w[e] = lo | hi << 16;
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// ---------------------------------------------------------------------------------------------
// Copying one (ROWS, BK) tile of a K-major operand into a shared stage
// ---------------------------------------------------------------------------------------------
// Thread tid copies the pieces copy_piece<BK>(tid, p, kThreads), p = 0 .. kPieces - 1: rows
// row0 + p * kRowsPerPass at one k. Their shared offsets are one swizzled offset plus whole
// swizzle periods (kRowsPerPass rows = kThreads chunks, a multiple of 64: host-tested), so the
// per-piece state is one bit (row inside the matrix) and the copies need no branch.
template <int ROWS, int BK, int kThreads, bool kSync>
struct TileCopier {
  using Tile = SmemTile<ROWS, BK, TileLayout::kSwizzled>;
  static constexpr int kPieces = ROWS * BK / 8 / kThreads;
  static constexpr int kRowsPerPass = kThreads / (BK / 8);
  static_assert(kThreads % 64 == 0, "piece p + 1 is whole swizzle periods after piece p");
  const bf16* X;
  const bf16* src;  // this thread's piece 0 at the K range's first k
  int64_t pass;     // kRowsPerPass rows, in elements
  int rows, ld, x, k, dst0;  // x, k: the matrix row and column of piece 0 (for kSync)
  unsigned row_ok = 0;       // bit p: the row of piece p is inside the matrix

  __device__ __forceinline__ TileCopier(const bf16* X_, int rows_, int ld_, int x0, int k_begin)
      : X(X_), rows(rows_), ld(ld_) {
    const CopyPiece c = copy_piece<BK>(threadIdx.x, 0, kThreads);
    x = x0 + c.row, k = k_begin + c.k;
    dst0 = Tile::offset(c.row, c.k);
    pass = int64_t(kRowsPerPass) * ld;
#pragma unroll
    for (int p = 0; p < kPieces; ++p) row_ok |= (x + p * kRowsPerPass < rows ? 1u : 0u) << p;
    src = X + int64_t(x) * ld + k;
  }
  // Pieces [P0, P1) of the K tile at k0 (from the K range's start) into `tile`. k_ok: the tile
  // exists and this thread's k is below the range's end (rows 16-byte aligned: K and the range
  // end are multiples of 8, so a piece is all in or all out). cp.async zero-fills a piece that
  // is not ok (src-size 0), reading nothing; it still gets a valid address, the matrix's.
  // p0, p1 are compile-time constants wherever the kernel calls this (unrolled loops), so the
  // pieces outside them fold away.
  __device__ __forceinline__ void copy(uint32_t tile, int k0, bool k_ok, int k_end, int p0 = 0,
                                       int p1 = kPieces) const {
    const uint32_t dst = tile + 2 * dst0;  // shared byte address of piece 0
    if constexpr (!kSync) {
      const bf16* q = src + k0 + p0 * pass;  // walked down the rows: one 64-bit add a piece
#pragma unroll
      for (int p = 0; p < kPieces; ++p) {
        if (p < p0 || p >= p1) continue;
        const bool ok = k_ok && (row_ok >> p & 1u);
        cp_async_16(dst + p * kRowsPerPass * BK * 2, ok ? q : X, ok ? 16 : 0);
        q += pass;
      }
    } else {  // synchronous: element loads, zero outside the matrix, one 16-byte shared store
      (void)k_ok;
#pragma unroll 1
      for (int p = p0; p < p1; ++p)
        st_shared_16(dst + p * kRowsPerPass * BK * 2,
                     load_piece_elems(X, rows, ld, x + p * kRowsPerPass, k + k0, k_end));
    }
  }
};

// The kernel's argument: C (M x N) = A (M x K) * Bᵀ (N x K)ᵀ, all rows packed (ld = K, K, N).
// Split-K (chapter 06): gridDim.z = S slices, slice z sums splitk_slice(K, BK, S, z) and writes
// its partial tile to C + z * slice_stride, or adds it into C (atomic).
struct PipeArgs {
  int M, N, K;
  const bf16* A;
  const bf16* Bt;
  float* C;
  int64_t slice_stride;
  int group;  // block order: grouped_tile's G (1: row by row)
  bool atomic;
};

// ---------------------------------------------------------------------------------------------
// The kernel: one (BM, BN) tile of C per block
// ---------------------------------------------------------------------------------------------
template <typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) pipelined_kernel(PipeArgs args) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  constexpr int S = Cfg::kStages, KS = BK / 16;  // stages; k16 steps per tile
  using ATile = typename Cfg::ATile;
  using BTile = typename Cfg::BTile;
  static_assert(!Cfg::kFragDB || S >= 2, "fragment double buffering runs on the stage ring");

  const int tiles_m = ceil_div(args.M, BM), tiles_n = ceil_div(args.N, BN);
  const TileCoord tile = grouped_tile(blockIdx.x, tiles_m, tiles_n, args.group);
  const int m0 = tile.m * BM, n0 = tile.n * BN;
  const KRange kr = splitk_slice(args.K, BK, gridDim.z, blockIdx.z);
  float* __restrict__ C = args.C + blockIdx.z * args.slice_stride;
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
  // The launchers guarantee 16-byte aligned rows unless the kernel loads synchronously.
  using ACopier = TileCopier<BM, BK, Cfg::kThreads, Cfg::kSync>;
  using BCopier = TileCopier<BN, BK, Cfg::kThreads, Cfg::kSync>;
  const ACopier a_cp(args.A, args.M, args.K, m0, kr.begin);
  const BCopier b_cp(args.Bt, args.N, args.K, n0, kr.begin);
  // K tile t of the range into a stage: all of it, or (kSpread) part `part` of `parts`, a
  // share of each operand's pieces. Where t is past the last tile the pieces are zero-filled
  // copies that read nothing: the group is still committed, and no branch is needed.
  auto copy_tile = [&](int t, int stage, int part = 0, int parts = 1) {
    const bool ok = t < tiles && a_cp.k + t * BK < kr.end;  // a_cp.k == b_cp.k: the same k
    constexpr int PA = ACopier::kPieces, PB = BCopier::kPieces;
    a_cp.copy(a_stage(stage), t * BK, ok, kr.end, part * PA / parts, (part + 1) * PA / parts);
    b_cp.copy(b_stage(stage), t * BK, ok, kr.end, part * PB / parts, (part + 1) * PB / parts);
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

  float acc[MI][NI][4] = {};
  auto mma_all = [&](const uint32_t(&a)[MI][4], const uint32_t(&b)[NI][2]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], a[i], b[j]);
  };

  if constexpr (S == 1) {
    // ---- One stage: copy, wait, compute; nothing overlaps (the sweep's baseline) ----
    for (int t = 0; t < tiles; ++t) {
      copy_tile(t, 0);
      cp_async_commit();
      cp_async_wait<0>();
      __syncthreads();  // every thread's copies have landed
#pragma unroll
      for (int s = 0; s < KS; ++s) {
        uint32_t a[MI][4], b[NI][2];
        load_frags(a, b, 0, s);
        mma_all(a, b);
      }
      __syncthreads();  // every warp is done reading before the next copy overwrites the stage
    }
  } else {
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

    if constexpr (!Cfg::kFragDB) {
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
    } else {
      // ---- PIPELINED MAIN LOOP with fragment double buffering ----
      // Registers hold two k16 steps of fragments: the mma of step s read set s % 2 while the
      // ldmatrix of step s + 1 fill the other. Step 0 of tile t + 1 is loaded during the last
      // step of tile t, so the wait and the barrier for tile t + 1 move there.
      // The copies of tile t + S - 1 go into the stage of tile t - 1, which no warp reads any
      // more (the barrier during tile t - 1's last step): all at step 0, or (kSpread) a share
      // at each of steps 0 .. KS - 2, committed at step KS - 2, before the next wait.
      uint32_t fa[2][MI][4], fb[2][NI][2];
      cp_async_wait<S - 2>();
      __syncthreads();  // tile 0 has landed for everyone
      load_frags(fa[0], fb[0], read_stage, 0);
      for (int t = 0; t < tiles; ++t) {
        const bool more = t + 1 < tiles;
#pragma unroll
        for (int s = 0; s < KS; ++s) {
          if (s == KS - 1 && more) {
            cp_async_wait<S - 2>();  // this thread's copies of tile t + 1 have landed
            // Everyone's have, and every warp has loaded its last fragments of tile t - 1's
            // stage (step KS - 1 was loaded during step KS - 2, before this barrier).
            __syncthreads();
            read_stage = next(read_stage);
          }
          if (s + 1 < KS)
            load_frags(fa[(s + 1) % 2], fb[(s + 1) % 2], read_stage, s + 1);
          else if (more)
            load_frags(fa[(s + 1) % 2], fb[(s + 1) % 2], read_stage, 0);
          if (Cfg::kSpread && s < KS - 1)
            copy_tile(t + S - 1, write_stage, s, KS - 1);
          else if (!Cfg::kSpread && s == 0)
            copy_tile(t + S - 1, write_stage);
          if (s == (Cfg::kSpread ? KS - 2 : 0)) {
            cp_async_commit();
            write_stage = next(write_stage);
          }
          mma_all(fa[s % 2], fb[s % 2]);
        }
      }
    }
  }

  // ---- EPILOGUE ----
  if (Cfg::kVecEpi && !args.atomic) {
    // Through shared memory: each warp writes one 16-row band of its tile with the fragments'
    // 8-byte stores, then reads it back row-wise, 16 bytes a lane, and stores whole rows.
    cp_async_wait<0>();  // only empty groups can be left; the stages are about to be reused
    __syncthreads();     // every warp is done with the stages
    float* band = reinterpret_cast<float*>(smem_raw) + warp * 16 * Cfg::kEpiRow;  // (16, WN + 8)
    const bool c_vec = args.N % 4 == 0 && aligned(C, 16);
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          *reinterpret_cast<float2*>(&band[Mma16816::c_row(lane, 2 * h) * Cfg::kEpiRow + 8 * j +
                                           Mma16816::c_col(lane, 0)]) =
              make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
      __syncwarp();  // the band is written before lanes read other lanes' values
      constexpr int kVecPerRow = Cfg::WN / 4;
#pragma unroll
      for (int q = lane; q < 16 * kVecPerRow; q += 32) {
        const int r = q / kVecPerRow, c = 4 * (q % kVecPerRow);
        const int m = m0 + wm + 16 * i + r, n = n0 + wn + c;
        if (m >= args.M) continue;
        const float4 v = *reinterpret_cast<const float4*>(&band[r * Cfg::kEpiRow + c]);
        float* dst = C + int64_t(m) * args.N + n;
        if (c_vec && n + 3 < args.N) {
          *reinterpret_cast<float4*>(dst) = v;
        } else {
          const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int u = 0; u < 4; ++u)
            if (n + u < args.N) dst[u] = e[u];
        }
      }
      __syncwarp();  // everyone has read the band before the next one overwrites it
    }
  } else {
    // Straight from the registers (chapter 05): c0, c1 (and c2, c3 eight rows down) are
    // adjacent columns, one 8-byte store where the row allows it; atomicAdd for split-K's
    // atomic variant.
    const bool c_vec = !args.atomic && args.N % 2 == 0 && aligned(C, 8);
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int m = m0 + wm + 16 * i + Mma16816::c_row(lane, 2 * h);
          const int n = n0 + wn + 8 * j + Mma16816::c_col(lane, 0);
          if (m >= args.M) continue;
          float* c = C + int64_t(m) * args.N + n;
          if (c_vec && n + 1 < args.N) {
            *reinterpret_cast<float2*>(c) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
          } else if (args.atomic) {
            if (n < args.N) atomicAdd(c, acc[i][j][2 * h]);
            if (n + 1 < args.N) atomicAdd(c + 1, acc[i][j][2 * h + 1]);
          } else {
            if (n < args.N) c[0] = acc[i][j][2 * h];
            if (n + 1 < args.N) c[1] = acc[i][j][2 * h + 1];
          }
        }
  }
}

// ---------------------------------------------------------------------------------------------
// Launching one configuration
// ---------------------------------------------------------------------------------------------
// The kernel of a configuration, opted in to its dynamic shared memory (above 48 KiB a kernel
// must opt in): once per kernel, at its first use, which is never a timed launch (every kernel
// is verified first).
template <typename Cfg>
auto opted_in_kernel() {
  static const auto kernel = [] {
    auto k = pipelined_kernel<Cfg>;
    CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    Cfg::kSmemBytes));
    return k;
  }();
  return kernel;
}

// Every launch of a cp.async kernel goes through here: rows that are not 16-byte aligned are
// first copied into padded operands (rows of round_up(K, 8), zeros after K), counted in the
// time like any other part of the GEMM.
template <typename Cfg>
void launch_cfg(int M, int N, int K, const bf16* A, const bf16* Bt, float* out, int splits,
                size_t slice_stride, bool atomic, int group) {
  if (!Cfg::kSync) pad_operands_if_unaligned(M, N, K, A, Bt);  // pad.cu
  auto kernel = opted_in_kernel<Cfg>();
  // A 1-D grid of tiles (grouped_tile maps it): C itself would outgrow the GPU's memory long
  // before the tile count reached gridDim.x's limit of 2^31 - 1.
  const dim3 grid(unsigned(ceil_div(M, Cfg::BM)) * unsigned(ceil_div(N, Cfg::BN)), 1,
                  unsigned(splits));
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes>>>(
      PipeArgs{M, N, K, A, Bt, out, int64_t(slice_stride), group, atomic});
  CUDA_CHECK_LAUNCH();
}

template <typename Cfg, int G>
void launch_plain(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_cfg<Cfg>(M, N, K, A, Bt, C, 1, 0, false, G);
}

template <typename Cfg>
int blocks_per_sm() {
  static const int n = [] {
    auto kernel = opted_in_kernel<Cfg>();
    int b = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, Cfg::kThreads,
                                                             Cfg::kSmemBytes));
    return b;
  }();
  return n;
}

constexpr int kGroup = 16;  // the grouped block order's G (raster and later); README, block order

// A configuration as chapter 06's split-K base, in the grouped block order.
template <typename Cfg>
void launch_base(int M, int N, int K, const bf16* A, const bf16* Bt, float* out, int splits,
                 size_t slice_stride, bool atomic) {
  launch_cfg<Cfg>(M, N, K, A, Bt, out, splits, slice_stride, atomic, kGroup);
}
template <typename Cfg>
SplitKBase<bf16> make_base() {
  return SplitKBase<bf16>{TileShape{Cfg::BM, Cfg::BN, Cfg::BK, 0}, launch_base<Cfg>,
                          blocks_per_sm<Cfg>};
}

// ---------------------------------------------------------------------------------------------
// The configurations
// ---------------------------------------------------------------------------------------------
// PipeConfig<BM, BN, BK, WM, WN, Stages, Features, MinBlocks>. The ladder keeps chapter 05's
// best tiling (MmaBest: 128 x 256, BK 64, 8 warps of 64 x 64, one block per SM).
constexpr unsigned kDB = kFragDoubleBuffer, kDBS = kFragDoubleBuffer | kSpreadCopies;
using Cp2 = PipeConfig<128, 256, 64, 64, 64, 2>;             // cp_async2
using Stages3 = PipeConfig<128, 256, 64, 64, 64, 3>;         // stages
using FragDb = PipeConfig<128, 256, 64, 64, 64, 3, kDB>;     // frag_db
using Spread = PipeConfig<128, 256, 64, 64, 64, 3, kDBS>;    // spread, raster
using Epi = PipeConfig<128, 256, 64, 64, 64, 3, kDBS | kVecEpilogue>;  // epilogue
// The stage sweep's other depths (4 stages of BK 64: 192 KiB; 5 would need 240 KiB, more than
// the 227 KiB a block can have).
using Stages1 = PipeConfig<128, 256, 64, 64, 64, 1>;
using Stages4 = PipeConfig<128, 256, 64, 64, 64, 4>;
// The autotuner's other candidates: the transposed tile, a BK 32 ring of 4, a 128 x 128 tile
// of 4 warps at two blocks per SM, and 16 warps of 64 x 32 (no fragment double buffering:
// 128 registers a thread).
constexpr unsigned kAll = kDBS | kVecEpilogue;
using Tall = PipeConfig<256, 128, 64, 64, 64, 3, kAll>;
using Bk32 = PipeConfig<128, 256, 32, 64, 64, 4, kAll>;
using Small = PipeConfig<128, 128, 64, 64, 64, 3, kAll, 2>;
using Warps16 = PipeConfig<128, 256, 64, 64, 32, 3>;
// Rows not 16-byte aligned, without the padding copy: synchronous element loads.
using SyncLoads = PipeConfig<128, 256, 64, 64, 64, 3, kDBS | kSyncLoads>;

// ---------------------------------------------------------------------------------------------
// The autotuner
// ---------------------------------------------------------------------------------------------
struct Candidate {
  const char* name;
  SplitKBase<bf16> base;
};
const std::vector<Candidate>& candidates() {
  static const std::vector<Candidate> c = {
      {"128x256x64_s3", make_base<Epi>()},
      {"256x128x64_s3", make_base<Tall>()},
      {"128x256x32_s4", make_base<Bk32>()},
      {"128x128x64_s3", make_base<Small>()},
      {"128x256x64_s3_16w", make_base<Warps16>()},
  };
  return c;
}

// One candidate on one shape: its own split-K plan (S = 1 where the tiles fill the GPU).
void run_candidate(const Candidate& c, int M, int N, int K, const bf16* A, const bf16* Bt,
                   float* C) {
  splitk_gemm(&c.base, 1, SplitMode::kWorkspace, 0, M, N, K, A, Bt, C);
}

// A shape class: the powers of two just above M, N and K, and whether rows are 16-byte aligned.
// Shapes in one class share a choice.
int log2_ceil(int x) {
  int b = 0;
  while ((int64_t(1) << b) < x) ++b;
  return b;
}

// The tuner's choice for this shape's class: on the first call of the class each candidate
// runs once to warm up and then kTuneReps times between events (the median counts); the
// fastest is kept for the rest of the process. The candidates write C; the caller runs the
// chosen one after.
const Candidate& tuned(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  static std::map<std::tuple<int, int, int, bool>, int> choice;
  const auto key =
      std::make_tuple(log2_ceil(M), log2_ceil(N), log2_ceil(K), rows_aligned(K, A, Bt));
  const auto it = choice.find(key);
  if (it != choice.end()) return candidates()[it->second];

  constexpr int kTuneReps = 5;
  const auto& cs = candidates();
  cudaEvent_t ev[2];
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  int best = 0;
  float best_ms = 0;
  std::vector<float> all(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    run_candidate(cs[i], M, N, K, A, Bt, C);  // warm-up (and opt-in, and workspace)
    std::vector<float> ms(kTuneReps);
    for (auto& m : ms) {
      CUDA_CHECK(cudaEventRecord(ev[0]));
      run_candidate(cs[i], M, N, K, A, Bt, C);
      CUDA_CHECK(cudaEventRecord(ev[1]));
      CUDA_CHECK(cudaEventSynchronize(ev[1]));
      CUDA_CHECK(cudaEventElapsedTime(&m, ev[0], ev[1]));
    }
    std::sort(ms.begin(), ms.end());
    all[i] = ms[kTuneReps / 2];
    if (i == 0 || all[i] < best_ms) best = int(i), best_ms = all[i];
  }
  for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
  choice[key] = best;
  std::fprintf(stderr, "pipelined: shape class of %dx%dx%d (M, N, K up to 2^%d, 2^%d, 2^%d):",
               M, N, K, std::get<0>(key), std::get<1>(key), std::get<2>(key));
  for (size_t i = 0; i < cs.size(); ++i)
    std::fprintf(stderr, " %s %.4f ms%s", cs[i].name, all[i], int(i) == best ? " (chosen)" : "");
  std::fprintf(stderr, "\n");
  return cs[best];
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The chapter's kernels
// ---------------------------------------------------------------------------------------------
void launch_cp_async2(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_plain<Cp2, 1>(M, N, K, A, Bt, C);
}
void launch_stages(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_plain<Stages3, 1>(M, N, K, A, Bt, C);
}
void launch_frag_db(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_plain<FragDb, 1>(M, N, K, A, Bt, C);
}
void launch_spread(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_plain<Spread, 1>(M, N, K, A, Bt, C);
}
void launch_raster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_plain<Spread, kGroup>(M, N, K, A, Bt, C);
}
void launch_epilogue(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_plain<Epi, kGroup>(M, N, K, A, Bt, C);
}

void launch_pipelined(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  run_candidate(tuned(M, N, K, A, Bt, C), M, N, K, A, Bt, C);
}

// ---------------------------------------------------------------------------------------------
// The sweep (--kernel sweep)
// ---------------------------------------------------------------------------------------------
template <int I>
void launch_candidate(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  run_candidate(candidates()[I], M, N, K, A, Bt, C);
}
// Split-K's atomic variant beneath the first candidate (C zeroed, slices added by atomicAdd).
void launch_atomic(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  splitk_gemm(&candidates()[0].base, 1, SplitMode::kAtomic, 0, M, N, K, A, Bt, C);
}

const PipeSweepEntry kPipeSweep[] = {
    {"stages_1", launch_plain<Stages1, 1>},
    {"stages_2", launch_plain<Cp2, 1>},
    {"stages_3", launch_plain<Stages3, 1>},
    {"stages_4", launch_plain<Stages4, 1>},
    {"tune_128x256x64_s3", launch_candidate<0>},
    {"tune_256x128x64_s3", launch_candidate<1>},
    {"tune_128x256x32_s4", launch_candidate<2>},
    {"tune_128x128x64_s3", launch_candidate<3>},
    {"tune_128x256x64_s3_16w", launch_candidate<4>},
    {"unaligned_sync", launch_plain<SyncLoads, kGroup>},
    {"splitk_atomic", launch_atomic},
    {"epilogue_g8", launch_plain<Epi, 8>},  // groups of 8 tile rows (README, block order)
};
const int kPipeSweepSize = sizeof(kPipeSweep) / sizeof(kPipeSweep[0]);
