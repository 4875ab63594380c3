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
  CHECK_EQ(shared_wavefronts(addr, 32, 16), 4);
  CHECK_EQ(ideal_wavefronts(32, 16), 4);
  for (int i = 0; i < 32; ++i) addr[i] = 8 * i;   // float2 per thread, contiguous
  CHECK_EQ(shared_wavefronts(addr, 32, 8), 2);
  for (int i = 0; i < 32; ++i) addr[i] = 16 * (i * 8);  // float4, 128 bytes apart: all in banks 0-3
  CHECK_EQ(shared_wavefronts(addr, 32, 16), 32);
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
