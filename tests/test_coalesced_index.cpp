// Chapter 04's shared-memory layouts, judged by the bank-conflict calculator on the very
// functions the kernels call: the trap is 32-way, its fixes and the best kernel's swizzle are
// conflict-free, and every layout is a permutation.
#include <cmath>
#include <set>
#include <vector>

#include "04_coalesced/coalesced.cuh"
#include "shared/simt/simt.cuh"
#include "common/access_model.h"
#include "harness.h"

namespace {
// Wavefronts of the inner-loop read Bts[offset(tx, k)] (lanes = tx) and of the load's store
// Bts[offset(ty, tx)] (lanes = tx), worst over k / ty.
template <BtLayout L>
void bt_wavefronts(int* read, int* store) {
  *read = *store = 0;
  for (int k = 0; k < kBtTile; ++k) {
    uint32_t r[32], s[32];
    for (int lane = 0; lane < 32; ++lane) {
      r[lane] = 4 * BtTile<L>::offset(lane, k);
      s[lane] = 4 * BtTile<L>::offset(k, lane);
    }
    *read = std::max(*read, shared_wavefronts(r, 32));
    *store = std::max(*store, shared_wavefronts(s, 32));
  }
}

template <BtLayout L>
bool bt_is_permutation() {
  std::set<int> seen;
  for (int n = 0; n < kBtTile; ++n)
    for (int k = 0; k < kBtTile; ++k) {
      int o = BtTile<L>::offset(n, k);
      if (o < 0 || o >= BtTile<L>::kWords) return false;
      seen.insert(o);
    }
  return seen.size() == size_t(kBtTile) * kBtTile;
}

// The best kernel's transposing store: piece f of the (BX, BK) tile goes to row x = f/(BK/4),
// k = (f % (BK/4)) * 4 + q for q = 0..3 (one store instruction per q). Worst wavefronts over
// warps and q, with and without the swizzle.
template <int BK, int BX>
int kmajor_store_wavefronts(bool swizzled) {
  int worst = 0;
  for (int f0 = 0; f0 < BX * BK / 4; f0 += 32)
    for (int q = 0; q < 4; ++q) {
      uint32_t s[32];
      for (int lane = 0; lane < 32; ++lane) {
        int f = f0 + lane, x = f / (BK / 4), k = (f % (BK / 4)) * 4 + q;
        s[lane] = 4 * (k * BX + (swizzled ? kmajor_swizzle<BK>(k, x) : x));
      }
      worst = std::max(worst, shared_wavefronts(s, 32));
    }
  return worst;
}

template <int BK, int BX>
bool kmajor_swizzle_is_a_row_permutation() {
  for (int k = 0; k < BK; ++k) {
    std::set<int> cols;
    for (int x = 0; x < BX; ++x) {
      int c = kmajor_swizzle<BK>(k, x);
      if (c < 0 || c >= BX || (c & 3) != (x & 3)) return false;  // float4s stay whole
      cols.insert(c);
    }
    if (cols.size() != size_t(BX)) return false;
  }
  return true;
}

// The inner loop's float4 reads of A for configuration Cfg: worst wavefronts over warps, k, i.
template <typename Cfg>
int simt_a_read_wavefronts() {
  int worst = 0;
  for (int warp = 0; warp < Cfg::kThreads / 32; ++warp)
    for (int k = 0; k < Cfg::BK; ++k)
      for (int i = 0; i < Cfg::TM / 4; ++i) {
        uint32_t a[32];
        for (int lane = 0; lane < 32; ++lane) {
          int wm = (warp / Cfg::kWarpsN) * Cfg::WM, lr = lane % Cfg::kLaneRows;
          int m = wm + i * Cfg::kPieceStrideM + lr * 4;
          a[lane] = 4 * (k * Cfg::BM + kmajor_swizzle<Cfg::BK>(k, m));
        }
        worst = std::max(worst, shared_wavefronts(a, 32, 16));
      }
  return worst;
}
}  // namespace

