// Chapter 09's host tests, on the functions the kernels and the launchers call: each schedule
// (plan_wave and wave_unit; Stream-K's plan_stream_k and sk_unit) computes every K-tile of
// every output tile exactly once, for many shapes and SM counts; the partial tiles' layouts
// cover a tile once, each float where the accumulator map puts it; and the shape rule picks
// sensible tiles and schedules.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "09_every_shape/schedule.cuh"
#include "harness.h"

// --- Step 2: plan_wave and wave_unit ------------------------------------------------------------
namespace {
// Walks every block's work units and checks the schedule: each K-tile of each output tile is
// computed exactly once; the grid fits the SMs; a split tile is one of the first R, cut into
// exactly S non-empty slices, each the first unit of its own block; every other unit is a whole
// tile; and wave_makespan is the busiest block's K-tiles.
bool wave_schedule_is_exact(int tiles, int k_tiles, int sms) {
  const WavePlan p = plan_wave(tiles, k_tiles, sms);
  if (p.grid < 1 || p.grid > sms || p.grid > tiles * p.splits) return false;
  if (p.split_tiles > 0 && (p.splits < 2 || p.splits > k_tiles || p.split_tiles * p.splits > sms))
    return false;
  std::vector<uint8_t> covered(size_t(tiles) * k_tiles, 0);
  std::vector<int> slices(tiles, 0);
  int64_t busiest = 0;
  for (int b = 0; b < p.grid; ++b) {
    int64_t mine = 0;
    for (int j = 0;; ++j) {
      const WorkUnit u = wave_unit(p, b, j);
      if (u.tile < 0) break;
      if (u.tile >= tiles || u.k_begin < 0 || u.k_end > k_tiles || u.k_begin >= u.k_end)
        return false;
      const bool split = u.tile < p.split_tiles;
      if (split != (u.slice >= 0)) return false;
      if (split && (j != 0 || u.slice >= p.splits)) return false;
      if (!split && (u.k_begin != 0 || u.k_end != k_tiles || u.k_step != 1)) return false;
      if (split && u.k_step != p.splits) return false;
      if (split) ++slices[u.tile];
      for (int k = u.k_begin; k < u.k_end; k += u.k_step)
        if (covered[size_t(u.tile) * k_tiles + k]++) return false;
      mine += unit_k_tiles(u);
    }
    busiest = std::max(busiest, mine);
  }
  for (uint8_t c : covered)
    if (c != 1) return false;
  for (int t = 0; t < p.split_tiles; ++t)
    if (slices[t] != p.splits) return false;
  return busiest == wave_makespan(p);
}
}  // namespace

TEST(schedule, wave_schedule_covers_every_k_tile_once) {
  std::vector<int> tiles_list;
  for (int t = 1; t <= 40; ++t) tiles_list.push_back(t);
  for (int t : {64, 65, 100, 131, 132, 133, 144, 200, 263, 264, 265, 288, 512, 1152, 2048})
    tiles_list.push_back(t);
  int checked = 0;
  for (int sms : {1, 2, 3, 7, 78, 108, 114, 132, 144})
    for (int tiles : tiles_list)
      for (int k_tiles : {1, 2, 3, 5, 8, 24, 64, 1024}) {
        const bool ok = wave_schedule_is_exact(tiles, k_tiles, sms);
        if (!ok) std::printf("  tiles %d, K-tiles %d, SMs %d\n", tiles, k_tiles, sms);
        CHECK(ok);
        ++checked;
      }
  CHECK_EQ(checked, 9 * 55 * 8);
}

