// Chapter 08 — Hopper: warpgroup MMA (wgmma) and the Tensor Memory Accelerator (TMA).
//
// New since chapter 07: the tensor-core instruction is issued by a warpgroup (4 warps) and
// reads both operands straight from shared memory, through 64-bit matrix descriptors; a tile
// is copied by one thread's TMA instruction, which completes on an mbarrier; and the block
// splits into a producer warpgroup that only copies and consumer warpgroups that only compute.
//   wgmma_sync  wgmma.mma_async m64n128k16 on a (128, 128) tile, one warpgroup, BK 64, the tiles
//               loaded by every thread (16-byte loads, stores in the 128-byte swizzle)
//   tma         the same, the tiles copied by TMA (cp.async.bulk.tensor.2d) onto an mbarrier
//   tma_pipe    a ring of 4 stages, "full" and "empty" mbarriers, one thread issuing the copies;
//               one tile's wgmma stay in flight while the next tile is awaited (wait_group 1)
//   warp_spec   a producer warpgroup (setmaxnreg 40) and two consumer warpgroups (setmaxnreg
//               232), each m64n256k16 on its half of a (128, 256) tile, 4 stages
//   raster      warp_spec with chapter 07's grouped block order (grouped_tile, G = 8)
//   persistent  one block per SM, each walking its tiles; the producer loads the next tile's
//               stages while the consumers store this one
//   group16     persistent, with groups of 16 tile rows
//   hopper      the chapter's answer: group16 with the epilogue through shared memory, each
//               warp's band of C staged and stored as 16-byte row pieces
//   cluster     (a side step from group16) clusters of 2 blocks on vertically adjacent tiles:
//               each copies half of the shared Bᵀ tile and multicasts it to both
//   tma_ring    (--kernel sweep) tma_pipe with each tile's wgmma waited for (wait_group 0)
// Every M, N, K >= 1: TMA zero-fills the parts of a box outside the matrix; rows that are not
// 16-byte aligned (K % 8 != 0) are copied once into padded operands (chapter 07's pad_operands_if_unaligned).
// This file is compiled for sm_90a only (08_hopper/meson.build): wgmma and setmaxnreg exist
// nowhere else.
//
// Build and run (from the repository root):
//   meson setup build && meson compile -C build
//   ./build/08_hopper/hopper                  # check, then bench at the default sizes
//   ./build/08_hopper/hopper --kernel warp_spec --size 4096 --bench
//   meson test -C build --suite 08_hopper
// Explanation and measurements: 08_hopper/README.md
#include "08_hopper/hopper.cuh"

#include <cuda.h>          // CUtensorMap and the encoder's argument types
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled: the encoder comes through the runtime

#include <algorithm>
#include <map>
#include <tuple>

#include "05_tensorcore/mma_ptx.cuh"  // smem_addr
#include "07_pipelined/pad.cuh"
#include "07_pipelined/pipelined.cuh"  // grouped_tile
#include "common/check.h"
#include "common/device.h"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "08_hopper/hopper.cu is compiled for sm_90a only"
#endif

namespace {

// ---------------------------------------------------------------------------------------------
// PTX wrappers
// ---------------------------------------------------------------------------------------------
// mbarrier (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier").
// A barrier completes a phase when its pending arrivals reach 0 and its expected transaction
// bytes (expect_tx, counted down by TMA's complete_tx) reach 0; waiters test the parity of the
// phase they wait for.
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
// The barriers' initialisation is visible to the TMA unit (the async proxy) before use.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Ordinary shared stores are visible to wgmma (which reads through the async proxy).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// TMA: the box at (x, y) = (k, row) of the tensor map into shared memory at dst; its bytes are
// counted against bar's expected transactions.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int x, int y,
                                            uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// wgmma bookkeeping: fence before the first wgmma that reads registers other instructions
// wrote; commit closes a group of wgmma; wait_group N waits until at most N groups are pending.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// The accumulators are written asynchronously by wgmma: this empty asm "reads and writes" each
// of them, so the compiler keeps them in place (no copies, no moves) across wgmma and wait.
template <int R>
__device__ __forceinline__ void pin(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Thread-block clusters (PTX ISA, "Cluster"): the blocks of a cluster run at once on one GPC
// and can reach each other's shared memory.
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {  // every thread of every block of the cluster
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n"
               ::: "memory");
}
// The address of the same shared-memory location in block `rank` of the cluster.
__device__ __forceinline__ uint32_t peer_addr(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
// Arrive on a barrier given by its shared::cluster address (another block's, through peer_addr).
// The default (.release, .cta) semantics: a first version with .release.cluster ran at 42.5 %
// of cuBLAS instead of 95.8 % (README).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
}
// TMA multicast: the box lands at the same offset in every block of `mask`, and each of them
// has its barrier at bar's offset counted down.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, int x,
                                                      int y, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar), "h"(mask)
      : "memory");
}