TEST(coalesced_index, trap_reads_are_32_way_and_fixes_are_conflict_free) {
  int read, store;
  bt_wavefronts<BtLayout::kPlain>(&read, &store);
  CHECK_EQ(read, 32);
  CHECK_EQ(store, 1);
  bt_wavefronts<BtLayout::kPadded>(&read, &store);
  CHECK_EQ(read, 1);
  CHECK_EQ(store, 1);
  bt_wavefronts<BtLayout::kSwizzled>(&read, &store);
  CHECK_EQ(read, 1);
  CHECK_EQ(store, 1);
}

namespace {
// Wavefronts of one warp's shared loads over 4 steps of k (k = 0..3 of a tile), as nvcc compiles
// tiled_bt_kernel (cuobjdump -sass, README): A's row As[ty][k..k+3] is one LDS.128 that all 32
// lanes read at the same address (a warp is one ty); the trap's Bᵀ reads, 4 consecutive words
// of one row per lane, merge into one LDS.128 too; the padded rows (33 words) are not 16-byte
// aligned and the swizzled offsets k ^ tx not consecutive, so their reads stay 4 scalar LDS.
template <BtLayout L>
int bt_wavefronts_per_4k(int* instructions) {
  uint32_t a[32], b[32];
  for (int lane = 0; lane < 32; ++lane) a[lane] = 4 * (5 * kBtTile + 0);  // As[ty = 5][0..3]
  int total = shared_wavefronts(a, 32, 16);
  *instructions = 1;
  if (L == BtLayout::kPlain) {
    for (int lane = 0; lane < 32; ++lane) b[lane] = 4 * BtTile<L>::offset(lane, 0);
    total += shared_wavefronts(b, 32, 16);
    *instructions += 1;
  } else {
    for (int k = 0; k < 4; ++k) {
      for (int lane = 0; lane < 32; ++lane) b[lane] = 4 * BtTile<L>::offset(lane, k);
      total += shared_wavefronts(b, 32, 4);
      *instructions += 1;
    }
  }
  return total;
}
}  // namespace

// The numbers chapter 04's README quotes: per warp and 4 steps of k, the trap's two LDS.128
// take 32 + 2 = 34 wavefronts, a fix's LDS.128 and 4 LDS take 2 + 4 = 6, a ratio of 5.7 (Nsight
// Compute: 1.83e10 / 3.22e9 on the H100). With scalar loads the trap would take 4 x 32 + 4 = 132:
// the merged LDS.128 makes it cheaper, not dearer.
TEST(coalesced_index, trap_costs_34_wavefronts_per_4k_and_its_fixes_6) {
  int n_trap = 0, n_pad = 0, n_swz = 0;
  const int trap = bt_wavefronts_per_4k<BtLayout::kPlain>(&n_trap);
  const int padded = bt_wavefronts_per_4k<BtLayout::kPadded>(&n_pad);
  const int swizzled = bt_wavefronts_per_4k<BtLayout::kSwizzled>(&n_swz);
  CHECK_EQ(trap, 34);
  CHECK_EQ(padded, 6);
  CHECK_EQ(swizzled, 6);
  CHECK_EQ(n_trap, 2);
  CHECK_EQ(n_pad, 5);
  CHECK(std::abs(double(trap) / padded - 5.67) < 0.01);
  uint32_t a[32], b[32];
  for (int lane = 0; lane < 32; ++lane) a[lane] = 4 * (5 * kBtTile);
  CHECK_EQ(shared_wavefronts(a, 32, 16), 2);  // A's broadcast LDS.128: 2 phases of 16 lanes
  int scalar_trap = 0;
  for (int k = 0; k < 4; ++k) {
    for (int lane = 0; lane < 32; ++lane) b[lane] = 4 * BtTile<BtLayout::kPlain>::offset(lane, k);
    scalar_trap += shared_wavefronts(b, 32, 4);
  }
  CHECK_EQ(scalar_trap, 128);  // the trap's Bᵀ reads as 4 scalar LDS: 4 x 32
}

