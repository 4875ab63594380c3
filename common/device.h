// Which GPU the numbers come from.
#pragma once

#include <cstdio>

// True when a CUDA device is present and usable (the programs exit 77 otherwise).
bool cuda_device_available();

// 10 * major + minor of the current device, e.g. 90 for an H100.
int device_compute_capability();

// Streaming multiprocessors of the current device, read once (launchers size grids with it).
int device_sm_count();

// Prints GPU name, compute capability, SMs, clocks, memory, L2, driver and runtime versions.
void print_device_report(FILE* f);