// setmaxnreg (sm_90a): a warpgroup gives registers back to the SM, or takes more.
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}

// D (64 x 128, FP32, 64 registers a thread) (+)= A (64 x 16, smem desc) * B (16 x 128, smem desc).
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
        "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
        "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
        "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
        "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// D (64 x 256, FP32, 128 registers a thread) (+)= A (64 x 16, smem desc) * B (16 x 256, smem desc).
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, "
      "%120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
        "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
        "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
        "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
        "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]),
        "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),
        "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]),
        "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]),
        "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),
        "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]),
        "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),
        "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// ---------------------------------------------------------------------------------------------
// Shared pieces of the kernels
// ---------------------------------------------------------------------------------------------
constexpr int BK = 64;                 // one 128-byte swizzled row of BF16
constexpr int kKSteps = BK / 16;       // wgmma k16 steps per tile
constexpr int kWarpgroup = 128;        // threads

// The four k16 steps of one stage for one warpgroup: rows [a_row0, a_row0 + 64) of the A tile
// at a_tile and all rows of the Bᵀ tile at b_tile (both 1024-byte aligned, swizzled).
template <int N>
__device__ __forceinline__ void wgmma_stage(float (&acc)[N / 2], uint32_t a_tile, uint32_t b_tile) {
#pragma unroll
  for (int s = 0; s < kKSteps; ++s) {
    const uint64_t da = SmemDesc::k_major_sw128(a_tile + 32 * s);
    const uint64_t db = SmemDesc::k_major_sw128(b_tile + 32 * s);
    if constexpr (N == 128) wgmma_m64n128k16(acc, da, db, 1);
    else wgmma_m64n256k16(acc, da, db, 1);
  }
}

// One warpgroup's (64, N) accumulator into C at (m0, n0): adjacent columns as 8-byte stores
// where the row allows, masked at the edges.
template <int N>
__device__ __forceinline__ void store_acc(const float (&acc)[N / 2], float* C, int M, int Ncols,
                                          int m0, int n0, int t) {
  const bool vec = Ncols % 2 == 0;
#pragma unroll
  for (int r = 0; r < N / 2; r += 2) {
    const int m = m0 + WgmmaAcc::row(t, r), n = n0 + WgmmaAcc::col(t, r);
    if (m >= M) continue;
    float* c = C + int64_t(m) * Ncols + n;
    if (vec && n + 1 < Ncols) {
      *reinterpret_cast<float2*>(c) = make_float2(acc[r], acc[r + 1]);
    } else {
      if (n < Ncols) c[0] = acc[r];
      if (n + 1 < Ncols) c[1] = acc[r + 1];
    }
  }
}