TEST(coalesced_index, bt_layouts_are_permutations) {
  CHECK(bt_is_permutation<BtLayout::kPlain>());
  CHECK(bt_is_permutation<BtLayout::kPadded>());
  CHECK(bt_is_permutation<BtLayout::kSwizzled>());
}

TEST(coalesced_index, kmajor_swizzle_makes_the_transposing_store_conflict_free) {
  CHECK_EQ((kmajor_store_wavefronts<16, 128>(false)), 4);  // unswizzled: 4-way
  CHECK_EQ((kmajor_store_wavefronts<16, 128>(true)), 1);
  CHECK_EQ((kmajor_store_wavefronts<8, 128>(false)), 2);
  CHECK_EQ((kmajor_store_wavefronts<8, 128>(true)), 1);
  CHECK_EQ((kmajor_store_wavefronts<32, 128>(false)), 8);
  CHECK_EQ((kmajor_store_wavefronts<32, 128>(true)), 1);
  CHECK_EQ((kmajor_store_wavefronts<16, 64>(true)), 1);
  CHECK_EQ((kmajor_store_wavefronts<16, 256>(true)), 1);
}

TEST(coalesced_index, kmajor_swizzle_is_a_permutation_of_each_row) {
  CHECK((kmajor_swizzle_is_a_row_permutation<8, 128>()));
  CHECK((kmajor_swizzle_is_a_row_permutation<16, 128>()));
  CHECK((kmajor_swizzle_is_a_row_permutation<32, 128>()));
  CHECK((kmajor_swizzle_is_a_row_permutation<16, 64>()));
  CHECK((kmajor_swizzle_is_a_row_permutation<16, 256>()));
}

namespace {
// The inner loop's split form of the swizzle equals kmajor_swizzle for every lane, piece, k.
template <int BK, int kLanes, int kPieces>
bool split_swizzle_matches() {
  for (int x0 : {0, 32, 64, 128})
    for (int k = 0; k < BK; ++k)
      for (int p = 0; p < kPieces; ++p)
        for (int lane = 0; lane < kLanes; ++lane) {
          int x = x0 + p * kLanes * 4 + lane * 4;
          int split =
              x0 + swizzle_piece_part<BK, kLanes>(k, p) + swizzle_lane_part<BK, kLanes>(k, lane);
          if (split != kmajor_swizzle<BK>(k, x)) return false;
        }
  return true;
}
}  // namespace

TEST(coalesced_index, split_swizzle_equals_the_swizzle) {
  CHECK((split_swizzle_matches<16, 8, 2>()));  // A of 64 x 32 warps (8 lanes along M, TM = 8)
  CHECK((split_swizzle_matches<16, 4, 2>()));  // B of 64 x 32 warps (4 lanes along N, TN = 8)
  CHECK((split_swizzle_matches<16, 4, 4>()));  // B of 64 x 64 warps (TN = 16)
  CHECK((split_swizzle_matches<8, 4, 4>()));
  CHECK((split_swizzle_matches<32, 8, 2>()));
  CHECK((split_swizzle_matches<32, 4, 4>()));
}

TEST(coalesced_index, simt_float4_reads_take_the_ideal_four_wavefronts) {
  // 32 lanes x 16 bytes: 4 phases of 128 bytes, the fewest possible.
  CHECK_EQ((simt_a_read_wavefronts<SimtConfig<128, 128, 16, 64, 32, 8, 8, 1>>()), 4);
  CHECK_EQ((simt_a_read_wavefronts<SimtConfig<128, 128, 8, 64, 32, 8, 8, 1>>()), 4);
  CHECK_EQ((simt_a_read_wavefronts<SimtConfig<64, 128, 16, 32, 64, 8, 8, 1>>()), 4);
}

