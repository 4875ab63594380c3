// The memory-access models in common/access_model.h, on textbook cases.
#include "common/access_model.h"
#include "harness.h"

TEST(access_model, consecutive_words_take_one_wavefront) {
  uint32_t addr[32];
  for (int i = 0; i < 32; ++i) addr[i] = 4 * i;
  CHECK_EQ(shared_wavefronts(addr, 32), 1);
}

TEST(access_model, column_of_32_wide_tile_is_32_way) {
  uint32_t addr[32];
  for (int i = 0; i < 32; ++i) addr[i] = 4 * (i * 32);
  CHECK_EQ(shared_wavefronts(addr, 32), 32);
  for (int i = 0; i < 32; ++i) addr[i] = 4 * (i * 33);  // padded by one word
  CHECK_EQ(shared_wavefronts(addr, 32), 1);
  for (int i = 0; i < 32; ++i) addr[i] = 4 * (i * 2);   // stride 2: 2-way
  CHECK_EQ(shared_wavefronts(addr, 32), 2);
}

TEST(access_model, same_word_is_broadcast) {
  uint32_t addr[32];
  for (int i = 0; i < 32; ++i) addr[i] = 128;
  CHECK_EQ(shared_wavefronts(addr, 32), 1);
  for (int i = 0; i < 32; ++i) addr[i] = 4 * 32 * (i % 2);  // two words of bank 0
  CHECK_EQ(shared_wavefronts(addr, 32), 2);
}

TEST(access_model, vector_accesses_are_served_in_128_byte_phases) {
  uint32_t addr[32];
  for (int i = 0; i < 32; ++i) addr[i] = 16 * i;  // float4 per thread, contiguous
  CHECK_EQ(shared_wavefronts(addr, 32, 16), 4);    // 4 phases of 8 lanes, one wavefront each
  CHECK_EQ(shared_phases(addr, 32, 16), 4);
  CHECK_EQ(shared_conflicts(addr, 32, 16), 0);     // what ncu reports for it: none
  CHECK_EQ(ideal_wavefronts(32, 16), 4);
  for (int i = 0; i < 32; ++i) addr[i] = 8 * i;   // float2 per thread, contiguous
  CHECK_EQ(shared_wavefronts(addr, 32, 8), 2);
  CHECK_EQ(shared_conflicts(addr, 32, 8), 0);
  // float4, 128 bytes apart: every phase's 8 lanes in banks 0-3, 8 words each: 4 x 8
  for (int i = 0; i < 32; ++i) addr[i] = 16 * (i * 8);
  CHECK_EQ(shared_wavefronts(addr, 32, 16), 32);
  CHECK_EQ(shared_conflicts(addr, 32, 16), 28);
  // Conflicts only within a phase: lanes 8 apart share banks 0-3 but sit in other phases.
  for (int i = 0; i < 32; ++i) addr[i] = 16 * (i % 8) + 4096 * (i / 8);
  CHECK_EQ(shared_wavefronts(addr, 32, 16), 4);
}

// The 128-bit rule's second half: a load whose lanes come in pairs with the same address
// (t and t ^ 1, or t and t ^ 2) gets two lanes' registers per wavefront, 2 phases of 16 lanes.
TEST(access_model, paired_lanes_halve_a_vector_load) {
  uint32_t addr[32];
  for (int i = 0; i < 32; ++i) addr[i] = 256;  // a broadcast: every lane the same float4
  CHECK(lanes_pair_up(addr, 32));
  CHECK_EQ(shared_wavefronts(addr, 32, 16), 2);
  CHECK_EQ(shared_phases(addr, 32, 16), 2);
  CHECK_EQ(shared_conflicts(addr, 32, 16), 0);
  CHECK_EQ(shared_wavefronts(addr, 32, 8), 1);  // 64-bit: one phase of 32 lanes
  CHECK_EQ(shared_wavefronts(addr, 32, 16, SmemOp::kStore), 4);  // stores are not packed
  for (int i = 0; i < 32; ++i) addr[i] = 16 * (i / 2);  // t and t ^ 1 share a float4
  CHECK(lanes_pair_up(addr, 32));
  CHECK_EQ(shared_wavefronts(addr, 32, 16), 2);
  for (int i = 0; i < 32; ++i) addr[i] = 16 * (i % 2 + 2 * (i / 4));  // t and t ^ 2 share
  CHECK(lanes_pair_up(addr, 32));
  CHECK_EQ(shared_wavefronts(addr, 32, 16), 2);
  // Lanes t and t ^ 4 sharing is not a pair: 4 phases of 8 lanes, one wavefront each.
  for (int i = 0; i < 32; ++i) addr[i] = 16 * (i % 4);
  CHECK(!lanes_pair_up(addr, 32));
  CHECK_EQ(shared_wavefronts(addr, 32, 16), 4);
  // Paired lanes whose 16 lanes of a phase need two words of one bank: 2 x 2. Pair p = t / 2
  // reads float4 p % 4 of row p / 4, rows 512 bytes apart: pairs 0-3 and 4-7 share banks 0-15.
  for (int i = 0; i < 32; ++i) addr[i] = 16 * ((i / 2) % 4) + 512 * ((i / 2) / 4);
  CHECK(lanes_pair_up(addr, 32));
  CHECK_EQ(shared_wavefronts(addr, 32, 16), 4);
  CHECK_EQ(shared_conflicts(addr, 32, 16), 2);
}

TEST(access_model, global_sectors) {
  uint64_t addr[32];
  for (int i = 0; i < 32; ++i) addr[i] = 4 * i;
  CHECK_EQ(global_sectors(addr, 32), 4);
  for (int i = 0; i < 32; ++i) addr[i] = 4 * 1024 * i;
  CHECK_EQ(global_sectors(addr, 32), 32);
  for (int i = 0; i < 32; ++i) addr[i] = 16 * i;
  CHECK_EQ(global_sectors(addr, 32, 16), 16);
  for (int i = 0; i < 32; ++i) addr[i] = 4 + 4 * i;  // misaligned by one float: one more sector
  CHECK_EQ(global_sectors(addr, 32), 5);
}

TEST(access_model, ldmatrix_phases) {
  uint32_t addr[32];
  for (int i = 0; i < 32; ++i) addr[i] = 16 * i;  // 32 consecutive 16-byte rows: 4 matrices
  CHECK_EQ(ldmatrix_wavefronts(addr, 4), 4);
  for (int i = 0; i < 32; ++i) addr[i] = 64 * i;  // rows 64 bytes apart: 2 bank groups, 4-way
  CHECK_EQ(ldmatrix_wavefronts(addr, 4), 16);
  for (int i = 0; i < 32; ++i) addr[i] = 128 * i;  // rows 128 bytes apart: one bank group, 8-way
  CHECK_EQ(ldmatrix_wavefronts(addr, 4), 32);
  CHECK_EQ(ldmatrix_wavefronts(addr, 1), 8);
}