// The same (64, 256) accumulator through shared memory: each warp owns 16 rows of it (WgmmaAcc),
// so each warp stages its own band, 32 columns at a time, in rows of 32 + 8 floats (the 8-byte
// writes of a half-warp's 4 rows land 8 banks apart, as in chapter 07's epilogue), and stores
// it back as whole 128-byte row pieces, 16 bytes a lane.
constexpr int kBandBytes = 16 * kBandRow * 4;  // kBandCols, kBandRow: hopper.cuh
__device__ __forceinline__ void store_acc_staged(const float (&acc)[128], float* C, int M,
                                                 int Ncols, int m0, int n0, int t,
                                                 float* band) {
  const int lane = t % 32, w = t / 32;
  const bool vec = Ncols % 4 == 0 && (reinterpret_cast<uintptr_t>(C) & 15) == 0;
#pragma unroll
  for (int c = 0; c < 256 / kBandCols; ++c) {
#pragma unroll
    for (int jj = 0; jj < kBandCols / 8; ++jj)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = 4 * (c * kBandCols / 8 + jj) + 2 * h;  // the register pair
        *reinterpret_cast<float2*>(&band[(lane / 4 + 8 * h) * kBandRow + 8 * jj + 2 * (lane % 4)]) =
            make_float2(acc[r], acc[r + 1]);
      }
    __syncwarp();  // the band is written before lanes read other lanes' values
#pragma unroll
    for (int q = lane; q < 16 * kBandCols / 4; q += 32) {
      const int row = q / (kBandCols / 4), col = 4 * (q % (kBandCols / 4));
      const int m = m0 + 16 * w + row, n = n0 + c * kBandCols + col;
      if (m >= M) continue;
      const float4 v = *reinterpret_cast<const float4*>(&band[row * kBandRow + col]);
      float* dst = C + int64_t(m) * Ncols + n;
      if (vec && n + 3 < Ncols) {
        *reinterpret_cast<float4*>(dst) = v;
      } else {
        const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int u = 0; u < 4; ++u)
          if (n + u < Ncols) dst[u] = e[u];
      }
    }
    __syncwarp();  // everyone has read the band before the next one overwrites it
  }
}

// The dynamic shared memory, rounded up to the 1024-byte alignment of the swizzle atoms.
__device__ __forceinline__ uint32_t smem_base_1024(unsigned char* raw) {
  return (smem_addr(raw) + 1023) & ~1023u;
}

// ---------------------------------------------------------------------------------------------
// Step 1: wgmma, the tiles loaded by the threads
// ---------------------------------------------------------------------------------------------
// (128, 128) tile, one warpgroup: two m64n128 accumulators (rows 0-63 and 64-127), 128 floats a
// thread. Tile bytes: A 128 x 128 B = 16 KiB, Bᵀ the same.
constexpr int kSyncBM = 128, kSyncBN = 128;
constexpr int kTileBytes128 = 128 * kSwizzleBytes;

__global__ void __launch_bounds__(kWarpgroup, 1)
    wgmma_sync_kernel(int M, int N, int K, const bf16* __restrict__ A,
                      const bf16* __restrict__ Bt, float* __restrict__ C) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t a_tile = smem_base_1024(smem_raw), b_tile = a_tile + kTileBytes128;
  const int t = threadIdx.x;
  const int m0 = blockIdx.y * kSyncBM, n0 = blockIdx.x * kSyncBN;
  float acc[2][64] = {};

  for (int k0 = 0; k0 < K; k0 += BK) {
    // 128 rows x 8 chunks of 16 bytes per operand: chunk f = t + 128 i is row f / 8, chunk f % 8.
    // K is a multiple of 8 (the launcher pads), so a chunk is all inside K or all outside.
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int f = t + kWarpgroup * i, row = f / 8, k = k0 + (f % 8) * 8;
      uint4 va = make_uint4(0, 0, 0, 0), vb = va;
      if (m0 + row < M && k < K)
        va = *reinterpret_cast<const uint4*>(A + int64_t(m0 + row) * K + k);
      if (n0 + row < N && k < K)
        vb = *reinterpret_cast<const uint4*>(Bt + int64_t(n0 + row) * K + k);
      const uint32_t off = swizzle128_offset(row, (f % 8) * 8);
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(a_tile + off), "r"(va.x),
                   "r"(va.y), "r"(va.z), "r"(va.w) : "memory");
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(b_tile + off), "r"(vb.x),
                   "r"(vb.y), "r"(vb.z), "r"(vb.w) : "memory");
    }
    fence_proxy_async();  // this thread's stores are visible to wgmma (the async proxy)
    __syncthreads();      // ... and everyone's
    pin(acc[0]);
    pin(acc[1]);
    wgmma_fence();
    wgmma_stage<128>(acc[0], a_tile, b_tile);
    wgmma_stage<128>(acc[1], a_tile + 64 * kSwizzleBytes, b_tile);
    wgmma_commit();
    wgmma_wait<0>();
    pin(acc[0]);
    pin(acc[1]);
    __syncthreads();  // every wgmma has read the tiles before they are overwritten
  }
  store_acc<128>(acc[0], C, M, N, m0, n0, t);
  store_acc<128>(acc[1], C, M, N, m0 + 64, n0, t);
}