namespace {
// Every element of the (BM, BN) block tile is computed by exactly one thread of each warp
// group (SimtThread, the kernel's own index functions), and every index stays inside the tile.
template <typename Cfg>
bool simt_threads_cover_the_tile_once() {
  std::vector<int> hits(Cfg::BM * Cfg::BN, 0);
  for (int tid = 0; tid < Cfg::kThreads; ++tid) {
    const SimtThread<Cfg> th(tid);
    for (int i = 0; i < Cfg::TM; ++i)
      for (int j = 0; j < Cfg::TN; ++j) {
        const int r = th.row(i), c = th.col(j);
        if (r < 0 || r >= Cfg::BM || c < 0 || c >= Cfg::BN) return false;
        ++hits[r * Cfg::BN + c];
      }
  }
  for (int h : hits)
    if (h != Cfg::kKSplit) return false;
  return true;
}

// The inner loop's read offsets (SimtReadOffsets: registers per thread plus compile-time
// parts) equal the plain formula, k * BX + kmajor_swizzle(k, x) (or k * BX + x unswizzled), for
// every thread, k of its group and piece; and the groups read disjoint k that cover the slab.
template <typename Cfg, bool kA, bool kSwizzled>
bool simt_read_offsets_match() {
  constexpr int BK = Cfg::BK, BX = kA ? Cfg::BM : Cfg::BN, KG = Cfg::kGroupK;
  constexpr int kLanes = kA ? Cfg::kLaneRows : Cfg::kLaneCols;
  constexpr int kPieces = kA ? Cfg::TM / 4 : Cfg::TN / 4;
  constexpr int kStride = kA ? Cfg::kPieceStrideM : Cfg::kPieceStrideN;
  std::vector<int> k_reads(BK, 0);
  for (int tid = 0; tid < Cfg::kThreads; ++tid) {
    const SimtThread<Cfg> th(tid);
    const int x0 = kA ? th.wm : th.wn, lane = kA ? th.lr : th.lc, k_first = KG * th.group;
    const SimtReadOffsets<BK, BX, KG, Cfg::kKSplit, kLanes, kPieces, kStride, kSwizzled> rd(
        k_first, x0, lane);
    for (int kk = 0; kk < KG; ++kk) {
      const int k = k_first + kk;
      if (tid % Cfg::kGroupThreads == 0) ++k_reads[k];
      for (int p = 0; p < kPieces; ++p) {
        const int x = x0 + p * kStride + lane * 4;
        const int want = k * BX + (kSwizzled ? kmajor_swizzle<BK>(k, x) : x);
        if (rd.at(kk, p) != want) return false;
      }
    }
  }
  for (int n : k_reads)
    if (n != 1) return false;
  return true;
}

// Wavefronts of the inner loop's float4 reads of one operand tile (A: rows, lanes lr; Bᵀ or B:
// columns, lanes lc), worst over warps, k and pieces, for the kernel's own offsets.
template <typename Cfg, bool kA, bool kSwizzled>
int simt_read_wavefronts() {
  constexpr int BX = kA ? Cfg::BM : Cfg::BN, kPieces = kA ? Cfg::TM / 4 : Cfg::TN / 4;
  constexpr int kLanes = kA ? Cfg::kLaneRows : Cfg::kLaneCols;
  constexpr int kStride = kA ? Cfg::kPieceStrideM : Cfg::kPieceStrideN;
  int worst = 0;
  for (int warp = 0; warp < Cfg::kThreads / 32; ++warp)
    for (int kk = 0; kk < Cfg::kGroupK; ++kk)
      for (int p = 0; p < kPieces; ++p) {
        uint32_t a[32];
        for (int lane = 0; lane < 32; ++lane) {
          const SimtThread<Cfg> th(warp * 32 + lane);
          const int x0 = kA ? th.wm : th.wn, l = kA ? th.lr : th.lc;
          // The kernel's offsets: with one group its inline sum of lane and piece parts (a_at,
          // b_at in steps/4_simt_swizzle.cuh, 5_simt.cuh), with two SimtReadOffsets
          // (simt_groups_kernel, steps/6_simt_auto.cuh).
          if constexpr (Cfg::kKSplit == 1) {
            const int x = kSwizzled ? x0 + swizzle_piece_part<Cfg::BK, kLanes>(kk, p) +
                                          swizzle_lane_part<Cfg::BK, kLanes>(kk, l)
                                    : x0 + p * kStride + l * 4;
            a[lane] = 4 * (kk * BX + x);
          } else {
            const SimtReadOffsets<Cfg::BK, BX, Cfg::kGroupK, Cfg::kKSplit, kLanes, kPieces,
                                  kStride, kSwizzled>
                rd(Cfg::kGroupK * th.group, x0, l);
            a[lane] = 4 * rd.at(kk, p);
          }
        }
        worst = std::max(worst, shared_wavefronts(a, 32, 16));
      }
  return worst;
}
}  // namespace

