// Chapter 04's shared-memory layouts, judged by the bank-conflict calculator on the very
// functions the kernels call: the trap is 32-way, its fixes and the best kernel's swizzle are
// conflict-free, and every layout is a permutation.
#include <set>
#include <vector>

#include "04_coalesced/coalesced.cuh"
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
          int split = x0 + swizzle_piece_part<BK, kLanes>(k, p) + swizzle_lane_part<BK, kLanes>(k, lane);
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