// wave_plan_problem, which the exercise runs on the reader's plan before launching it: silent
// on every plan of plan_wave, and one line on each way a plan can go wrong.
TEST(schedule, wave_plan_problem_names_what_is_wrong) {
  for (int tiles : {1, 2, 24, 131, 132, 133, 288, 1000})
    for (int k_tiles : {1, 3, 64, 2048})
      for (int sms : {1, 114, 132})
        CHECK(wave_plan_problem(plan_wave(tiles, k_tiles, sms), tiles, k_tiles, sms).empty());
  const auto says = [](WavePlan p, int tiles, int k_tiles, const char* what) {
    const std::string why = wave_plan_problem(p, tiles, k_tiles, 132);
    if (why.find(what) == std::string::npos) std::printf("  said \"%s\"\n", why.c_str());
    return why.find(what) != std::string::npos;
  };
  WavePlan p = plan_wave(1, 3, 132);  // one tile, 3 K-tiles: 3 slices
  p.splits = 132;                     // uncapped by the K-tiles: slices with nothing to do
  p.grid = 132;
  CHECK(says(p, 1, 3, "has no K-tile"));
  p = plan_wave(288, 48, 132);
  p.grid = 133;
  CHECK(says(p, 288, 48, "cooperative launch"));
  p = plan_wave(288, 48, 132);
  p.split_tiles = 0;  // the last wave's 24 tiles no longer split, but the grid still 132
  p.splits = 1;
  CHECK(wave_plan_problem(p, 288, 48, 132).empty());  // correct: whole tiles, just slower
  p = plan_wave(288, 48, 132);
  p.split_tiles = 27;  // 27 tiles x 5 slices: 135 blocks, more than the grid's 132
  CHECK(says(p, 288, 48, "do not fit"));
  p = plan_wave(8, 1024, 132);
  p.splits = 15;  // another sound plan: 8 tiles x 15 slices, every 15th K-tile each
  CHECK(wave_plan_problem(p, 8, 1024, 132).empty());
  p.tiles = 7;  // a plan for another shape
  CHECK(says(p, 8, 1024, "the plan is for"));
}

TEST(schedule, wave_plans_of_the_readme) {
  // 3072^3, 128 x 256: 288 tiles = 2 waves + 24; 24 tiles x 5 slices; 48 K-tiles a tile.
  WavePlan p = plan_wave(288, 48, 132);
  CHECK(p.split_tiles == 24 && p.splits == 5 && p.grid == 132);
  CHECK_EQ(wave_makespan(p), int64_t(2 * 48 + 10));
  // 4096^3: 512 tiles, 116 in the last wave: 132 / 116 = 1 slice, nothing split.
  p = plan_wave(512, 64, 132);
  CHECK(p.split_tiles == 0 && p.splits == 1 && p.grid == 132);
  CHECK_EQ(wave_makespan(p), int64_t(4 * 64));
  // 256 x 256 x 65536: 2 tiles of 1024 K-tiles, 66 slices each.
  p = plan_wave(2, 1024, 132);
  CHECK(p.split_tiles == 2 && p.splits == 66 && p.grid == 132);
  // K = 64 (one K-tile): nothing to split.
  p = plan_wave(8, 1, 132);
  CHECK(p.split_tiles == 0 && p.grid == 8);
  // 512^3 at 128 x 128: 16 tiles, S = min(132 / 16, 8 K-tiles) = 8.
  p = plan_wave(16, 8, 132);
  CHECK(p.split_tiles == 16 && p.splits == 8 && p.grid == 128);
}

// --- The shape rule ------------------------------------------------------------------------------
namespace {
// Four Hopper GPUs as the rule sees them: 132 SMs at 1980 MHz (H100 SXM, H200) and 114 SMs at
// 1755 MHz (H100 PCIe), each at two DRAM bandwidths (the theoretical peaks of 5120-bit HBM3 at
// 2619 MHz, 6016-bit HBM3e at 3201 MHz, 5120-bit HBM2e at 1593 MHz).
constexpr HopperGpu kGpus[] = {
    {132, 1980, 3.352e6}, {132, 1980, 4.814e6}, {114, 1755, 2.039e6}, {114, 1755, 3.352e6}};

}  // namespace