TEST(coalesced_index, simt_threads_cover_their_block_tile_once) {
  CHECK(simt_threads_cover_the_tile_once<SimtStepLds128>());  // no warp tiling: 16 x 16 grid
  CHECK(simt_threads_cover_the_tile_once<SimtStepWarps>());
  CHECK(simt_threads_cover_the_tile_once<SimtStepBigTile>());
  CHECK(simt_threads_cover_the_tile_once<SimtBest>());
  CHECK(simt_threads_cover_the_tile_once<Simt128x128>());
  CHECK(simt_threads_cover_the_tile_once<Simt64x128>());
  CHECK(simt_threads_cover_the_tile_once<Simt96x192w6>());  // 3 pieces along M, 32 rows apart
  CHECK(simt_threads_cover_the_tile_once<Simt96x192>());  // once by each of its 2 groups
  CHECK(simt_threads_cover_the_tile_once<Simt64x64>());
  CHECK(simt_threads_cover_the_tile_once<Simt32x64>());
}

TEST(coalesced_index, simt_best_is_conflict_free) {
  // The shipped configuration: its transposing stores (A, and Bᵀ in simt_bt) take one
  // wavefront; its float4 reads of A the ideal four; those of Bᵀ (swizzled) and of B (plain)
  // two, since lanes t and t ^ 1 of a warp tile read the same float4 of B (they differ only in
  // the row, access_model.h's pairs) and each half-warp's 16 lanes then read 128 bytes.
  using C = SimtBest;
  CHECK_EQ((kmajor_store_wavefronts<C::BK, C::BM>(true)), 1);
  CHECK_EQ((kmajor_store_wavefronts<C::BK, C::BN>(true)), 1);
  CHECK_EQ((simt_read_wavefronts<C, true, true>()), 4);
  CHECK_EQ((simt_read_wavefronts<C, false, true>()), 2);
  CHECK_EQ((simt_read_wavefronts<C, false, false>()), 2);
  CHECK_EQ((simt_a_read_wavefronts<C>()), 4);
  CHECK((split_swizzle_matches<C::BK, C::kLaneRows, C::TM / 4>()));
  CHECK((split_swizzle_matches<C::BK, C::kLaneCols, C::TN / 4>()));
  CHECK((kmajor_swizzle_is_a_row_permutation<C::BK, C::BM>()));
  CHECK((kmajor_swizzle_is_a_row_permutation<C::BK, C::BN>()));
}

