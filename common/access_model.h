// Two small models of a warp's memory access, so an index function can be judged before it
// is profiled: global-memory sectors per warp instruction, and shared-memory wavefronts
// (the bank-conflict calculator).
//
// Global memory moves 32-byte sectors: a warp instruction costs one transaction per
// distinct sector its threads touch. 32 threads reading consecutive floats touch 4 sectors;
// 32 threads reading floats K apart (K >= 8) touch 32.
//
// Shared memory (NVIDIA GPUs since Maxwell) has 32 banks, each 4 bytes wide; successive 4-byte
// words go to successive banks (bank = (byte_address / 4) % 32). A warp's request is served in
// *wavefronts*: in one wavefront every bank delivers one word, and threads that read the same
// word share it (broadcast). A phase of the request needs as many wavefronts as its busiest
// bank has distinct words. The rules, with their sources:
//
//   4-byte accesses: the whole warp is one phase.
//     [CUDA C++ Programming Guide, "Compute Capability 5.x", Shared Memory: 32 banks, a
//     request does not conflict between threads that access the same 32-bit word.]
//   16-byte accesses (LDS.128, STS.128): shared memory returns 128 bytes a cycle, one 4-byte
//     register for each of 32 threads, so a 128-bit access takes at least 4 wavefronts, one per
//     register: the warp is served in 4 phases of 8 threads (lanes 0-7, 8-15, 16-23, 24-31).
//     For a LOAD whose lanes come in pairs with the same address, (t, t ^ 1) for every active
//     lane or (t, t ^ 2) for every active lane (a broadcast to the whole warp is both), the
//     returned registers are packed two to a wavefront: 2 phases of 16 threads.
//     [NVIDIA's answer in the NVIDIA developer forum thread "Unexpected shared memory bank
//     conflict" (2019, for compute capability 7.x): "LDS.128 requires 4 requests per
//     instruction as it returns 4 registers. If the guidelines are met the requests/instruction
//     should reduce from 4 to 2"; the phases of 8 threads: GTC 2019, S9593 (cuTENSOR),
//     "shared memory access in 128 bits".]
//   8-byte accesses (LDS.64, STS.64): the same rule for 2 registers: 2 phases of 16 threads,
//     or for a load with paired lanes 1 phase of 32. (Inferred from the rule above, not stated
//     in those sources; docs/results/<gpu>/ checks it against Nsight Compute where a kernel of
//     the tutorial issues such an access.)
//
// Nsight Compute counts wavefronts (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/_st) and
// bank conflicts (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/_st): the conflicts are
// the wavefronts an instruction takes beyond its phases (shared_conflicts below), so a
// conflict-free LDS.128 takes 4 wavefronts and 0 conflicts. docs/measuring.md checks this
// definition on the recorded counters.
//
//   uint32_t addr[32];
//   for (int lane = 0; lane < 32; ++lane) addr[lane] = 4 * (lane * 32);  // column of a 32x32 tile
//   shared_wavefronts(addr, 32, 4) == 32                                  // 32-way conflict
#pragma once

#include <cstdint>

enum class SmemOp { kLoad, kStore };

// byte_addr: the byte offsets into shared memory of the threads of one warp, in lane order
// (n_threads <= 32; position i is lane i). access_bytes: 4, 8 or 16.
int shared_wavefronts(const uint32_t* byte_addr, int n_threads, int access_bytes = 4,
                      SmemOp op = SmemOp::kLoad);

// The phases of that access (the rules above): the wavefronts it takes without bank conflicts.
int shared_phases(const uint32_t* byte_addr, int n_threads, int access_bytes = 4,
                  SmemOp op = SmemOp::kLoad);

// What Nsight Compute's bank-conflict counter counts for that access: wavefronts - phases.
inline int shared_conflicts(const uint32_t* byte_addr, int n_threads, int access_bytes = 4,
                            SmemOp op = SmemOp::kLoad) {
  return shared_wavefronts(byte_addr, n_threads, access_bytes, op) -
         shared_phases(byte_addr, n_threads, access_bytes, op);
}

// True where every active lane t has the address of lane t ^ 1, or every one that of t ^ 2: a
// 64- or 128-bit load then returns two lanes' registers in one wavefront.
bool lanes_pair_up(const uint32_t* byte_addr, int n_threads);

// ldmatrix.x1/.x2/.x4 reads n_matrices (8, 8) matrices of 16-bit values; lane l gives the
// address of row l % 8 of matrix l / 8, a 16-byte row. Each matrix is one phase: its 8 rows,
// 128 bytes, take one wavefront if they fall in 8 different groups of 4 banks. (The phases of
// 8 rows of 16 bytes above; ldmatrix returns a different register to every lane, so no pairs.)
int ldmatrix_wavefronts(const uint32_t* row_addr, int n_matrices);

// The fewest wavefronts a warp access of n_threads distinct addresses takes: one per 128 bytes.
int ideal_wavefronts(int n_threads, int access_bytes = 4);

// Distinct 32-byte sectors touched by one warp instruction (global memory transactions).
int global_sectors(const uint64_t* byte_addr, int n_threads, int access_bytes = 4);