// ---------------------------------------------------------------------------------------------
// Steps 2 and 3: TMA, one stage, then a ring of stages
// ---------------------------------------------------------------------------------------------
// Stages of (A tile, Bᵀ tile), then the barriers: full[s] (TMA's bytes have landed) and
// empty[s] (every warp is done with stage s). One warpgroup computes; thread 0 also issues
// the copies. kInFlight = 0: each tile's wgmma are waited for before the next tile starts;
// 1: the wgmma of tile t run while the warpgroup waits for tile t + 1, and tile t - 1's stage
// is released once they have been issued (wgmma.wait_group 1).
template <int S, int kInFlight>
__global__ void __launch_bounds__(kWarpgroup, 1)
    tma_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
               int M, int N, int K, float* __restrict__ C) {
  static_assert(kInFlight == 0 || S >= 2, "a tile in flight needs a second stage");
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  auto a_tile = [&](int s) { return base + s * 2 * kTileBytes128; };
  auto b_tile = [&](int s) { return base + s * 2 * kTileBytes128 + kTileBytes128; };
  const uint32_t full0 = base + S * 2 * kTileBytes128, empty0 = full0 + 8 * S;
  const int t = threadIdx.x;
  const int m0 = blockIdx.y * kSyncBM, n0 = blockIdx.x * kSyncBN;
  const int tiles = (K + BK - 1) / BK;
  constexpr uint32_t kStageBytes = 2 * kTileBytes128;

  if (t == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);   // the producer's arrive.expect_tx
      mbar_init(empty0 + 8 * s, 4);  // one arrival per warp
    }
    fence_barrier_init();
  }
  __syncthreads();  // the barriers exist before anyone uses them

  auto issue = [&](int tile, int s) {  // thread 0: tile `tile` of K into stage s
    mbar_arrive_expect_tx(full0 + 8 * s, kStageBytes);
    tma_load_2d(a_tile(s), &tm_a, tile * BK, m0, full0 + 8 * s);
    tma_load_2d(b_tile(s), &tm_b, tile * BK, n0, full0 + 8 * s);
  };
  // Tile u is done with its stage: every warp says so, and thread 0 refills the stage with
  // tile u + S once all four have.
  auto release = [&](int u) {
    const int s = u % S;
    if (t % 32 == 0) mbar_arrive(empty0 + 8 * s);
    if (t == 0 && u + S < tiles) {
      mbar_wait(empty0 + 8 * s, (u / S) & 1);
      issue(u + S, s);
    }
  };
  if (t == 0)
    for (int s = 0; s < S && s < tiles; ++s) issue(s, s);

  float acc[2][64] = {};
  for (int tile = 0; tile < tiles; ++tile) {
    const int s = tile % S;
    mbar_wait(full0 + 8 * s, (tile / S) & 1);  // the copies of this tile have landed
    pin(acc[0]);
    pin(acc[1]);
    wgmma_fence();
    wgmma_stage<128>(acc[0], a_tile(s), b_tile(s));
    wgmma_stage<128>(acc[1], a_tile(s) + 64 * kSwizzleBytes, b_tile(s));
    wgmma_commit();
    wgmma_wait<kInFlight>();  // all but the last kInFlight groups have finished
    pin(acc[0]);
    pin(acc[1]);
    if (kInFlight == 0) release(tile);
    else if (tile > 0) release(tile - 1);
  }
  wgmma_wait<0>();
  pin(acc[0]);
  pin(acc[1]);
  store_acc<128>(acc[0], C, M, N, m0, n0, t);
  store_acc<128>(acc[1], C, M, N, m0 + 64, n0, t);
}

// ---------------------------------------------------------------------------------------------
// Step 4: warp specialization
// ---------------------------------------------------------------------------------------------
// (128, 256) tile, 4 stages of 48 KiB; warpgroup 0 produces (one thread issues the TMA copies),
// warpgroups 1 and 2 consume: rows 0-63 and 64-127 of the tile, one m64n256 accumulator each
// (128 floats a thread).
constexpr int kWsBM = 128, kWsBN = 256, kWsStages = 4;
constexpr int kWsABytes = kWsBM * kSwizzleBytes, kWsBBytes = kWsBN * kSwizzleBytes;
constexpr int kWsStageBytes = kWsABytes + kWsBBytes;

