// Which GPU the numbers come from.
#pragma once

#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>

// A launcher that cannot run on this GPU throws KernelNotSupported: the program reports the
// kernel as skipped, with the reason, and goes on with the others (run_chapter). A chapter's
// other steps still run on that GPU.
struct KernelNotSupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// True when a CUDA device is present and usable (the programs exit 77 otherwise).
bool cuda_device_available();

// 10 * major + minor of the current device, e.g. 90 for an H100.
int device_compute_capability();

// Streaming multiprocessors of the current device, read once (launchers size grids with it).
int device_sm_count();

// The current device's SMs, clocks, memory bus and L2, read once: the device report prints them,
// the timer sizes its flush by the L2, and chapter 09's shape rule reads the SMs, the SM clock
// and the DRAM's theoretical bandwidth (2 transfers a memory clock x the bus width).
struct DeviceFacts {
  int sms;
  double sm_clock_mhz;
  double mem_clock_mhz;
  int bus_bits;
  double dram_bytes_per_us;
  size_t l2_bytes;
};
const DeviceFacts& device_facts();

// Shared memory one block may have on the current device, opting in (cudaFuncSetAttribute),
// read once: 227 KiB on the H100, 163 KiB on the A100, 99 KiB on sm_86 and sm_89.
size_t device_smem_per_block_optin();
// Throws KernelNotSupported unless a block of `bytes` of shared memory fits on this GPU.
void require_smem_per_block(size_t bytes);

// Prints GPU name, compute capability, SMs, clocks, memory, L2, driver and runtime versions.
void print_device_report(FILE* f);
