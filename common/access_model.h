// Two small models of a warp's memory access, so an index function can be judged before it
// is profiled: global-memory sectors per warp instruction, and shared-memory wavefronts
// (the bank-conflict calculator).
//
// Global memory moves 32-byte sectors: a warp instruction costs one transaction per
// distinct sector its threads touch. 32 threads reading consecutive floats touch 4 sectors;
// 32 threads reading floats K apart (K >= 8) touch 32.
//
// Shared memory (NVIDIA GPUs since Maxwell) has 32 banks, each 4 bytes wide;
// successive 4-byte words go to successive banks (bank = (byte_address / 4) % 32). A request
// of `access_bytes` per thread is served in phases of 128 bytes: 32 threads per phase for
// 4-byte accesses, 16 for 8-byte, 8 for 16-byte. In a phase, threads that touch different
// words of the same bank are serialised; threads that read the same word share it (broadcast).
// The phase needs as many wavefronts as the busiest bank has distinct words.
//
//   uint32_t addr[32];
//   for (int lane = 0; lane < 32; ++lane) addr[lane] = 4 * (lane * 32);  // column of a 32x32 tile
//   shared_wavefronts(addr, 32, 4) == 32                                  // 32-way conflict
#pragma once

#include <cstdint>

// byte_addr: the byte offsets into shared memory of the threads of one warp, in lane order
// (n_threads <= 32; inactive lanes left out). access_bytes: 4, 8 or 16.
int shared_wavefronts(const uint32_t* byte_addr, int n_threads, int access_bytes = 4);

// ldmatrix.x1/.x2/.x4 reads n_matrices (8, 8) matrices of 16-bit values; lane l gives the
// address of row l % 8 of matrix l / 8, a 16-byte row. Each matrix is one phase: its 8 rows,
// 128 bytes, take one wavefront if they fall in 8 different groups of 4 banks. (The same
// rule as 16-byte accesses above, with the lanes giving row addresses taken in order.)
int ldmatrix_wavefronts(const uint32_t* row_addr, int n_matrices);

// The fewest wavefronts such an access can take: one per 128-byte phase.
int ideal_wavefronts(int n_threads, int access_bytes = 4);

// Distinct 32-byte sectors touched by one warp instruction (global memory transactions).
int global_sectors(const uint64_t* byte_addr, int n_threads, int access_bytes = 4);