TEST(coalesced_index, simt_heuristic_tiles_are_conflict_free) {
  CHECK_EQ((simt_read_wavefronts<Simt128x128, true, true>()), 4);
  CHECK_EQ((simt_read_wavefronts<Simt128x128, false, true>()), 2);
  CHECK_EQ((simt_read_wavefronts<Simt64x128, true, true>()), 4);
  CHECK_EQ((simt_read_wavefronts<Simt64x128, false, true>()), 2);
  CHECK_EQ((simt_read_wavefronts<Simt64x64, true, true>()), 4);
  CHECK_EQ((simt_read_wavefronts<Simt64x64, false, true>()), 2);
  CHECK_EQ((simt_read_wavefronts<Simt32x64, true, true>()), 4);
  CHECK_EQ((simt_read_wavefronts<Simt32x64, false, true>()), 2);
  // The 96 x 192 tile: rows of 24 and 48 float4s, 3 groups of 8 and 6; 3 pieces along M. With
  // one group of warps (BK 16) and with two (BK 8; more in simt_read_offsets_are_the_swizzle).
  using W6 = Simt96x192w6;
  CHECK_EQ((simt_read_wavefronts<W6, true, true>()), 4);
  CHECK_EQ((simt_read_wavefronts<W6, false, true>()), 2);
  CHECK_EQ((simt_read_wavefronts<W6, false, false>()), 2);
  CHECK_EQ((kmajor_store_wavefronts<16, 96>(true)), 1);
  CHECK_EQ((kmajor_store_wavefronts<16, 192>(true)), 1);
  CHECK((split_swizzle_matches<16, W6::kLaneRows, W6::TM / 4>()));
  CHECK((split_swizzle_matches<16, W6::kLaneCols, W6::TN / 4>()));
  CHECK((split_swizzle_matches<8, W6::kLaneRows, W6::TM / 4>()));
  CHECK((split_swizzle_matches<8, W6::kLaneCols, W6::TN / 4>()));
  CHECK((kmajor_swizzle_is_a_row_permutation<16, 96>()));
  CHECK((kmajor_swizzle_is_a_row_permutation<16, 192>()));
  CHECK((kmajor_swizzle_is_a_row_permutation<8, 96>()));
  CHECK((kmajor_swizzle_is_a_row_permutation<8, 192>()));
  CHECK_EQ((kmajor_store_wavefronts<16, 32>(true)), 1);
  CHECK((split_swizzle_matches<16, 4, 1>()));  // B of the 32 x 32 warps with TN = 4: 8 lanes
  CHECK((split_swizzle_matches<16, 8, 1>()));
}


TEST(coalesced_index, simt_read_offsets_are_the_swizzle) {
  // The two-group tile, whose kernels use SimtReadOffsets (one group adds the lane and piece
  // parts inline; split_swizzle_matches checks those). Group 1's mask moves B's pieces (4 lanes
  // along N: mask 4 reaches the piece bits), so those offsets are kept whole; A's 8 lanes along
  // M absorb it.
  using K2 = Simt96x192;
  CHECK((simt_read_offsets_match<K2, true, true>()));
  CHECK((simt_read_offsets_match<K2, false, true>()));
  CHECK((simt_read_offsets_match<K2, false, false>()));
  CHECK(!(SimtReadOffsets<K2::BK, K2::BM, K2::kGroupK, 2, K2::kLaneRows, K2::TM / 4,
                          K2::kPieceStrideM, true>::kWhole));
  CHECK((SimtReadOffsets<K2::BK, K2::BN, K2::kGroupK, 2, K2::kLaneCols, K2::TN / 4,
                         K2::kPieceStrideN, true>::kWhole));
  // And they stay conflict-free: 4 wavefronts per float4 read of A, 2 of B (paired lanes),
  // the 8-k tile's stores 1.
  CHECK_EQ((simt_read_wavefronts<K2, true, true>()), 4);
  CHECK_EQ((simt_read_wavefronts<K2, false, true>()), 2);
  CHECK_EQ((simt_read_wavefronts<K2, false, false>()), 2);
  CHECK_EQ((kmajor_store_wavefronts<8, 96>(true)), 1);
  CHECK_EQ((kmajor_store_wavefronts<8, 192>(true)), 1);
}

