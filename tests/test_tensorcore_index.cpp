// Chapter 05's index functions, on the very functions the kernels call: the m16n8k16 fragment
// maps cover each element once; ldmatrix, given the kernels' addresses, hands every lane
// exactly its fragment elements; the padded and swizzled tiles are permutations; and the
// bank-conflict calculator (common/access_model.h) counts the wavefronts of the fragment
// reads and of the tile stores.
#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "shared/tensorcore/tensorcore.cuh"
#include "common/access_model.h"
#include "harness.h"

namespace {
using RC = std::pair<int, int>;  // (row, col) or (k, n)

// Element offset -> (r, k) of a tile layout; empty if it is not a permutation into kElems.
template <typename Tile>
std::map<int, RC> inverse(int rows, int bk) {
  std::map<int, RC> inv;
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < bk; ++k) {
      const int o = Tile::offset(r, k);
      if (o < 0 || o >= Tile::kElems || inv.count(o)) return {};
      inv[o] = {r, k};
    }
  return inv;
}

// ldmatrix.x4 simulated on a tile: lanes give row addresses (element offsets); returns what
// lane t receives in register j, half h, as the tile's (r, k).
std::vector<RC> simulate_ldmatrix(const std::map<int, RC>& inv, const int (&row_off)[32], int t,
                                  int j) {
  std::vector<RC> got;
  const int row = row_off[8 * j + Ldmatrix::recv_row(t)];  // the row lane 8j + t/4 pointed at
  for (int h = 0; h < 2; ++h) {
    auto it = inv.find(row + Ldmatrix::recv_col(t) + h);  // a row is 8 contiguous elements
    got.push_back(it == inv.end() ? RC{-1, -1} : it->second);
  }
  return got;
}

template <typename Cfg, TileLayout L>
void check_ldmatrix_delivers_fragments() {
  using ATile = SmemTile<Cfg::BM, Cfg::BK, L>;
  using BTile = SmemTile<Cfg::BN, Cfg::BK, L>;
  const auto a_inv = inverse<ATile>(Cfg::BM, Cfg::BK);
  const auto b_inv = inverse<BTile>(Cfg::BN, Cfg::BK);
  CHECK(!a_inv.empty() && !b_inv.empty());
  for (int warp = 0; warp < Cfg::kThreads / 32; ++warp) {
    const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
    for (int s = 0; s < Cfg::BK / 16; ++s) {
      for (int i = 0; i < Cfg::kMI; ++i) {  // A fragment i, as the kernel addresses it
        int off[32];
        for (int l = 0; l < 32; ++l)
          off[l] = ATile::offset(wm + Ldmatrix::a_row(l), 16 * s + Ldmatrix::a_col(l)) +
                   16 * i * ATile::kRowElems;
        for (int t = 0; t < 32; ++t)
          for (int j = 0; j < 4; ++j) {
            const auto got = simulate_ldmatrix(a_inv, off, t, j);
            for (int h = 0; h < 2; ++h)
              CHECK(got[h] == RC(wm + 16 * i + Mma16816::a_row(t, j),
                                 16 * s + Mma16816::a_col(t, j, h)));
          }
      }
      for (int j2 = 0; j2 < Cfg::kNI; j2 += 2) {  // B fragments of n-tiles j2, j2 + 1
        int off[32];
        for (int l = 0; l < 32; ++l)
          off[l] = BTile::offset(wn + Ldmatrix::b_row(l), 16 * s + Ldmatrix::b_col(l)) +
                   8 * j2 * BTile::kRowElems;
        for (int t = 0; t < 32; ++t)
          for (int j = 0; j < 4; ++j) {
            const auto got = simulate_ldmatrix(b_inv, off, t, j);
            const int ntile = j2 + j / 2, reg = j % 2;
            for (int h = 0; h < 2; ++h)
              CHECK(got[h] == RC(wn + 8 * ntile + Mma16816::b_n(t),
                                 16 * s + Mma16816::b_k(t, reg, h)));
          }
      }
    }
  }
}