TEST(schedule, shape_rule_on_four_gpus) {
  struct Shape {
    int M, N, K;
  };
  for (const HopperGpu& g : kGpus) {
    // Large squares: the largest tile, whole.
    for (int n : {6144, 8192}) {
      const HopperChoice h = choose_hopper(n, n, n, g);
      CHECK(kMenu[h.tile].BM == 128 && kMenu[h.tile].BN >= 192);
    }
    // Enough work for a wave or more: the pick leaves at most a quarter of the SMs' time idle
    // (every K-tile of every tile, over the SMs times the busiest block's K-tiles), and is
    // predicted no slower than chapter 08's one tile (128 x 256, whole).
    for (Shape s : {Shape{1536, 1536, 1536}, Shape{2048, 2048, 2048}, Shape{3072, 3072, 3072},
                    Shape{4096, 4096, 4096}, Shape{5120, 5120, 5120}, Shape{4097, 4095, 4093}}) {
      const HopperChoice h = choose_hopper(s.M, s.N, s.K, g);
      const MenuEntry& t = kMenu[h.tile];
      const int tiles = ((s.M + t.BM - 1) / t.BM) * ((s.N + t.BN - 1) / t.BN);
      const int k_tiles = (s.K + 63) / 64;
      const WavePlan p =
          plan_wave(tiles, k_tiles, g.sms, h.schedule == Schedule::kWhole ? 1 : 1 << 30);
      const double busy = double(tiles) * k_tiles / (double(g.sms) * wave_makespan(p));
      if (busy < 0.75) std::printf("  %d SMs, %dx%dx%d: busy %.2f\n", g.sms, s.M, s.N, s.K, busy);
      CHECK(busy >= 0.75);
      CHECK(hopper_cost(s.M, s.N, s.K, g, t, h.schedule) <=
            hopper_cost(s.M, s.N, s.K, g, kMenu[0], Schedule::kWhole));
    }
    // Long K and few tiles: the last wave split, at least 90 % of the SMs at work.
    for (Shape s : {Shape{128, 128, 131072}, Shape{256, 256, 65536}, Shape{512, 512, 16384}}) {
      const HopperChoice h = choose_hopper(s.M, s.N, s.K, g);
      const MenuEntry& t = kMenu[h.tile];
      const WavePlan p =
          plan_wave(((s.M + t.BM - 1) / t.BM) * ((s.N + t.BN - 1) / t.BN), (s.K + 63) / 64, g.sms);
      CHECK(h.schedule == Schedule::kSplitWave);
      CHECK(p.grid >= 0.9 * g.sms);
    }
    // The candidates: the pick first, at most kTuneMax, each on the menu with a schedule that
    // exists for its tile, none predicted beyond kTuneWithin of the pick.
    for (Shape s : {Shape{512, 512, 512}, Shape{3072, 3072, 3072}, Shape{32, 4096, 4096}}) {
      HopperChoice c[kTuneMax] = {};
      const int n = hopper_candidates(s.M, s.N, s.K, g, c);
      CHECK(n >= 1 && n <= kTuneMax);
      const double best = hopper_cost(s.M, s.N, s.K, g, kMenu[c[0].tile], c[0].schedule);
      for (int i = 0; i < n; ++i) {
        const double cost = hopper_cost(s.M, s.N, s.K, g, kMenu[c[i].tile], c[i].schedule);
        CHECK(cost < 1e300 && cost >= best && cost <= kTuneWithin * best);
      }
    }
  }
  // The SM count matters: 1536^3 is 132 tiles of 128 x 144, one wave on 132 SMs; on 114 SMs
  // that tile would leave 18 tiles for a second wave, and the rule takes another.
  CHECK(kMenu[choose_hopper(1536, 1536, 1536, kGpus[0]).tile].BN == 144);
  CHECK(kMenu[choose_hopper(1536, 1536, 1536, kGpus[2]).tile].BN != 144);
  // There 128 x 256 tiles fill 0.55 of a wave: the pick is predicted faster on both.
  for (const HopperGpu& g : {kGpus[0], kGpus[2]}) {
    const HopperChoice h = choose_hopper(1536, 1536, 1536, g);
    CHECK(hopper_cost(1536, 1536, 1536, g, kMenu[h.tile], h.schedule) <
          hopper_cost(1536, 1536, 1536, g, kMenu[0], Schedule::kWhole));
  }
  // The bandwidth matters where the DRAM bounds the time, and only there: 64 x 16384 x 16384
  // (537 MB read for 34 GFLOP) is predicted faster at 4.8 TB/s than at 3.35 by the ratio of the
  // bandwidths; 8192^3 the same at both.
  const auto cost_of = [](int M, int N, int K, const HopperGpu& g) {
    const HopperChoice h = choose_hopper(M, N, K, g);
    return hopper_cost(M, N, K, g, kMenu[h.tile], h.schedule);
  };
  const double ratio = cost_of(64, 16384, 16384, kGpus[0]) / cost_of(64, 16384, 16384, kGpus[1]);
  const double bandwidths = kGpus[1].dram_bytes_per_us / kGpus[0].dram_bytes_per_us;
  CHECK(ratio > 0.99 * bandwidths && ratio < 1.01 * bandwidths);
  CHECK_EQ(cost_of(8192, 8192, 8192, kGpus[0]), cost_of(8192, 8192, 8192, kGpus[1]));
  // Whatever the shape and the GPU, the pick is on the menu (the tiles launch_choice
  // instantiates), with a schedule that exists for that tile, and no costlier than any other pair.
  for (int M : {1, 64, 128, 129, 1000, 4096})
    for (int N : {1, 128, 255, 256, 3000, 8192})
      for (int K : {1, 64, 100, 4096, 1 << 17})
        for (HopperGpu g :
             {HopperGpu{1, 1980, 3e6}, HopperGpu{78, 1500, 1e6}, kGpus[0], kGpus[2]}) {
          const HopperChoice h = choose_hopper(M, N, K, g);
          CHECK(h.tile >= 0 && h.tile < kMenuSize);
          if (h.tile < 0 || h.tile >= kMenuSize) continue;
          const double cost = hopper_cost(M, N, K, g, kMenu[h.tile], h.schedule);
          CHECK(cost < 1e300);
          for (const MenuEntry& t : kMenu)
            for (Schedule s : {Schedule::kWhole, Schedule::kSplitWave})
              CHECK(cost <= hopper_cost(M, N, K, g, t, s));
        }
}

