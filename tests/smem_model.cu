// The bank-conflict model (common/access_model.h) applied to whole launches: for every taught
// shared-memory layout, at the shape Nsight Compute profiled it
// (docs/results/<gpu>/counters.csv), the launch's warp-level shared-load instructions (LDS, LDS.64, LDS.128 and LDSM, as Nsight
// Compute's op_ld counts them) and shared-store instructions (STS*), and their wavefronts.
// Host code only: it enumerates the lane addresses of every warp of one block with the kernels'
// own index, layout, swizzle and fragment functions (the chapter headers), for the instruction
// mix nvcc emitted (read from the SASS: cuobjdump -sass BUILD/NN_x/program), and multiplies by
// the trip counts and the blocks. Where a kernel computes an index inline, the model repeats it
// and names the kernel and its step file.
//
//   ./build/tests/smem_model                       # the CSV: docs/results/smem_model.csv
//   ./build/tests/smem_model --check docs/results/smem_model.csv
//                                    # the pinned per-instruction numbers, then the file: exit 1
//                                    # on a difference (meson test: 'host smem model')
//   ./build/tests/smem_model --pins  # the pinned numbers only
//   ./build/tests/smem_model --compare docs/results/h200/counters.csv
//                                    # the model beside Nsight Compute's recorded counters
//   --perturb KERNEL (with --check or --pins): one load wavefront more for KERNEL, so that the
//   check must fail (the tests' deliberately wrong cases).
//
// The SASS mix was read from nvcc 13.0's sm_90 code (sm_90a for chapter 08). Assumed, and seen
// in the recorded counters: mbarrier operations (SYNCS.*), TMA writes and wgmma reads of shared
// memory are not LSU shared loads or stores (chapter 08's tma and warp_spec rows count none).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "02_transpose_copy/transpose.cuh"
#include "03_tiled/tiled.cuh"
#include "04_coalesced/coalesced.cuh"
#include "shared/simt/simt.cuh"
#include "shared/tensorcore/tensorcore.cuh"
#include "shared/hopper/hopper.cuh"
#include "common/access_model.h"

namespace {

// ---------------------------------------------------------------------------------------------
// Counting: one warp instruction at a time, `times` executions of it in the launch.
struct Tally {
  int64_t instructions = 0, wavefronts = 0, phases = 0;
  void add(int64_t times, int wf, int ph) {
    instructions += times;
    wavefronts += times * wf;
    phases += times * ph;
  }
};

[[noreturn]] void model_error(const std::string& what) {
  std::fprintf(stderr, "smem_model: %s\n", what.c_str());
  std::exit(1);
}

const char* op_name(SmemOp op) { return op == SmemOp::kLoad ? "ld" : "st"; }

// One kernel at one shape: its loads and stores, per label ("A LDS.128") in order of first use.
class KernelModel {
 public:
  KernelModel(std::string chapter, std::string kernel, std::string shape, int64_t warp_units,
              std::string unit)
      : chapter_(std::move(chapter)),
        kernel_(std::move(kernel)),
        shape_(std::move(shape)),
        warp_units_(warp_units),
        unit_(std::move(unit)) {}

  // `times` executions of a warp instruction moving `bytes` (4, 8, 16) per lane; addr(lane) is
  // lane's byte address in shared memory (all 32 lanes active: the shapes are tile multiples).
  template <class Addr>
  void access(SmemOp op, int bytes, const std::string& operand, int64_t times, Addr addr) {
    uint32_t a[32];
    for (int lane = 0; lane < 32; ++lane) a[lane] = static_cast<uint32_t>(addr(lane));
    const char* base = op == SmemOp::kLoad ? "LDS" : "STS";
    const char* width = bytes == 4 ? "" : bytes == 8 ? ".64" : ".128";
    if (bytes != 4 && bytes != 8 && bytes != 16) model_error("access width must be 4, 8 or 16");
    for (int lane = 0; lane < 32; ++lane)
      if (a[lane] % bytes != 0) model_error(kernel_ + ": a misaligned shared access");
    tally(op, operand + " " + base + width)
        .add(times, shared_wavefronts(a, 32, bytes, op), shared_phases(a, 32, bytes, op));
  }

  // `times` executions of ldmatrix.x4 (LDSM.16.M88.4): lane l gives the byte address of row
  // l % 8 of matrix l / 8. One phase per matrix (access_model.h).
  template <class Addr>
  void ldmatrix_x4(const std::string& operand, int64_t times, Addr row_addr) {
    uint32_t a[32];
    for (int lane = 0; lane < 32; ++lane) {
      a[lane] = static_cast<uint32_t>(row_addr(lane));
      if (a[lane] % 16 != 0) model_error(kernel_ + ": a misaligned ldmatrix row");
    }
    tally(SmemOp::kLoad, operand + " LDSM.x4").add(times, ldmatrix_wavefronts(a, 4), 4);
  }

  Tally total(SmemOp op) const {
    Tally t;
    for (const auto& l : labels_)
      if (l.op == op) {
        t.instructions += l.tally.instructions;
        t.wavefronts += l.tally.wavefronts;
        t.phases += l.tally.phases;
      }
    return t;
  }
  const Tally* label(SmemOp op, const std::string& name) const {
    for (const auto& l : labels_)
      if (l.op == op && l.name == name) return &l.tally;
    return nullptr;
  }