// Worst wavefronts of the kernel's ldmatrix.x4 reads of A and of Bᵀ, over warps, k steps and
// fragments (shared byte address = 2 * element offset; both tiles start 128-byte aligned).
template <typename Cfg, TileLayout L>
int ldmatrix_worst() {
  using ATile = SmemTile<Cfg::BM, Cfg::BK, L>;
  using BTile = SmemTile<Cfg::BN, Cfg::BK, L>;
  int worst = 0;
  for (int warp = 0; warp < Cfg::kThreads / 32; ++warp) {
    const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
    for (int s = 0; s < Cfg::BK / 16; ++s) {
      uint32_t a[32], b[32];
      for (int l = 0; l < 32; ++l) {
        a[l] = 2 * ATile::offset(wm + Ldmatrix::a_row(l), 16 * s + Ldmatrix::a_col(l));
        b[l] = 2 * BTile::offset(wn + Ldmatrix::b_row(l), 16 * s + Ldmatrix::b_col(l));
      }
      worst = std::max({worst, ldmatrix_wavefronts(a, 4), ldmatrix_wavefronts(b, 4)});
    }
  }
  return worst;
}

// Worst wavefronts of the plain-LDS step's 32-bit fragment reads (mma_lds).
template <typename Cfg, TileLayout L>
int lds_worst() {
  using ATile = SmemTile<Cfg::BM, Cfg::BK, L>;
  using BTile = SmemTile<Cfg::BN, Cfg::BK, L>;
  int worst = 0;
  for (int warp = 0; warp < Cfg::kThreads / 32; ++warp) {
    const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
    for (int s = 0; s < Cfg::BK / 16; ++s) {
      for (int r = 0; r < 4; ++r) {
        uint32_t a[32];
        for (int l = 0; l < 32; ++l)
          a[l] = 2 * ATile::offset(wm + Mma16816::a_row(l, r), 16 * s + Mma16816::a_col(l, r, 0));
        worst = std::max(worst, shared_wavefronts(a, 32));
      }
      for (int r = 0; r < 2; ++r) {
        uint32_t b[32];
        for (int l = 0; l < 32; ++l)
          b[l] = 2 * BTile::offset(wn + Mma16816::b_n(l), 16 * s + Mma16816::b_k(l, r, 0));
        worst = std::max(worst, shared_wavefronts(b, 32));
      }
    }
  }
  return worst;
}

// Worst wavefronts of the 128-bit stores that fill a (ROWS, BK) tile: warp w's 32 lanes store
// pieces f = 32 w + lane + p * kThreads at (f / (BK / 8), 8 (f % (BK / 8))) (TileLoader::store,
// shared/tensorcore/tile_loader.cuh).
template <int ROWS, int BK, TileLayout L>
int store_worst() {
  int worst = 0;
  for (int f0 = 0; f0 < ROWS * BK / 8; f0 += 32) {
    uint32_t addr[32];
    for (int l = 0; l < 32; ++l) {
      const int f = f0 + l;
      addr[l] = 2 * SmemTile<ROWS, BK, L>::offset(f / (BK / 8), 8 * (f % (BK / 8)));
    }
    worst = std::max(worst, shared_wavefronts(addr, 32, 16));
  }
  return worst;
}

// The kernels add 16 i * kRowElems for fragment i (16 i rows further); true for every row?
template <int ROWS, int BK, TileLayout L>
bool sixteen_rows_are_a_constant_offset() {
  using Tile = SmemTile<ROWS, BK, L>;
  for (int r = 0; r + 16 < ROWS; ++r)
    for (int k = 0; k < BK; ++k)
      if (Tile::offset(r + 16, k) != Tile::offset(r, k) + 16 * Tile::kRowElems) return false;
  return true;
}
}  // namespace