TEST(schedule, partial_tile_layout) {
  // PartialVec: the float4 of the workspace cover the (128, BN) tile once, each float where
  // the accumulator map puts the register it came from.
  for (int BN : {128, 256}) {
    std::vector<int> seen(128 * BN, 0);
    for (int q = 0; q < 128 * BN / 4; ++q) {
      const int row = PartialVec::row(q), col = PartialVec::col(q);
      const int c = q % 256, i = q / 256;
      for (int f = 0; f < 4; ++f) {
        const int r = 64 * (c / 128) + WgmmaAcc::row(c % 128, 4 * i + f);
        const int k = WgmmaAcc::col(c % 128, 4 * i + f);
        CHECK_EQ(r, row + 8 * (f / 2));
        CHECK_EQ(k, col + f % 2);
        CHECK(r < 128 && k < BN);
        if (r < 128 && k < BN) ++seen[r * BN + k];
      }
      // What the kernel's store relies on: float4 256 i + c is float4 c, 8 i columns right.
      CHECK_EQ(row, PartialVec::row(c));
      CHECK_EQ(col, PartialVec::col(c) + 8 * i);
    }
    for (int n : seen) CHECK_EQ(n, 1);
  }
}

namespace {
// MenuTile<BM, BN>: the float4 of a partial tile cover the (BM, BN) tile once, each float where
// the accumulator map of its warpgroup (rows row0, columns col0 on) puts the register it came
// from; and float4 256 i + c is float4 c, 8 i columns right (what the kernel's store relies on).
template <int BM, int BN>
void check_menu_tile() {
  using T = MenuTile<BM, BN>;
  std::vector<int> seen(BM * BN, 0);
  for (int q = 0; q < BM * BN / 4; ++q) {
    const int row = T::vec_row(q), col = T::vec_col(q);
    const int c = q % 256, i = q / 256, g = c / 128;
    for (int f = 0; f < 4; ++f) {
      const int r = T::row0(g) + WgmmaAcc::row(c % 128, 4 * i + f);
      const int k = T::col0(g) + WgmmaAcc::col(c % 128, 4 * i + f);
      CHECK_EQ(r, row + 8 * (f / 2));
      CHECK_EQ(k, col + f % 2);
      CHECK(r < BM && k < BN);
      if (r < BM && k < BN) ++seen[r * BN + k];
    }
    CHECK_EQ(row, T::vec_row(c));
    CHECK_EQ(col, T::vec_col(c) + 8 * i);
  }
  for (int n : seen) CHECK_EQ(n, 1);
}
}  // namespace

TEST(schedule, menu_tile_layout) {
  check_menu_tile<128, 256>();
  check_menu_tile<128, 192>();
  check_menu_tile<128, 144>();
  check_menu_tile<64, 128>();
  check_menu_tile<64, 64>();
  // At BM = 128 the map is step 2's PartialVec.
  using Step2 = MenuTile<128, 256>;
  for (int q = 0; q < 128 * 256 / 4; ++q) {
    CHECK_EQ(Step2::vec_row(q), PartialVec::row(q));
    CHECK_EQ(Step2::vec_col(q), PartialVec::col(q));
  }
}