// The grid walks the output tiles in chapter 07's grouped order (group 1: row by row): block b
// takes tiles b, b + gridDim.x, ... A grid of one block per tile is the plain launch; a grid of
// one block per SM is persistent: each block keeps its barriers' phases running from one tile
// to the next, so the producer loads the next tile while the consumers store this one.
template <bool kStagedStore>
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    warp_spec_kernel(const __grid_constant__ CUtensorMap tm_a,
                     const __grid_constant__ CUtensorMap tm_b, int M, int N, int K,
                     float* __restrict__ C, int group) {
  constexpr int S = kWsStages;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kWsStageBytes, empty0 = full0 + 8 * S;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + kWsBN - 1) / kWsBN;
  const int out_tiles = tiles_m * tiles_n;
  const int k_tiles = (K + BK - 1) / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);   // the producer's arrive.expect_tx
      mbar_init(empty0 + 8 * s, 8);  // one arrival per consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();  // the barriers exist before anyone uses them

  // `it` counts this block's K tiles over all its output tiles: stage it % S, phase (it / S) % 2.
  if (wg == 0) {
    // ---- PRODUCER: registers back to the SM; one thread walks the tiles and K ----
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0;
      for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
        const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          // A stage is free once its previous use is over: parity of the phase before this
          // one (a fresh barrier counts its phase "-1" as complete: the first round passes).
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);
          mbar_arrive_expect_tx(full0 + 8 * s, kWsStageBytes);
          tma_load_2d(base + s * kWsStageBytes, &tm_a, kt * BK, tc.m * kWsBM, full0 + 8 * s);
          tma_load_2d(base + s * kWsStageBytes + kWsABytes, &tm_b, kt * BK, tc.n * kWsBN,
                      full0 + 8 * s);
        }
      }
    }
  } else {
    // ---- CONSUMERS: more registers; each warpgroup its 64 rows of every tile ----
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    auto release = [&](int it) {  // this warp is done with the stage of K tile `it`
      if (t % 32 == 0) mbar_arrive(empty0 + 8 * (it % S));
    };
    int it = 0;
    for (int b = blockIdx.x; b < out_tiles; b += gridDim.x) {
      const TileCoord tc = grouped_tile(b, tiles_m, tiles_n, group);
      float acc[128];
#pragma unroll
      for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // the copies of this K tile have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage<256>(acc, base + s * kWsStageBytes + row0 * kSwizzleBytes,
                         base + s * kWsStageBytes + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmma have finished (this one's may run)
        pin(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
      if constexpr (kStagedStore)  // each consumer warp's band, after the barriers
        store_acc_staged(acc, C, M, N, tc.m * kWsBM + row0, tc.n * kWsBN, t,
                         reinterpret_cast<float*>(smem_raw + (base - smem_addr(smem_raw)) +
                                                  S * kWsStageBytes + 16 * S) +
                             (threadIdx.x / 32 - 4) * (kBandBytes / 4));
      else
        store_acc<256>(acc, C, M, N, tc.m * kWsBM + row0, tc.n * kWsBN, t);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A side step: clusters of two blocks, the Bᵀ tile multicast (no faster here)
// ---------------------------------------------------------------------------------------------
// The two blocks of a cluster compute tile rows 2p and 2p + 1 of the same tile column: the same
// (256, 64) Bᵀ tile. Each block's producer copies its own A tile and one half (128 rows) of the
// Bᵀ tile, multicast into both blocks: every Bᵀ byte leaves L2 once per cluster instead of once
// per block. A stage may be refilled only when the consumers of both blocks are done with it, so
// empty[s] counts 16 arrivals: every consumer warp arrives on its own block's barrier and on the
// other block's.
__global__ void __launch_bounds__(3 * kWarpgroup, 1)
    cluster_kernel(const __grid_constant__ CUtensorMap tm_a,
                   const __grid_constant__ CUtensorMap tm_b_half, int M, int N, int K,
                   float* __restrict__ C, int group) {
  constexpr int S = kWsStages;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = smem_base_1024(smem_raw);
  const uint32_t full0 = base + S * kWsStageBytes, empty0 = full0 + 8 * S;
  const int wg = threadIdx.x / kWarpgroup, t = threadIdx.x % kWarpgroup;
  const uint32_t rank = cluster_rank(), peer = rank ^ 1;
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + kWsBN - 1) / kWsBN;
  const int pairs_m = (tiles_m + 1) / 2;  // a tile row past M is all zeros and never stored
  const int pair_tiles = pairs_m * tiles_n;
  const int k_tiles = (K + BK - 1) / BK;
  const int cluster = blockIdx.x / 2, clusters = gridDim.x / 2;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, 1);    // this block's arrive.expect_tx (bytes from both blocks)
      mbar_init(empty0 + 8 * s, 16);  // every consumer warp of both blocks
    }
    fence_barrier_init();
  }
  cluster_sync();  // both blocks' barriers exist before either block uses the other's

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) {
      int it = 0;
      for (int p = cluster; p < pair_tiles; p += clusters) {
        const TileCoord pc = grouped_tile(p, pairs_m, tiles_n, group);
        const int m0 = (2 * pc.m + int(rank)) * kWsBM, n0 = pc.n * kWsBN;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % S;
          mbar_wait(empty0 + 8 * s, ((it / S) & 1) ^ 1);  // both blocks are done with stage s
          mbar_arrive_expect_tx(full0 + 8 * s, kWsStageBytes);
          const uint32_t stage = base + s * kWsStageBytes;
          tma_load_2d(stage, &tm_a, kt * BK, m0, full0 + 8 * s);
          tma_load_2d_multicast(stage + kWsABytes + rank * (kWsBBytes / 2), &tm_b_half, kt * BK,
                                n0 + int(rank) * (kWsBN / 2), full0 + 8 * s, 0x3);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int row0 = 64 * (wg - 1);
    auto release = [&](int it) {  // this warp is done with stage it % S, in both blocks' eyes
      if (t % 32 == 0) {
        const uint32_t bar = empty0 + 8 * (it % S);
        mbar_arrive(bar);                            // this block's barrier
        mbar_arrive_cluster(peer_addr(bar, peer));   // the other block's
      }
    };
    int it = 0;
    for (int p = cluster; p < pair_tiles; p += clusters) {
      const TileCoord pc = grouped_tile(p, pairs_m, tiles_n, group);
      const int m0 = (2 * pc.m + int(rank)) * kWsBM, n0 = pc.n * kWsBN;
      float acc[128];
#pragma unroll
      for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full0 + 8 * s, (it / S) & 1);  // A and both halves of Bᵀ have landed
        pin(acc);
        wgmma_fence();
        wgmma_stage<256>(acc, base + s * kWsStageBytes + row0 * kSwizzleBytes,
                         base + s * kWsStageBytes + kWsABytes);
        wgmma_commit();
        wgmma_wait<1>();
        pin(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait<0>();
      pin(acc);
      release(it - 1);
      store_acc<256>(acc, C, M, N, m0 + row0, n0, t);
    }
  }
  cluster_sync();  // neither block exits while the other may still arrive on its barriers
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------
// The tensor-map encoder, from the driver through the runtime (no link against libcuda).
PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q;
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || p == nullptr) {
      std::fprintf(stderr, "error: cuTensorMapEncodeTiled not found in the driver\n");
      std::exit(1);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A K-major BF16 matrix X (rows x K, K % 8 == 0) as TMA sees it: dimension 0 is k, dimension 1
// the row; boxes of (64, box_rows) with the 128-byte swizzle; outside the matrix, zeros.
// Kept per (pointer, shape, box), so that a timed call encodes nothing.
const CUtensorMap* tensor_map(const bf16* X, int rows, int K, int box_rows) {
  static std::map<std::tuple<const void*, int, int, int>, CUtensorMap> cache;
  const auto key = std::make_tuple(static_cast<const void*>(X), rows, K, box_rows);
  auto it = cache.find(key);
  if (it != cache.end()) return &it->second;
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(K), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(K) * sizeof(bf16)};  // bytes, a multiple of 16
  const cuuint32_t box[2] = {BK, cuuint32_t(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<bf16*>(X),
                               dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "error: cuTensorMapEncodeTiled failed (%d)\n", int(r));
    std::exit(1);
  }
  return &cache.emplace(key, map).first->second;
}

