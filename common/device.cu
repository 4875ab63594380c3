#include "device.h"

#include "check.h"

bool cuda_device_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return false;
  // Touch the context: a present but unusable device fails here rather than later.
  return cudaFree(nullptr) == cudaSuccess;
}

int device_compute_capability() {
  int dev = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  return 10 * major + minor;
}

int device_sm_count() {
  static const int n = [] {
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return sms;
  }();
  return n;
}

const DeviceFacts& device_facts() {
  static const DeviceFacts f = [] {
    int dev = 0, sm_clock = 0, mem_clock = 0, bus = 0, l2 = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock, cudaDevAttrClockRate, dev));  // kHz
    CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, dev));  // kHz
    CUDA_CHECK(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev));  // bits
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    // Double data rate: two transfers a memory clock. kHz x bytes = bytes per ms; / 1e3: per us.
    return DeviceFacts{device_sm_count(), sm_clock / 1e3, mem_clock / 1e3, bus,
                       2.0 * mem_clock * bus / 8 / 1e3, size_t(l2)};
  }();
  return f;
}

size_t device_smem_per_block_optin() {
  static const size_t n = [] {
    int dev = 0, bytes = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    return size_t(bytes);
  }();
  return n;
}

void require_smem_per_block(size_t bytes) {
  if (bytes > device_smem_per_block_optin())
    throw KernelNotSupported("needs " + std::to_string(bytes / 1024) + " KiB of shared memory "
                             "per block; this GPU allows " +
                             std::to_string(device_smem_per_block_optin() / 1024) + " KiB");
}

void print_device_report(FILE* f) {
  int dev = 0, driver = 0, runtime = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  const DeviceFacts& d = device_facts();
  std::fprintf(f,
               "GPU %d: %s, sm_%d%d, %d SMs, SM clock %.0f MHz, memory %.1f GiB "
               "(%d-bit, %.0f MHz), L2 %.0f MiB, smem/block %zu KiB (opt-in), "
               "CUDA driver API %d.%d, runtime %d.%d\n",
               dev, p.name, p.major, p.minor, d.sms, d.sm_clock_mhz,
               p.totalGlobalMem / 1073741824.0, d.bus_bits, d.mem_clock_mhz,
               d.l2_bytes / 1048576.0, p.sharedMemPerBlockOptin / 1024, driver / 1000,
               (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10);
}