// Step 5's OneWgVec: the float4 of a partial (64, BN) tile cover it once, each float where the
// accumulator map of the one consumer warpgroup puts the register it came from; and float4
// 128 i + t is float4 t, 8 i columns right.
template <int BN>
void check_one_wg_vec() {
  std::vector<int> seen(64 * BN, 0);
  for (int q = 0; q < 64 * BN / 4; ++q) {
    const int row = OneWgVec::row(q), col = OneWgVec::col(q);
    const int t = q % 128, i = q / 128;
    for (int f = 0; f < 4; ++f) {
      const int r = WgmmaAcc::row(t, 4 * i + f), k = WgmmaAcc::col(t, 4 * i + f);
      CHECK_EQ(r, row + 8 * (f / 2));
      CHECK_EQ(k, col + f % 2);
      CHECK(r < 64 && k < BN);
      if (r < 64 && k < BN) ++seen[r * BN + k];
    }
    CHECK_EQ(row, OneWgVec::row(t));
    CHECK_EQ(col, OneWgVec::col(t) + 8 * i);
  }
  for (int n : seen) CHECK_EQ(n, 1);
}

TEST(schedule, one_wg_partial_layout) {
  check_one_wg_vec<128>();
  check_one_wg_vec<64>();
}

// --- The experiment: plan_stream_k and sk_unit
// -----------------------------------------------------------
namespace {
// Every K-tile of every tile once; a block's later part (slice = b) only as its first unit;
// whole tiles in between; sk_block_of is the block whose range holds a K-tile; and the owner of
// a cut tile (its part starts at k = 0) finds the later parts in blocks owner + 1 .. last.
bool stream_k_schedule_is_exact(int tiles, int k_tiles, int sms) {
  const StreamKPlan p = plan_stream_k(tiles, k_tiles, sms);
  if (p.grid < 1 || p.grid > sms || p.total != int64_t(tiles) * k_tiles) return false;
  std::vector<uint8_t> covered(size_t(tiles) * k_tiles, 0);
  std::vector<int> first_part_block(tiles, -1);
  std::vector<std::vector<int>> later_part_blocks(tiles);
  for (int b = 0; b < p.grid; ++b)
    for (int j = 0;; ++j) {
      const WorkUnit u = sk_unit(p, b, j);
      if (u.tile < 0) break;
      if (u.tile >= tiles || u.k_begin < 0 || u.k_end > k_tiles || u.k_begin >= u.k_end)
        return false;
      if ((u.k_begin > 0) != (u.slice >= 0)) return false;
      if (u.slice >= 0 && (j != 0 || u.slice != b)) return false;
      if (u.k_begin == 0)
        first_part_block[u.tile] = b;
      else
        later_part_blocks[u.tile].push_back(b);
      for (int k = u.k_begin; k < u.k_end; ++k) {
        const int64_t x = int64_t(u.tile) * k_tiles + k;
        if (covered[size_t(x)]++ || sk_block_of(p, x) != b) return false;
      }
    }
  for (uint8_t c : covered)
    if (c != 1) return false;
  for (int t = 0; t < tiles; ++t) {
    const int owner = first_part_block[t];
    const int last = sk_block_of(p, int64_t(t) * k_tiles + k_tiles - 1);
    if (int(later_part_blocks[t].size()) != last - owner) return false;
    for (int i = 0; i < last - owner; ++i)
      if (later_part_blocks[t][i] != owner + 1 + i) return false;
  }
  return true;
}
}  // namespace

TEST(schedule, stream_k_schedule_covers_every_k_tile_once) {
  int checked = 0;
  for (int sms : {1, 2, 3, 7, 78, 114, 132})
    for (int tiles : {1, 2, 3, 5, 8, 16, 31, 72, 131, 132, 133, 144, 288, 512})
      for (int k_tiles : {1, 2, 3, 5, 8, 24, 48, 1024}) {
        const bool ok = stream_k_schedule_is_exact(tiles, k_tiles, sms);
        if (!ok) std::printf("  tiles %d, K-tiles %d, SMs %d\n", tiles, k_tiles, sms);
        CHECK(ok);
        ++checked;
      }
  CHECK_EQ(checked, 7 * 14 * 8);
  // 1536^3 at 128 x 256: 72 tiles x 24 K-tiles = 1728 over 132 blocks, 13 or 14 each.
  const StreamKPlan p = plan_stream_k(72, 24, 132);
  CHECK(p.grid == 132 && sk_begin(p, 1) == 13 && sk_begin(p, 132) == 1728);
}