  // "per warp and 32-k slab: A LDS.128 8 x 2 + Bᵀ LDS.128 8 x 32": each label's instructions
  // per warp and unit, and its wavefronts per instruction. No commas (a CSV field).
  std::string note(SmemOp op) const {
    std::string s;
    for (const auto& l : labels_) {
      if (l.op != op) continue;
      if (l.tally.instructions % warp_units_ != 0)
        model_error(kernel_ + ": " + l.name + " is not the same count for every warp and unit");
      s += (s.empty() ? "per warp and " + unit_ + ": " : " + ") + l.name + " " +
           std::to_string(l.tally.instructions / warp_units_) + " x " +
           ratio(l.tally.wavefronts, l.tally.instructions);
    }
    return s.empty() ? "no shared " + std::string(op == SmemOp::kLoad ? "loads" : "stores") : s;
  }

  const std::string& chapter() const { return chapter_; }
  const std::string& kernel() const { return kernel_; }
  const std::string& shape() const { return shape_; }

  // wavefronts / instructions: an integer where it divides, else 3 decimals.
  static std::string ratio(int64_t num, int64_t den) {
    if (den == 0) return "0";
    if (num % den == 0) return std::to_string(num / den);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", double(num) / double(den));
    return buf;
  }

 private:
  struct Label {
    SmemOp op;
    std::string name;
    Tally tally;
  };
  Tally& tally(SmemOp op, const std::string& name) {
    for (auto& l : labels_)
      if (l.op == op && l.name == name) return l.tally;
    labels_.push_back({op, name, {}});
    return labels_.back().tally;
  }
  std::string chapter_, kernel_, shape_;
  int64_t warp_units_;  // (warp, unit) pairs of the launch, for the note's per-unit counts
  std::string unit_;
  std::vector<Label> labels_;
};

void require(bool ok, const std::string& what) {
  if (!ok) model_error(what);
}

std::string shape2(int rows, int cols) { return std::to_string(rows) + "x" + std::to_string(cols); }
std::string shape3(int M, int N, int K) {
  return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
}

// ---------------------------------------------------------------------------------------------
// Chapter 02: transpose_tiled_kernel<Layout> (steps/4_transpose_tiled.cuh). Block 32 x 8, one
// tile; each warp (ty) 4 STS of a tile row and 4 LDS of a tile column, at transpose_step's
// smem_store / smem_load. SASS: 4 STS, 4 LDS, no loop (kRowsPerThread unrolled).
template <class Layout>
KernelModel model_transpose(const char* name, int rows, int cols) {
  require(rows % kTile == 0 && cols % kTile == 0, "transposes: tile multiples only");
  const int64_t blocks = int64_t(rows / kTile) * (cols / kTile);
  KernelModel m("02_transpose_copy", name, shape2(rows, cols), blocks * kBlockRows, "tile");
  for (int ty = 0; ty < kBlockRows; ++ty)
    for (int i = 0; i < kRowsPerThread; ++i) {
      auto step = [&](int lane) {  // block (0, 0): every block indexes its tile alike
        const TransposeStep s = transpose_step<Layout>(rows, cols, 0, 0, lane, ty, i);
        require(s.in_index >= 0 && s.out_index >= 0, "transposes: a lane outside the matrix");
        return s;
      };
      m.access(SmemOp::kStore, 4, "tile row", blocks,
               [&](int lane) { return 4 * step(lane).smem_store; });
      m.access(SmemOp::kLoad, 4, "tile column", blocks,
               [&](int lane) { return 4 * step(lane).smem_load; });
    }
  return m;
}

// transpose_tall_kernel (steps/5_transpose_tall.cuh): (128, 33) tile, 16 STS at
// SmemPadded::offset(tall_in_cell) and 16 LDS at SmemPadded::offset of tall_out_cell's
// (column, row). SASS: 16 STS, 16 LDS, no loop.
KernelModel model_transpose_tall(int rows, int cols) {
  require(rows % kTallRows == 0 && cols % kTile == 0, "transpose_tall: tile multiples only");
  const int64_t blocks = int64_t(rows / kTallRows) * (cols / kTile);
  KernelModel m("02_transpose_copy", "transpose_tall", shape2(rows, cols), blocks * kBlockRows,
                "tile");
  for (int ty = 0; ty < kBlockRows; ++ty)
    for (int i = 0; i < kTallSteps; ++i) {
      m.access(SmemOp::kStore, 4, "tile row", blocks, [&](int lane) {
        const Cell t = tall_in_cell(lane, ty, i);
        return 4 * SmemPadded::offset(t.row, t.col);
      });
      m.access(SmemOp::kLoad, 4, "tile column", blocks, [&](int lane) {
        const Cell t = tall_out_cell(lane, ty, i);
        return 4 * SmemPadded::offset(t.col, t.row);
      });
    }
  return m;
}

// ---------------------------------------------------------------------------------------------
// Chapter 04, step 1: tiled_bt_kernel<L> (steps/1_tiled_bt.cuh). Block 32 x 32 (warp = ty), one
// 32-k slab per iteration. Per slab each thread stores As[ty][tx] and Bts[BtTile<L>::offset(ty,
// tx)] (2 STS). The k loop, unrolled 16 at a time, reads per 4 k (SASS): A's row As[ty][k..k+3]
// as one LDS.128 that all lanes share; the trap's Bᵀ words offset(tx, k..k+3), consecutive, as
// one LDS.128; the padded and swizzled tiles' as 4 LDS (rows of 33 words are not 16-byte
// aligned; k ^ tx is not consecutive).
template <BtLayout L>
KernelModel model_tiled_bt(const char* name, int M, int N, int K) {
  constexpr int T = kBtTile;
  require(M % T == 0 && N % T == 0 && K % T == 0, "tiled_bt: tile multiples only");
  const int64_t blocks = int64_t(M / T) * (N / T), slabs = K / T, times = blocks * slabs;
  KernelModel m("04_coalesced", name, shape3(M, N, K), blocks * T * slabs, "32-k slab");
  // The tiles are two __shared__ arrays; where the compiler puts Bts does not change a bank
  // count (one offset for all lanes), so Bts is taken to follow As.
  const int bts = 4 * T * T;
  for (int ty = 0; ty < T; ++ty) {
    // tiled_bt_kernel stores As[ty][tx] (inline: word ty * T + tx) and Bts[offset(ty, tx)].
    m.access(SmemOp::kStore, 4, "A", times, [&](int tx) { return 4 * (ty * T + tx); });
    m.access(SmemOp::kStore, 4, "Bᵀ", times,
             [&](int tx) { return bts + 4 * BtTile<L>::offset(ty, tx); });
    for (int k = 0; k < T; k += 4) {
      // As[ty][k] (inline: word ty * T + k), the same for every lane.
      m.access(SmemOp::kLoad, 16, "A", times, [&](int) { return 4 * (ty * T + k); });
      if (L == BtLayout::kPlain) {
        m.access(SmemOp::kLoad, 16, "Bᵀ", times,
                 [&](int tx) { return bts + 4 * BtTile<L>::offset(tx, k); });
      } else {
        for (int kk = k; kk < k + 4; ++kk)
          m.access(SmemOp::kLoad, 4, "Bᵀ", times,
                   [&](int tx) { return bts + 4 * BtTile<L>::offset(tx, kk); });
      }
    }
  }
  return m;
}

// Chapter 03's tiled_2d_kernel<128, 128, 16, 8, 8> (03_tiled/steps/3_tiled_2d.cuh), in chapter
// 04's program as the ladder's start. 256 threads, one 16-k slab per iteration. Stores: thread
// tid writes elements e = tid + 256 s (8 of A, 8 of B): As[e / BK][e % BK] and Bs[e / BN][e % BN]
// (inline), i.e. word e of each tile (SASS: the loops unrolled by 4, one STS each). Loads: A's
// a_word(tid, i, k .. k + 3) merge into one LDS.128 per i and 4 k (32 per slab); B's b_word are
// 16 words apart in j: 128 LDS per slab.
KernelModel model_tiled_2d(int M, int N, int K) {
  constexpr int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8;
  using Tile = Tile2d<BM, BN, TM, TN>;
  require(M % BM == 0 && N % BN == 0 && K % BK == 0, "tiled_2d: tile multiples only");
  const int64_t blocks = int64_t(M / BM) * (N / BN), slabs = K / BK, times = blocks * slabs;
  const int warps = Tile::kThreads / 32;
  KernelModel m("04_coalesced", "tiled_2d", shape3(M, N, K), blocks * warps * slabs, "16-k slab");
  const int bs = 4 * BM * BK;  // Bs after As (see model_tiled_bt)
  for (int w = 0; w < warps; ++w) {
    for (int e0 = 0; e0 < BM * BK; e0 += Tile::kThreads)
      m.access(SmemOp::kStore, 4, "A", times, [&](int lane) {
        const int e = e0 + 32 * w + lane;
        return 4 * ((e / BK) * BK + e % BK);
      });
    for (int e0 = 0; e0 < BK * BN; e0 += Tile::kThreads)
      m.access(SmemOp::kStore, 4, "B", times, [&](int lane) {
        const int e = e0 + 32 * w + lane;
        return bs + 4 * ((e / BN) * BN + e % BN);
      });
    for (int i = 0; i < TM; ++i)
      for (int k = 0; k < BK; k += 4)
        m.access(SmemOp::kLoad, 16, "A", times,
                 [&](int lane) { return 4 * Tile::a_word<BK>(32 * w + lane, i, k); });
    for (int k = 0; k < BK; ++k)
      for (int j = 0; j < TN; ++j)
        m.access(SmemOp::kLoad, 4, "B", times,
                 [&](int lane) { return bs + 4 * Tile::b_word(32 * w + lane, j, k); });
  }
  return m;
}

// A piece's transposed store (store_kmajor_piece, shared/simt/simt_load.cuh; inline there):
// float4 piece f of a (BX, BK) tile is row x = f / (BK / 4), k = (f % (BK / 4)) * 4; its element
// q goes to word (k + q) * BX + (swizzled ? kmajor_swizzle<BK>(k + q, x) : x).
template <int BK>
int kmajor_store_word(int bx, bool swizzled, int f, int q) {
  const int x = f / (BK / 4), k = (f % (BK / 4)) * 4 + q;
  return k * bx + (swizzled ? kmajor_swizzle<BK>(k, x) : x);
}

// The SIMT ladder: simt_lds128_kernel (steps/2_simt_lds128.cuh), simt_vec_kernel (3_simt_vec),
// simt_swizzle_kernel (4_simt_swizzle: simt_swizzle, simt_warps, simt_bigtile) and simt_kernel
// (5_simt: simt, and simt_bt with kBT). Per K slab and thread (SASS: the same in every step):
//   stores: store_kmajor_piece (simt_load.cuh) of each A piece, 4 STS; of each B piece,
//     store_nmajor_piece's one STS.128, or with kBT store_kmajor_piece's 4 STS;
//   loads, for each k of the slab: TM / 4 LDS.128 of A at a_at(kk, i), TN / 4 of B at b_at.
// Double-buffered configurations (simt, simt_bt) alternate two stages, one store and one compute
// per slab either way.
template <typename Cfg, bool kBT>
KernelModel model_simt(const char* name, int M, int N, int K) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, kThreads = Cfg::kThreads;
  static_assert(Cfg::kKSplit == 1, "one warp group (simt_groups_kernel is not modelled)");
  static_assert(!kBT || (Cfg::kSwizzle && Cfg::kDoubleBuffer), "Bᵀ: simt_kernel only");
  constexpr bool kSwz = Cfg::kSwizzle;
  constexpr int kALoads = BM * BK / 4 / kThreads, kBLoads = BN * BK / 4 / kThreads;
  require(M % BM == 0 && N % BN == 0 && K % BK == 0, "simt: tile multiples only");
  const int64_t blocks = int64_t(M / BM) * (N / BN), slabs = K / BK;
  const int warps = kThreads / 32;
  KernelModel m("04_coalesced", name, shape3(M, N, K), blocks * warps * slabs,
                std::to_string(BK) + "-k slab");
  for (int stage = 0; stage < Cfg::kStages; ++stage) {
    // Slabs t with t % kStages == stage use this stage (one stage: all of them).
    const int64_t times = blocks * ((slabs + Cfg::kStages - 1 - stage) / Cfg::kStages);
    if (times == 0) continue;
    // As = smem + stage * BK * BM, Bs = smem + kStages * BK * BM + stage * BK * BN (floats).
    const int as = 4 * stage * BK * BM, bs = 4 * (Cfg::kStages * BK * BM + stage * BK * BN);
    for (int w = 0; w < warps; ++w) {
      for (int p = 0; p < kALoads; ++p)
        for (int q = 0; q < 4; ++q)
          m.access(SmemOp::kStore, 4, "A", times, [&](int lane) {
            return as + 4 * kmajor_store_word<BK>(BM, kSwz, 32 * w + lane + p * kThreads, q);
          });
      for (int p = 0; p < kBLoads; ++p) {
        if (kBT) {
          for (int q = 0; q < 4; ++q)
            m.access(SmemOp::kStore, 4, "Bᵀ", times, [&](int lane) {
              return bs + 4 * kmajor_store_word<BK>(BN, true, 32 * w + lane + p * kThreads, q);
            });
        } else {  // store_nmajor_piece (inline): the float4 at word f * 4
          m.access(SmemOp::kStore, 16, "B", times,
                   [&](int lane) { return bs + 16 * (32 * w + lane + p * kThreads); });
        }
      }
      for (int kk = 0; kk < BK; ++kk) {
        for (int i = 0; i < Cfg::TM / 4; ++i)
          m.access(SmemOp::kLoad, 16, "A", times, [&](int lane) {
            const SimtThread<Cfg> th(32 * w + lane);
            // a_at (inline in every step's kernel): kk * BM + wm + a_lane[kk / 4] + piece, with
            // a_lane = lr * 4 and piece i * kPieceStrideM unswizzled (steps 2, 3), the lane and
            // piece parts of the swizzle from step 4 on.
            const int a_at = kk * BM + th.wm +
                             (kSwz ? swizzle_lane_part<BK, Cfg::kLaneRows>(4 * (kk / 4), th.lr) +
                                         swizzle_piece_part<BK, Cfg::kLaneRows>(kk, i)
                                   : th.lr * 4 + i * Cfg::kPieceStrideM);
            // The same offset as the two-group kernel's SimtReadOffsets (host-tested).
            const SimtReadOffsets<BK, BM, BK, 1, Cfg::kLaneRows, Cfg::TM / 4, Cfg::kPieceStrideM,
                                  kSwz>
                rd(0, th.wm, th.lr);
            require(rd.at(kk, i) == a_at, std::string(name) + ": a_at is not SimtReadOffsets");
            return as + 4 * a_at;
          });
        for (int j = 0; j < Cfg::TN / 4; ++j)
          m.access(SmemOp::kLoad, 16, kBT ? "Bᵀ" : "B", times, [&](int lane) {
            const SimtThread<Cfg> th(32 * w + lane);
            // b_at (inline): kk * BN + wn + lc * 4 + j * kPieceStrideN; Bᵀ (step 5's kBT) through
            // the swizzle's lane and piece parts.
            const int b_at = kk * BN + th.wn +
                             (kBT ? swizzle_lane_part<BK, Cfg::kLaneCols>(4 * (kk / 4), th.lc) +
                                        swizzle_piece_part<BK, Cfg::kLaneCols>(kk, j)
                                  : th.lc * 4 + j * Cfg::kPieceStrideN);
            const SimtReadOffsets<BK, BN, BK, 1, Cfg::kLaneCols, Cfg::TN / 4, Cfg::kPieceStrideN,
                                  kBT>
                rd(0, th.wn, th.lc);
            require(rd.at(kk, j) == b_at, std::string(name) + ": b_at is not SimtReadOffsets");
            return bs + 4 * b_at;
          });
      }
    }
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// Chapter 05: mma_lds_kernel (steps/3_mma_lds.cuh) and mma_ldmatrix_kernel (4_mma_ldmatrix: the
// padded tile, mma_ldmatrix; swizzled, mma_swizzle; MmaBest, mma_tuned). Two stages, one K slab
// stored and one computed per iteration (the prologue stores the first). Per slab and thread:
//   stores: TileLoader::store (tile_loader.cuh): piece f = tid + p * kThreads of each tile, one
//     STS.128 at SmemTile::offset(f / (BK / 8), (f % (BK / 8)) * 8) (inline there);
//   loads, per k16 step s: mma_lds, one LDS per fragment register (MI x 4 of A at Mma16816's
//     (a_row, a_col), NI x 2 of B at (b_n, b_k)); mma_ldmatrix, one LDSM.x4 per A fragment (MI)
//     and per two n8 tiles of B (NI / 2), lane l at a_off[s] + 16 i * kRowElems (b_off likewise).
template <typename Cfg, TileLayout L, bool kLds>
KernelModel model_mma(const char* name, int M, int N, int K) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, kThreads = Cfg::kThreads;
  using ATile = SmemTile<BM, BK, L>;
  using BTile = SmemTile<BN, BK, L>;
  require(M % BM == 0 && N % BN == 0 && K % BK == 0, "mma: tile multiples only");
  const int64_t blocks = int64_t(M / BM) * (N / BN), slabs = K / BK;
  const int warps = kThreads / 32;
  KernelModel m("05_tensorcore", name, shape3(M, N, K), blocks * warps * slabs,
                std::to_string(BK) + "-k slab");
  // TileLoader::store's piece position (inline there), in elements.
  auto piece = [](auto tile, int f) {
    using Tile = decltype(tile);
    constexpr int kChunks = Tile::kChunksPerRow;
    return Tile::offset(f / kChunks, (f % kChunks) * 8);
  };
  for (int stage = 0; stage < 2; ++stage) {
    const int64_t times = blocks * ((slabs + 1 - stage) / 2);
    if (times == 0) continue;
    // As = smem + stage * ATile::kElems, Bs = As + 2 * ATile::kElems + stage * BTile::kElems
    // (BF16 elements, 2 bytes).
    const int as = 2 * stage * ATile::kElems, bs = 2 * (2 * ATile::kElems + stage * BTile::kElems);
    for (int w = 0; w < warps; ++w) {
      const int wm = (w / Cfg::kWarpsN) * Cfg::WM, wn = (w % Cfg::kWarpsN) * Cfg::WN;
      for (int p = 0; p < BM * BK / 8 / kThreads; ++p)
        m.access(SmemOp::kStore, 16, "A", times,
                 [&](int lane) { return as + 2 * piece(ATile{}, 32 * w + lane + p * kThreads); });
      for (int p = 0; p < BN * BK / 8 / kThreads; ++p)
        m.access(SmemOp::kStore, 16, "Bᵀ", times,
                 [&](int lane) { return bs + 2 * piece(BTile{}, 32 * w + lane + p * kThreads); });
      for (int s = 0; s < BK / 16; ++s) {
        if (kLds) {
          for (int i = 0; i < Cfg::kMI; ++i)
            for (int r = 0; r < 4; ++r)
              m.access(SmemOp::kLoad, 4, "A", times, [&](int lane) {
                return as + 2 * ATile::offset(wm + 16 * i + Mma16816::a_row(lane, r),
                                              16 * s + Mma16816::a_col(lane, r, 0));
              });
          for (int j = 0; j < Cfg::kNI; ++j)
            for (int r = 0; r < 2; ++r)
              m.access(SmemOp::kLoad, 4, "Bᵀ", times, [&](int lane) {
                return bs + 2 * BTile::offset(wn + 8 * j + Mma16816::b_n(lane),
                                              16 * s + Mma16816::b_k(lane, r, 0));
              });
        } else {
          for (int i = 0; i < Cfg::kMI; ++i)
            m.ldmatrix_x4("A", times, [&](int lane) {
              const int a_off =
                  ATile::offset(wm + Ldmatrix::a_row(lane), 16 * s + Ldmatrix::a_col(lane));
              // The kernel adds fragment i as 16 i rows of kRowElems (MmaConfig's static_assert).
              require(a_off + 16 * i * ATile::kRowElems ==
                          ATile::offset(wm + 16 * i + Ldmatrix::a_row(lane),
                                        16 * s + Ldmatrix::a_col(lane)),
                      std::string(name) + ": fragment i is not 16 i rows further");
              return as + 2 * (a_off + 16 * i * ATile::kRowElems);
            });
          for (int j = 0; j < Cfg::kNI; j += 2)
            m.ldmatrix_x4("Bᵀ", times, [&](int lane) {
              const int b_off =
                  BTile::offset(wn + Ldmatrix::b_row(lane), 16 * s + Ldmatrix::b_col(lane));
              return bs + 2 * (b_off + 8 * j * BTile::kRowElems);
            });
        }
      }
    }
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// Chapter 08: staged_kernel's epilogue (steps/4_staged.cuh, store_acc_staged). Persistent: each
// output tile of (kWsBM, kWsBN) = (128, 256) (hopper_device.cuh, device-only: repeated here) is
// stored once, by its 8 consumer warps, whichever block takes it, so the totals are per tile x
// tiles whatever the grid (132 blocks on the H100). Each warp stages its 16 rows 32 columns at a
// time: per band, 8 STS.64 of register pairs at band[(lane / 4 + 8 h) * kBandRow + 8 jj +
// 2 (lane % 4)] (inline; WgmmaAcc's row and column, checked below), then 4 LDS.128 of whole row
// pieces at band[row * kBandRow + col]. SASS: 64 STS.64 and 32 LDS.128 per warp and tile on
// either path of the vector test (the LDS.128 are repeated on both paths, one runs). The main
// loop's TMA writes and wgmma reads, and the mbarrier operations, are not LSU shared loads or
// stores (the tma and warp_spec rows of the counters: none).
KernelModel model_staged(int M, int N, int K) {
  constexpr int kTileM = 128, kTileN = 256, kConsumerWarps = 8;
  require(M % kTileM == 0 && N % kTileN == 0, "staged: tile multiples only");
  const int64_t tiles = int64_t(M / kTileM) * (N / kTileN);
  KernelModel m("08_hopper", "staged", shape3(M, N, K), tiles * kConsumerWarps, "output tile");
  for (int w = 0; w < kConsumerWarps; ++w) {
    // Warp w's band: the bands follow the stages and barriers, kBandBytes each (one offset for
    // all lanes: it moves no bank count).
    const int band = w * kBandBytes;
    for (int c = 0; c < 256 / kBandCols; ++c) {
      for (int jj = 0; jj < kBandCols / 8; ++jj)
        for (int h = 0; h < 2; ++h)
          m.access(SmemOp::kStore, 8, "band", tiles, [&](int lane) {
            const int word = (lane / 4 + 8 * h) * kBandRow + 8 * jj + 2 * (lane % 4);
            const int r = 4 * (c * kBandCols / 8 + jj) + 2 * h;  // the register pair
            require(word == (WgmmaAcc::row(lane, r) % 16) * kBandRow + WgmmaAcc::col(lane, r) -
                                c * kBandCols &&
                        WgmmaAcc::col(lane, r + 1) == WgmmaAcc::col(lane, r) + 1,
                    "staged: the band is not WgmmaAcc's");
            return band + 4 * word;
          });
      for (int q0 = 0; q0 < 16 * kBandCols / 4; q0 += 32)
        m.access(SmemOp::kLoad, 16, "band", tiles, [&](int lane) {
          const int q = q0 + lane, row = q / (kBandCols / 4), col = 4 * (q % (kBandCols / 4));
          return band + 4 * (row * kBandRow + col);
        });
    }
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
std::vector<KernelModel> all_models() {
  constexpr int T = 8192, G = 4096;  // the profiled shapes (docs/results/<gpu>/counters.csv)
  std::vector<KernelModel> v;
  v.push_back(model_transpose<SmemUnpadded>("transpose_smem", T, T));
  v.push_back(model_transpose<SmemPadded>("transpose_padded", T, T));
  v.push_back(model_transpose<SmemSwizzled>("transpose_swizzled", T, T));
  v.push_back(model_transpose_tall(T, T));
  v.push_back(model_tiled_bt<BtLayout::kPlain>("tiled_bt_trap", G, G, G));
  v.push_back(model_tiled_bt<BtLayout::kPadded>("tiled_bt_padded", G, G, G));
  v.push_back(model_tiled_bt<BtLayout::kSwizzled>("tiled_bt_swizzled", G, G, G));
  v.push_back(model_tiled_2d(G, G, G));
  v.push_back(model_simt<SimtStepLds128, false>("simt_lds128", G, G, G));
  v.push_back(model_simt<SimtStepVec, false>("simt_vec", G, G, G));
  v.push_back(model_simt<SimtStepSwizzle, false>("simt_swizzle", G, G, G));
  v.push_back(model_simt<SimtStepWarps, false>("simt_warps", G, G, G));
  v.push_back(model_simt<SimtStepBigTile, false>("simt_bigtile", G, G, G));
  v.push_back(model_simt<SimtBest, false>("simt", G, G, G));
  v.push_back(model_simt<SimtBest, true>("simt_bt", G, G, G));
  v.push_back(model_mma<MmaStep, TileLayout::kPadded, true>("mma_lds", G, G, G));
  v.push_back(model_mma<MmaStep, TileLayout::kPadded, false>("mma_ldmatrix", G, G, G));
  v.push_back(model_mma<MmaStep, TileLayout::kSwizzled, false>("mma_swizzle", G, G, G));
  v.push_back(model_mma<MmaBest, TileLayout::kSwizzled, false>("mma_tuned", G, G, G));
  v.push_back(model_staged(G, G, G));
  return v;
}

struct Row {
  std::string chapter, kernel, shape;
  SmemOp op;
  Tally tally;
  std::string note;
};

std::vector<Row> rows_of(const std::vector<KernelModel>& models, const std::string& perturb) {
  std::vector<Row> rows;
  for (const auto& m : models)
    for (SmemOp op : {SmemOp::kLoad, SmemOp::kStore}) {
      Row r{m.chapter(), m.kernel(), m.shape(), op, m.total(op), m.note(op)};
      if (op == SmemOp::kLoad && m.kernel() == perturb) r.tally.wavefronts += 1;
      rows.push_back(r);
    }
  return rows;
}

std::string csv_text(const std::vector<Row>& rows) {
  std::ostringstream out;
  out << "# model: common/access_model.h; tests/smem_model.cu\n"
      << "# command: smem_model > docs/results/smem_model.csv\n"
      << "# counts: the whole launch at the shape; warp-level instructions (ld: LDS LDS.64 "
         "LDS.128 LDSM; st: STS*) and their wavefronts; the instruction mix of nvcc 13.0 for "
         "sm_90 (sm_90a for 08_hopper)\n"
      << "# assumes: mbarrier operations and TMA and wgmma shared-memory traffic are not LSU "
         "shared loads or stores\n"
      << "# not modelled: 05_tensorcore wmma and wmma_shared (the WMMA API's shared accesses "
         "are the compiler's); 02_transpose_copy copy_tiled has no shared memory\n"
      << "chapter,kernel,shape,op,instructions,wavefronts,per_instruction,note\n";
  for (const auto& r : rows) {
    if (r.note.find(',') != std::string::npos) model_error("a note with a comma: " + r.note);
    out << r.chapter << ',' << r.kernel << ',' << r.shape << ',' << op_name(r.op) << ','
        << r.tally.instructions << ',' << r.tally.wavefronts << ','
        << KernelModel::ratio(r.tally.wavefronts, r.tally.instructions) << ',' << r.note << '\n';
  }
  return out.str();
}

// ---------------------------------------------------------------------------------------------
// The per-instruction numbers the chapters' READMEs quote, pinned: wavefronts / instructions ==
// num / den, for a whole row (label "") or one operand's instructions (label "A LDS.128").
struct Pin {
  const char* kernel;
  SmemOp op;
  const char* label;
  int64_t num, den;
  const char* why;
};
const Pin kPins[] = {
    {"transpose_smem", SmemOp::kLoad, "", 32, 1, "a tile column in one bank"},
    {"transpose_padded", SmemOp::kLoad, "", 1, 1, "padding spreads a column"},
    {"transpose_swizzled", SmemOp::kLoad, "", 1, 1, "the XOR swizzle spreads a column"},
    {"tiled_bt_trap", SmemOp::kLoad, "", 17, 1, "the trap: (2 + 32) / 2 per load instruction"},
    {"tiled_bt_trap", SmemOp::kLoad, "A LDS.128", 2, 1, "A's broadcast LDS.128"},
    {"tiled_bt_trap", SmemOp::kLoad, "Bᵀ LDS.128", 32, 1, "Bᵀ's LDS.128, rows 128 bytes apart"},
    {"tiled_bt_padded", SmemOp::kLoad, "", 6, 5, "a fix: (2 + 4 x 1) / 5"},
    {"tiled_bt_swizzled", SmemOp::kLoad, "", 6, 5, "a fix: (2 + 4 x 1) / 5"},
    {"simt_lds128", SmemOp::kLoad, "", 3, 1, "(2 x 4 + 2 x 2) / 4"},
    {"simt_lds128", SmemOp::kStore, "A STS", 4, 1, "the unswizzled transposing store: 4-way"},
    {"simt_vec", SmemOp::kLoad, "", 3, 1, "(2 x 4 + 2 x 2) / 4"},
    {"simt_swizzle", SmemOp::kStore, "A STS", 1, 1, "the swizzled transposing store"},
    {"simt", SmemOp::kLoad, "", 8, 3, "(2 x 4 + 4 x 2) / 6"},
    {"simt", SmemOp::kLoad, "A LDS.128", 4, 1, "A: 4 phases of 8 distinct float4s"},
    {"simt", SmemOp::kLoad, "B LDS.128", 2, 1, "B: lanes t and t ^ 1 pair up"},
    {"simt_bt", SmemOp::kLoad, "Bᵀ LDS.128", 2, 1, "Bᵀ through the swizzle: still paired"},
    {"mma_lds", SmemOp::kStore, "", 8, 1, "padded rows: 2 wavefronts a phase of 8 lanes"},
    {"mma_swizzle", SmemOp::kStore, "", 4, 1, "the swizzled tile's STS.128: 4 phases"},
    {"mma_tuned", SmemOp::kLoad, "", 4, 1, "conflict-free ldmatrix.x4: one per matrix"},
    {"staged", SmemOp::kStore, "", 2, 1, "STS.64 into rows of 40 floats: 2 phases of 16"},
    {"staged", SmemOp::kLoad, "", 4, 1, "LDS.128 of whole row pieces: 4 phases of 8"},
};

// Checks the pins against the model (with any perturbation); prints each failure.
int check_pins(const std::vector<KernelModel>& models, const std::string& perturb) {
  int failures = 0;
  for (const Pin& p : kPins) {
    const KernelModel* m = nullptr;
    for (const auto& k : models)
      if (k.kernel() == p.kernel) m = &k;
    if (!m) model_error(std::string("a pin names no modelled kernel: ") + p.kernel);
    Tally t =
        *p.label ? (m->label(p.op, p.label) ? *m->label(p.op, p.label) : Tally{}) : m->total(p.op);
    if (p.op == SmemOp::kLoad && m->kernel() == perturb) t.wavefronts += 1;  // a wrong model
    if (t.instructions == 0 || t.wavefronts * p.den != p.num * t.instructions) {
      std::printf(
          "pin failed: %s %s %s: %lld wavefronts / %lld instructions, expected %s per "
          "instruction (%s)\n",
          p.kernel, op_name(p.op), *p.label ? p.label : "(all)", (long long)t.wavefronts,
          (long long)t.instructions, KernelModel::ratio(p.num, p.den).c_str(), p.why);
      ++failures;
    }
  }
  if (failures == 0) std::printf("smem_model: %zu pinned numbers hold\n", std::size(kPins));
  return failures;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    v.push_back(l);
  }
  return v;
}

// The model's CSV against FILE, line by line; prints each difference.
int check_file(const std::string& text, const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  const auto want = lines_of(buf.str()), got = lines_of(text);
  int diffs = 0;
  for (size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    const std::string w = i < want.size() ? want[i] : "(none)",
                      g = i < got.size() ? got[i] : "(none)";
    if (w != g) {
      if (diffs < 20)
        std::printf("line %zu differs:\n  %s: %s\n  model: %s\n", i + 1, path.c_str(), w.c_str(),
                    g.c_str());
      ++diffs;
    }
  }
  if (diffs) {
    std::printf(
        "%d lines differ from %s (rewrite it with: smem_model > %s, if the change is "
        "meant)\n",
        diffs, path.c_str(), path.c_str());
  } else {
    std::printf("smem_model: %zu lines match %s\n", got.size(), path.c_str());
  }
  return diffs;
}

// One CSV line, with double-quoted fields.
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> f(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      f.emplace_back();
    else
      f.back() += c;
  }
  return f;
}

// The model beside a counters CSV (tools/profile.py's columns lds_wavefronts, lds_conflicts,
// sts_wavefronts, sts_conflicts; launch 1 of each kernel): measured / model, for the wavefronts
// and for the wavefronts less the conflicts (what Nsight Compute counts as the accesses' phases)
// against the model's phases.
int compare(const std::vector<Row>& rows, const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> header;
  std::map<std::string, std::vector<std::string>> measured;  // chapter,kernel,shape -> fields
  for (std::string l; std::getline(in, l);) {
    if (l.empty() || l[0] == '#') continue;
    auto f = split_csv(l);
    if (header.empty()) {
      header = f;
      continue;
    }
    auto col = [&](const char* name) {
      for (size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return i;
      std::fprintf(stderr, "smem_model: %s has no column %s\n", path.c_str(), name);
      std::exit(2);
    };
    if (f.size() == header.size() && f[col("launch")] == "1")
      measured[f[col("chapter")] + "," + f[col("kernel")] + "," + f[col("shape")]] = f;
  }
  if (header.empty()) {
    std::fprintf(stderr, "smem_model: no CSV header in %s\n", path.c_str());
    return 2;
  }
  auto idx = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    std::fprintf(stderr, "smem_model: %s has no column %s\n", path.c_str(), name.c_str());
    std::exit(2);
  };
  std::printf(
      "chapter,kernel,shape,op,model_instructions,model_wavefronts,measured_wavefronts,"
      "measured_per_model,model_phases,measured_wavefronts_less_conflicts,"
      "measured_per_model_phases\n");
  for (const auto& r : rows) {
    auto it = measured.find(r.chapter + "," + r.kernel + "," + r.shape);
    const std::string p = r.op == SmemOp::kLoad ? "lds" : "sts";
    if (it == measured.end()) {
      std::printf("%s,%s,%s,%s,%lld,%lld,,,%lld,,\n", r.chapter.c_str(), r.kernel.c_str(),
                  r.shape.c_str(), op_name(r.op), (long long)r.tally.instructions,
                  (long long)r.tally.wavefronts, (long long)r.tally.phases);
      continue;
    }
    const double wf = std::atof(it->second[idx(p + "_wavefronts")].c_str());
    const double cf = std::atof(it->second[idx(p + "_conflicts")].c_str());
    auto ratio = [](double a, double b) { return b == 0 ? (a == 0 ? 1.0 : 0.0) : a / b; };
    std::printf("%s,%s,%s,%s,%lld,%lld,%.0f,%.4f,%lld,%.0f,%.4f\n", r.chapter.c_str(),
                r.kernel.c_str(), r.shape.c_str(), op_name(r.op), (long long)r.tally.instructions,
                (long long)r.tally.wavefronts, wf, ratio(wf, double(r.tally.wavefronts)),
                (long long)r.tally.phases, wf - cf, ratio(wf - cf, double(r.tally.phases)));
  }
  return 0;
}

int usage(const char* msg) {
  std::fprintf(stderr,
               "smem_model: %s (usage: smem_model [--check FILE | --pins | --compare "
               "COUNTERS.csv] [--perturb KERNEL])\n",
               msg);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string check, counters, perturb;
  bool pins = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--check" && has_value)
      check = argv[++i];
    else if (a == "--compare" && has_value)
      counters = argv[++i];
    else if (a == "--perturb" && has_value)
      perturb = argv[++i];
    else if (a == "--pins")
      pins = true;
    else
      return usage(("bad argument " + a).c_str());
  }
  if (int(!check.empty()) + int(!counters.empty()) + int(pins) > 1)
    return usage("--check, --pins and --compare are one at a time");
  for (const std::string& f : {check, counters})
    if (!f.empty() && !std::ifstream(f)) return usage(("cannot read " + f).c_str());

  const auto models = all_models();
  if (!perturb.empty()) {
    bool known = false;
    for (const auto& m : models) known = known || m.kernel() == perturb;
    if (!known) return usage(("--perturb: no modelled kernel " + perturb).c_str());
  }
  const auto rows = rows_of(models, perturb);
  if (!counters.empty()) return compare(rows, counters);
  if (pins) return check_pins(models, perturb) ? 1 : 0;
  const std::string text = csv_text(rows);
  if (check.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  const int failed_pins = check_pins(models, perturb);
  const int diffs = check_file(text, check);
  return failed_pins || diffs ? 1 : 0;
}