// Above 48 KiB a kernel must opt in to dynamic shared memory: once per kernel.
template <typename Kernel>
void opt_in(Kernel kernel, int bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

}  // namespace

void launch_wgmma_sync(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  constexpr int kSmem = 2 * kTileBytes128 + 1024;  // + the alignment slack
  static const bool once = (opt_in(wgmma_sync_kernel, kSmem), true);
  (void)once;
  const dim3 grid((N + kSyncBN - 1) / kSyncBN, (M + kSyncBM - 1) / kSyncBM);
  wgmma_sync_kernel<<<grid, kWarpgroup, kSmem>>>(M, N, K, A, Bt, C);
  CUDA_CHECK_LAUNCH();
}

template <int S, int kInFlight>
void launch_tma_stages(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  constexpr int kSmem = S * 2 * kTileBytes128 + 16 * S + 1024;
  static const bool once = (opt_in(tma_kernel<S, kInFlight>, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kSyncBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, kSyncBN);
  const dim3 grid((N + kSyncBN - 1) / kSyncBN, (M + kSyncBM - 1) / kSyncBM);
  tma_kernel<S, kInFlight><<<grid, kWarpgroup, kSmem>>>(*ta, *tb, M, N, K, C);
  CUDA_CHECK_LAUNCH();
}

void launch_tma(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_tma_stages<1, 0>(M, N, K, A, Bt, C);
}
void launch_tma_pipe(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_tma_stages<4, 1>(M, N, K, A, Bt, C);
}
void launch_tma_ring(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_tma_stages<4, 0>(M, N, K, A, Bt, C);
}

template <bool kStagedStore = false>
static void launch_ws(int M, int N, int K, const bf16* A, const bf16* Bt, float* C, int group,
                      bool persistent) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  // The stages, the barriers, the alignment slack, and (staged store) 8 consumer warps' bands.
  constexpr int kSmem = kWsStages * kWsStageBytes + 16 * kWsStages + 1024 +
                        (kStagedStore ? 8 * kBandBytes : 0);
  auto kernel = warp_spec_kernel<kStagedStore>;
  static const bool once = (opt_in(kernel, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, kWsBN);
  const int tiles = ((M + kWsBM - 1) / kWsBM) * ((N + kWsBN - 1) / kWsBN);
  const int grid = persistent ? std::min(tiles, device_sm_count()) : tiles;  // 1 block per SM
  kernel<<<grid, 3 * kWarpgroup, kSmem>>>(*ta, *tb, M, N, K, C, group);
  CUDA_CHECK_LAUNCH();
}
void launch_warp_spec(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_ws(M, N, K, A, Bt, C, 1, false);
}
void launch_hopper_raster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_ws(M, N, K, A, Bt, C, 8, false);  // chapter 07's G
}
void launch_persistent(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_ws(M, N, K, A, Bt, C, 8, true);
}
// Clusters of 2 (cudaLaunchKernelEx with a cluster dimension), persistent: an even number of
// blocks, at most one per SM.
void launch_cluster_g(int M, int N, int K, const bf16* A, const bf16* Bt, float* C, int group) {
  pad_operands_if_unaligned(M, N, K, A, Bt);
  constexpr int kSmem = kWsStages * kWsStageBytes + 16 * kWsStages + 1024;
  static const bool once = (opt_in(cluster_kernel, kSmem), true);
  (void)once;
  const CUtensorMap* ta = tensor_map(A, M, K, kWsBM);
  const CUtensorMap* tb = tensor_map(Bt, N, K, kWsBN / 2);
  const int tiles_m = (M + kWsBM - 1) / kWsBM, tiles_n = (N + kWsBN - 1) / kWsBN;
  const int pairs = (tiles_m + 1) / 2 * tiles_n;
  const int blocks = 2 * std::min(pairs, device_sm_count() / 2);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(3 * kWarpgroup);
  cfg.dynamicSmemBytes = kSmem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, cluster_kernel, *ta, *tb, M, N, K, C, group));
  CUDA_CHECK_LAUNCH();
}
void launch_cluster(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_cluster_g(M, N, K, A, Bt, C, 8);  // groups of 8 tile pairs: 16 tile rows, as group16
}

// The persistent grid's 132 blocks cover 16 tile rows and 9 tile columns at once: about as
// many rows of A (16 x 128) as of Bᵀ (9 x 256), the least operand data for that many tiles.
void launch_group16(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_ws(M, N, K, A, Bt, C, 16, true);
}
// The chapter's answer: group16 with the epilogue through shared memory (store_acc_staged).
void launch_hopper(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_ws<true>(M, N, K, A, Bt, C, 16, true);
}
