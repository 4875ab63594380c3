// The exercise's bounded barrier waits, its half outside hopper_ptx.cuh (HOPPER_BOUNDED_WAITS):
// which barrier of ex_consumer_barriers_kernel's ring a shared address is (from the layout the
// kernel lays out: S stages from the 1024-byte aligned base, then S full barriers, then S
// empty ones, 8 bytes each), and the host memory where a timed-out wait leaves its report,
// printed in one line as the program exits:
//
//   mbarrier wait timed out: full barrier, stage 2, phase parity 1, block 5 warp 4 (...)
//
// The exercise's launcher calls arm_bounded_waits() once. Not the reader's to edit.
#pragma once

#ifndef HOPPER_BOUNDED_WAITS
#error "08_hopper/exercises/bounded_wait.cuh: define HOPPER_BOUNDED_WAITS before any include"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "shared/hopper/hopper_device.cuh"
#include "common/check.h"

__device__ __forceinline__ int mbar_describe(uint32_t bar, int* stage) {
  extern __shared__ unsigned char smem_raw[];  // the kernel's dynamic shared memory
  constexpr int S = kWsStages;
  const uint32_t full0 = smem_base_1024(smem_raw) + S * kWsStageBytes, empty0 = full0 + 8 * S;
  if (bar >= full0 && bar < full0 + 8 * S) {
    *stage = static_cast<int>(bar - full0) / 8;
    return 1;
  }
  if (bar >= empty0 && bar < empty0 + 8 * S) {
    *stage = static_cast<int>(bar - empty0) / 8;
    return 2;
  }
  return 0;
}

// Ordinary host memory, registered and mapped: the kernel's report lands there as it runs, and
// it stays readable at exit, after the runtime has let go of it.
inline volatile MbarTimeout* g_mbar_host_report = nullptr;

// At exit (CUDA_CHECK's exit(1) too): the report, if a wait timed out, and exit status 1 even
// where the wrong values happened to pass.
inline void print_mbar_timeout() {
  const volatile MbarTimeout* r = g_mbar_host_report;
  if (!r || !r->set) return;
  static const char* const kNames[] = {"an unknown", "full", "empty"};
  const char* name = kNames[r->barrier >= 0 && r->barrier <= 2 ? r->barrier : 0];
  if (r->early)
    std::fprintf(stderr,
                 "mbarrier re-armed before its phase completed: %s barrier, stage %d, phase "
                 "parity %d, block %d warp %d (a consumer gave the stage back before waiting "
                 "for its copies)\n",
                 name, r->stage, r->parity, r->block, r->warp);
  else
    std::fprintf(stderr,
                 "mbarrier wait timed out: %s barrier, stage %d, phase parity %d, block %d "
                 "warp %d (no such phase came in %.0f s)\n",
                 name, r->stage, r->parity, r->block, r->warp, kMbarWaitLimitNs * 1e-9);
  std::fflush(nullptr);
  std::_Exit(1);
}

inline bool arm_bounded_waits() {
  constexpr size_t kBytes = 4096;  // one page, so that registering it maps nothing else
  void* p = std::aligned_alloc(kBytes, kBytes);
  if (!p) return false;
  std::memset(p, 0, kBytes);
  CUDA_CHECK(cudaHostRegister(p, kBytes, cudaHostRegisterMapped));
  MbarTimeout* dev = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), p, 0));
  CUDA_CHECK(cudaMemcpyToSymbol(g_mbar_report, &dev, sizeof dev));
  g_mbar_host_report = static_cast<MbarTimeout*>(p);
  std::atexit(print_mbar_timeout);  // runs at any exit, CUDA_CHECK's exit(1) included
  return true;
}