TEST(coalesced_index, ladder_steps_change_what_the_calculator_predicts) {
  // simt_lds128 -> simt_swizzle: the transposing store of A goes from 4-way to conflict-free.
  CHECK_EQ((kmajor_store_wavefronts<SimtStepLds128::BK, SimtStepLds128::BM>(false)), 4);
  CHECK_EQ((kmajor_store_wavefronts<SimtStepSwizzle::BK, SimtStepSwizzle::BM>(true)), 1);
  // The 16 x 16 thread grid's reads of A are 16-byte reads of 16 distinct float4s (256 bytes):
  // swizzled or not, more wavefronts than the 64 x 32 warp tile's 8 distinct float4s.
  const int no_warps = simt_read_wavefronts<SimtStepSwizzle, true, true>();
  const int warps = simt_read_wavefronts<SimtStepWarps, true, true>();
  std::printf("  A reads: 16 x 16 grid %d wavefronts, 64 x 32 warp tiles %d\n", no_warps, warps);
  CHECK_EQ((simt_read_wavefronts<SimtStepLds128, true, false>()), no_warps);
  CHECK(warps <= no_warps);
}

TEST(coalesced_index, heuristic_picks_full_waves) {
  // Blocks per SM of each option on the H100 (cudaOccupancyMaxActiveBlocksPerMultiprocessor:
  // registers decide) and its SM count.
  constexpr int kH100 = 132;
  const int fit[kSimtTileOptionCount] = {1, 1, 3, 1, 4, 8};
  auto pick = [&](int M, int N) { return kSimtTileOptions[choose_simt_tile(M, N, kH100, fit)]; };
  // 4096^2 in 128 x 256 tiles: 512 blocks, 3.88 waves of 132: the big tile stays.
  CHECK_EQ(pick(4096, 4096).bm, 128);
  CHECK_EQ(pick(4096, 4096).bn, 256);
  CHECK_EQ(pick(8192, 8192).bn, 256);
  CHECK_EQ(pick(2048, 2048).bn, 256);  // 128 blocks: 0.97 of a wave
  // 3072^2: 288 blocks of 128 x 256 are 2.18 waves (the third runs 18% full); 1152 blocks of
  // 64 x 128, 3 per SM, are 2.91 waves of 396; 512 of 96 x 192 are 3.88 waves of 132, and 12
  // warps fill the SM: 4 * 18432 / 0.98 = 75,233 against 9 * 8192 / 0.95 = 77,608.
  CHECK_EQ(pick(3072, 3072).bm, 96);
  CHECK_EQ(pick(3072, 3072).bn, 192);
  // Without the 96 x 192 tile, 3072^2 takes 64 x 128.
  const int no96[kSimtTileOptionCount] = {1, 1, 3, 0, 4, 8};
  CHECK_EQ(kSimtTileOptions[choose_simt_tile(3072, 3072, kH100, no96)].bm, 64);
  // 1536^2: 72 blocks of 128 x 256 leave 60 SMs idle; 288 of 64 x 128 fill one wave of 396
  // but leave 3 tiles on 24 SMs and 2 on the rest; 128 of 96 x 192 take 128 SMs once each.
  CHECK_EQ(pick(1536, 1536).bm, 96);
  CHECK_EQ(pick(1536, 1536).bn, 192);
  // Small outputs get small tiles: 512^2 in 128 x 256 tiles is 8 blocks for 132 SMs.
  CHECK(pick(512, 512).bm * pick(512, 512).bn <= 64 * 64);
  // The estimate follows the formula: 3072^2, 128 x 256, 1 per SM: 3 waves of one tile.
  CHECK_EQ(simt_estimated_time(3072, 3072, kH100, 1, kSimtTileOptions[0]), 3.0 * 128 * 256);
  // The choice is the least estimated time of all options, for any shape and SM count.
  for (int sms : {1, 46, 108, 132, 170})
    for (int M : {1, 31, 512, 1000, 1024, 1536, 2048, 3072, 4096, 4097, 8192})
      for (int N : {1, 64, 512, 1536, 3072, 4095, 8192}) {
        const int c = choose_simt_tile(M, N, sms, fit);
        const double t = simt_estimated_time(M, N, sms, fit[c], kSimtTileOptions[c]);
        for (int i = 0; i < kSimtTileOptionCount; ++i)
          CHECK(t <= simt_estimated_time(M, N, sms, fit[i], kSimtTileOptions[i]));
      }
}