TEST(tensorcore_index, fragments_cover_each_element_once) {
  std::multiset<RC> a, b, c;
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i)
      for (int h = 0; h < 2; ++h) a.insert({Mma16816::a_row(lane, i), Mma16816::a_col(lane, i, h)});
    for (int i = 0; i < 2; ++i)
      for (int h = 0; h < 2; ++h) b.insert({Mma16816::b_k(lane, i, h), Mma16816::b_n(lane)});
    for (int i = 0; i < 4; ++i) c.insert({Mma16816::c_row(lane, i), Mma16816::c_col(lane, i)});
  }
  auto covers = [](const std::multiset<RC>& s, int rows, int cols) {
    if (s.size() != size_t(rows) * cols) return false;
    for (int r = 0; r < rows; ++r)
      for (int col = 0; col < cols; ++col)
        if (s.count({r, col}) != 1) return false;
    return true;
  };
  CHECK(covers(a, 16, 16));  // A: (16 m, 16 k)
  CHECK(covers(b, 16, 8));   // B: (16 k, 8 n)
  CHECK(covers(c, 16, 8));   // C: (16 m, 8 n)
}

TEST(tensorcore_index, tiles_are_permutations) {
  CHECK(!(inverse<SmemTile<128, 32, TileLayout::kPadded>>(128, 32).empty()));
  CHECK(!(inverse<SmemTile<128, 32, TileLayout::kSwizzled>>(128, 32).empty()));
  CHECK(!(inverse<SmemTile<256, 64, TileLayout::kSwizzled>>(256, 64).empty()));
  CHECK((sixteen_rows_are_a_constant_offset<128, 32, TileLayout::kPadded>()));
  CHECK((sixteen_rows_are_a_constant_offset<128, 32, TileLayout::kSwizzled>()));
  CHECK((sixteen_rows_are_a_constant_offset<128, 64, TileLayout::kSwizzled>()));
  CHECK((sixteen_rows_are_a_constant_offset<256, 64, TileLayout::kSwizzled>()));
}

TEST(tensorcore_index, ldmatrix_delivers_the_fragments) {
  check_ldmatrix_delivers_fragments<MmaStep, TileLayout::kPadded>();
  check_ldmatrix_delivers_fragments<MmaStep, TileLayout::kSwizzled>();
  check_ldmatrix_delivers_fragments<MmaBest, TileLayout::kSwizzled>();
  check_ldmatrix_delivers_fragments<MmaConfig<128, 256, 64, 64, 64, 1>, TileLayout::kSwizzled>();
}

// The chapter's bank-conflict table (README): ideal is 1 wavefront per LDS.32, 4 per
// ldmatrix.x4 and 4 per warp of 128-bit stores.
TEST(tensorcore_index, bank_conflicts) {
  CHECK_EQ((lds_worst<MmaStep, TileLayout::kPadded>()), 1);
  CHECK_EQ((ldmatrix_worst<MmaStep, TileLayout::kPadded>()), 4);
  CHECK_EQ((ldmatrix_worst<MmaStep, TileLayout::kSwizzled>()), 4);
  CHECK_EQ((ldmatrix_worst<MmaConfig<128, 256, 64, 64, 64, 1>, TileLayout::kSwizzled>()), 4);
  // The padded tile's 80-byte rows: 8 lanes' stores cover 2 rows, 160 bytes: 2-way conflicts.
  CHECK_EQ((store_worst<128, 32, TileLayout::kPadded>()), 8);
  CHECK_EQ((store_worst<128, 32, TileLayout::kSwizzled>()), 4);
  CHECK_EQ((store_worst<128, 64, TileLayout::kSwizzled>()), 4);
  // Without padding or swizzle, rows of 64 bytes: ldmatrix's 8 rows fall in 2 bank groups.
  uint32_t plain[32];
  for (int l = 0; l < 32; ++l) plain[l] = 2 * (Ldmatrix::a_row(l) * 32 + Ldmatrix::a_col(l));
  CHECK_EQ(ldmatrix_wavefronts(plain, 4), 16);
}
