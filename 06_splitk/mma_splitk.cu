// Chapter 06 — split-K on chapter 05's best mma.sync kernel (BF16 in, FP32 accumulate and out).
//
// New since chapter 05: mma_kernel below is chapter 05's, copied, with one change: slice
// blockIdx.z of S computes the K range splitk_slice(K, BK, S, z) of its tile (chapter 05 already
// took a K range [k_begin, k_end) and an output offset per z, for this chapter), and writes its
// partial tile with splitk_store<kAtomic>: a plain store into its workspace slice, or an atomicAdd
// into C. The split and the reduction are splitk.cuh / splitk.cu, shared with the FP32 kernel.
//   diff -u 05_tensorcore/tensorcore.cu 06_splitk/mma_splitk.cu
//   splitk_mma         workspace variant, deterministic
//   splitk_mma_atomic  atomic variant
//   mma                this kernel with S = 1: chapter 05's best
//
// Build and run (from the repository root):
//   meson setup build && meson compile -C build
//   ./build/06_splitk/splitk_bf16                  # check, then bench at the five shapes
//   ./build/06_splitk/splitk_bf16 --kernel splitk_mma --m 256 --n 256 --k 65536 --splits 32
//   meson test -C build --suite 06_splitk
// Explanation and measurements: 06_splitk/README.md
#include "06_splitk/mma_splitk.cuh"

#include "05_tensorcore/tensorcore.cuh"
#include "05_tensorcore/mma_ptx.cuh"
#include "06_splitk/splitk.cuh"

namespace {

// ---------------------------------------------------------------------------------------------
// Loading a (ROWS, BK) tile of a K-major operand: global -> registers -> shared
// ---------------------------------------------------------------------------------------------
// Piece f (16 bytes, 8 BF16 along k) of the tile at (x0, k0): row f / (BK / 8), k (f % (BK/8)) * 8.
// One 128-bit load where the piece is inside the matrix and aligned; else element by element,
// with 0 outside rows or beyond k_end (which also zeroes the K tail of the last tile).
template <int BK>
__device__ __forceinline__ uint4 load_piece(const bf16* __restrict__ X, int rows, int ld, int x0,
                                            int k0, int k_end, int f, bool vec_ok) {
  const int x = x0 + f / (BK / 8), k = k0 + (f % (BK / 8)) * 8;
  const bf16* p = X + static_cast<int64_t>(x) * ld + k;
  if (vec_ok && x < rows && k + 8 <= k_end) return *reinterpret_cast<const uint4*>(p);
  // Element loads, 4 in flight at a time (8 make the largest configuration spill).
  const unsigned short* q = reinterpret_cast<const unsigned short*>(p);
  uint64_t lo = 0, hi = 0;  // elements 0..3, 4..7
#pragma unroll 4
  for (int e = 0; e < 8; ++e) {
    const uint64_t val = (x < rows && k + e < k_end) ? q[e] : 0;
    if (e < 4) lo |= val << (16 * e);
    else hi |= val << (16 * (e - 4));
  }
  return make_uint4(static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
                    static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32));
}

// The tile's pieces are shared out round-robin: thread tid loads pieces tid, tid + kThreads, ..
// Piece p of a thread is kThreads / (BK / 8) rows below its piece p - 1, at the same k.
template <int ROWS, int BK, TileLayout L, int kThreads>
struct TileLoader {
  static constexpr int kPieces = ROWS * BK / 8 / kThreads;  // per thread
  static constexpr int kRowsPerPass = kThreads / (BK / 8);
  static_assert(kThreads % (BK / 8) == 0, "every thread keeps the same k within the tile");
  uint4 v[kPieces];
  // Interior tiles (every row inside, every k below k_end, rows 16-byte aligned) take one
  // unconditional 128-bit load a piece; edge tiles go piece by piece through load_piece.
  __device__ __forceinline__ void load(const bf16* X, int rows, int ld, int x0, int k0, int k_end,
                                       bool vec_ok) {
    if (vec_ok && x0 + ROWS <= rows && k0 + BK <= k_end) {
      const int f = threadIdx.x;
      const bf16* p = X + static_cast<int64_t>(x0 + f / (BK / 8)) * ld + k0 + (f % (BK / 8)) * 8;
#pragma unroll
      for (int q = 0; q < kPieces; ++q)
        v[q] = *reinterpret_cast<const uint4*>(p + static_cast<int64_t>(q * kRowsPerPass) * ld);
    } else {
#pragma unroll
      for (int q = 0; q < kPieces; ++q)
        v[q] = load_piece<BK>(X, rows, ld, x0, k0, k_end, threadIdx.x + q * kThreads, vec_ok);
    }
  }
  // One 128-bit store a piece. A warp's 32 pieces are 512 consecutive bytes of the unpadded
  // tile; SmemTile decides where they land (test_tensorcore_index.cu counts the wavefronts).
  __device__ __forceinline__ void store(bf16* tile) const {
#pragma unroll
    for (int p = 0; p < kPieces; ++p) {
      const int f = threadIdx.x + p * kThreads;
      const int r = f / (BK / 8), k = (f % (BK / 8)) * 8;
      *reinterpret_cast<uint4*>(&tile[SmemTile<ROWS, BK, L>::offset(r, k)]) = v[p];
    }
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Steps 2-4: mma.sync, one template
// ---------------------------------------------------------------------------------------------
enum class FragLoad { kLds, kLdmatrix };

// One output tile: the block's (BM, BN) tile of args.C over the K range [k_begin, k_end).
// changed: kAtomic (how the finished tile is written).
template <typename Cfg, TileLayout L, FragLoad F, bool kAtomic>
__device__ __forceinline__ void mma_block_tile(const MmaArgs& args, int m0, int n0, int k_begin,
                                               int k_end, float* __restrict__ C) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MI = Cfg::kMI, NI = Cfg::kNI;
  using ATile = SmemTile<BM, BK, L>;
  using BTile = SmemTile<BN, BK, L>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  constexpr int kBuf = Cfg::kBuffers;
  bf16* As = reinterpret_cast<bf16*>(smem_raw);  // kBuf stages of (BM, BK)
  bf16* Bs = As + kBuf * ATile::kElems;          // kBuf stages of (BN, BK)

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
  const bool a_vec = args.lda % 8 == 0 && k_begin % 8 == 0 && aligned(args.A, 16);
  const bool b_vec = args.ldb % 8 == 0 && k_begin % 8 == 0 && aligned(args.Bt, 16);

  // Per-lane shared offsets (elements) of the ldmatrix rows of this warp's first fragments,
  // one per k16 step. Fragment i of A is 16 i rows further, which is 16 i * BK elements
  // further in both layouts (MmaConfig's static_assert; tested), so it is an immediate offset.
  constexpr int KS = BK / 16;
  int a_off[KS], b_off[KS];
#pragma unroll
  for (int s = 0; s < KS; ++s) {
    a_off[s] = ATile::offset(wm + Ldmatrix::a_row(lane), 16 * s + Ldmatrix::a_col(lane));
    b_off[s] = BTile::offset(wn + Ldmatrix::b_row(lane), 16 * s + Ldmatrix::b_col(lane));
  }

  float acc[MI][NI][4] = {};
  TileLoader<BM, BK, L, Cfg::kThreads> a_ld;  // the next tile, in registers on its way to smem
  TileLoader<BN, BK, L, Cfg::kThreads> b_ld;
  const int tiles = ceil_div(k_end - k_begin, BK);
  if (tiles > 0) {
    a_ld.load(args.A, args.M, args.lda, m0, k_begin, k_end, a_vec);
    b_ld.load(args.Bt, args.N, args.ldb, n0, k_begin, k_end, b_vec);
    a_ld.store(As);
    b_ld.store(Bs);
  }
  __syncthreads();  // stage 0 is complete before any warp reads it

  for (int t = 0; t < tiles; ++t) {
    const int stage = kBuf == 2 ? t % 2 : 0;
    // Chapter 04's double buffering: issue the next tile's global loads now; they complete
    // while this tile is computed.
    if (kBuf == 2 && t + 1 < tiles) {
      a_ld.load(args.A, args.M, args.lda, m0, k_begin + (t + 1) * BK, k_end, a_vec);
      b_ld.load(args.Bt, args.N, args.ldb, n0, k_begin + (t + 1) * BK, k_end, b_vec);
    }
    const bf16* as = As + stage * ATile::kElems;
    const bf16* bs = Bs + stage * BTile::kElems;

#pragma unroll
    for (int s = 0; s < KS; ++s) {
      uint32_t a[MI][4], b[NI][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        if constexpr (F == FragLoad::kLdmatrix) {
          ldmatrix_x4(a[i], smem_addr(as + a_off[s] + 16 * i * ATile::kRowElems));
        } else {  // register r: the 2 BF16 at (a_row, a_col) of the fragment map, one LDS.32
          static_assert(L == TileLayout::kPadded, "the plain-LDS step uses the padded tile");
#pragma unroll
          for (int r = 0; r < 4; ++r)
            a[i][r] = *reinterpret_cast<const uint32_t*>(
                as + ATile::offset(wm + 16 * i + Mma16816::a_row(lane, r),
                                   16 * s + Mma16816::a_col(lane, r, 0)));
        }
      }
#pragma unroll
      for (int j = 0; j < NI; j += 2) {  // two n8 tiles: 16 rows of Bᵀ
        if constexpr (F == FragLoad::kLdmatrix) {
          uint32_t r[4];
          ldmatrix_x4(r, smem_addr(bs + b_off[s] + 8 * j * BTile::kRowElems));
          b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
        } else {  // register r of n-tile j + h: the 2 BF16 at (b_n, b_k), one LDS.32
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int r = 0; r < 2; ++r)
              b[j + h][r] = *reinterpret_cast<const uint32_t*>(
                  bs + BTile::offset(wn + 8 * (j + h) + Mma16816::b_n(lane),
                                     16 * s + Mma16816::b_k(lane, r, 0)));
        }
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], a[i], b[j]);
    }
    if constexpr (kBuf == 2) {
      // The other stage was last read in iteration t - 1, which every warp has finished (the
      // barrier below): it can take the tile loaded above.
      if (t + 1 < tiles) {
        a_ld.store(As + (1 - stage) * ATile::kElems);
        b_ld.store(Bs + (1 - stage) * BTile::kElems);
      }
      __syncthreads();  // the next stage is complete, and this one is free to be overwritten
    } else if (t + 1 < tiles) {
      __syncthreads();  // every warp is done reading before the tile is overwritten
      a_ld.load(args.A, args.M, args.lda, m0, k_begin + (t + 1) * BK, k_end, a_vec);
      b_ld.load(args.Bt, args.N, args.ldb, n0, k_begin + (t + 1) * BK, k_end, b_vec);
      a_ld.store(As);
      b_ld.store(Bs);
      __syncthreads();  // the tile is complete before any warp reads it
    }
  }

  // Epilogue, straight from the registers: c0, c1 (and c2, c3, 8 rows down) are adjacent
  // columns, one 8-byte store where the row allows it. A quad of lanes writes 32 bytes of a row.
  const bool c_vec = !kAtomic && args.ldc % 2 == 0 && aligned(C, 8);  // changed
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = m0 + wm + 16 * i + Mma16816::c_row(lane, 2 * h);
        const int n = n0 + wn + 8 * j + Mma16816::c_col(lane, 0);
        if (m >= args.M) continue;
        float* c = C + static_cast<int64_t>(m) * args.ldc + n;
        if (c_vec && n + 1 < args.N) {
          *reinterpret_cast<float2*>(c) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (n < args.N) splitk_store<kAtomic>(&c[0], acc[i][j][2 * h]);  // changed
          if (n + 1 < args.N) splitk_store<kAtomic>(&c[1], acc[i][j][2 * h + 1]);  // changed
        }
      }
}

// changed: the K range of slice blockIdx.z is splitk_slice's (chapter 06), and kAtomic.
template <typename Cfg, TileLayout L, FragLoad F, bool kAtomic>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) mma_kernel(MmaArgs args) {
  const KRange kr = splitk_slice(args.K, Cfg::BK, gridDim.z, blockIdx.z);
  const int k_begin = kr.begin, k_end = kr.end;
  mma_block_tile<Cfg, L, F, kAtomic>(args, blockIdx.y * Cfg::BM, blockIdx.x * Cfg::BN, k_begin,
                                     k_end, args.C + blockIdx.z * args.c_split_stride);
}

template <typename Cfg, TileLayout L, FragLoad F, bool kAtomic>
static void launch_mma_args(const MmaArgs& args, int splits) {
  constexpr int kSmemBytes =  // kBuffers stages of BF16 tiles
      Cfg::kBuffers * (SmemTile<Cfg::BM, Cfg::BK, L>::kElems + SmemTile<Cfg::BN, Cfg::BK, L>::kElems) * 2;
  auto kernel = mma_kernel<Cfg, L, F, kAtomic>;
  // Above 48 KiB of dynamic shared memory a kernel must opt in; once per kernel, so that no
  // host call sits between the timing events and the launch.
  static const bool opted_in = [&] {
    if (kSmemBytes > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      kSmemBytes));
    return true;
  }();
  (void)opted_in;
  dim3 grid(ceil_div(args.N, Cfg::BN), ceil_div(args.M, Cfg::BM), splits);
  kernel<<<grid, Cfg::kThreads, kSmemBytes>>>(args);
  CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------------
// The base-kernel side of SplitKBase (splitk.cuh)
// ---------------------------------------------------------------------------------------------
template <typename Cfg>
static void launch_mma_base(int M, int N, int K, const bf16* A, const bf16* Bt, float* out,
                            int splits, size_t slice_stride, bool atomic) {
  MmaArgs args = make_mma_args(M, N, K, A, Bt, out);
  args.c_split_stride = static_cast<int64_t>(slice_stride);
  if (atomic)
    launch_mma_args<Cfg, TileLayout::kSwizzled, FragLoad::kLdmatrix, true>(args, splits);
  else
    launch_mma_args<Cfg, TileLayout::kSwizzled, FragLoad::kLdmatrix, false>(args, splits);
}

template <typename Cfg>
static int mma_blocks_per_sm() {
  static const int n = [] {
    constexpr int kSmemBytes =
        Cfg::kBuffers * (SmemTile<Cfg::BM, Cfg::BK, TileLayout::kSwizzled>::kElems +
                         SmemTile<Cfg::BN, Cfg::BK, TileLayout::kSwizzled>::kElems) * 2;
    // The plain-store kernel stands for both: the atomic one has the same tile and threads.
    auto kernel = mma_kernel<Cfg, TileLayout::kSwizzled, FragLoad::kLdmatrix, false>;
    if (kSmemBytes > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      kSmemBytes));
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, Cfg::kThreads,
                                                             kSmemBytes));
    return blocks;
  }();
  return n;
}

// The tiles the heuristic chooses from: chapter 05's best configuration (MmaBest), and the
// 128 x 128 tile of its ladder (MmaStep) for shapes that would leave half of a wider tile empty.
template <typename Cfg>
constexpr SplitKBase<bf16> mma_base() {
  return {{Cfg::BM, Cfg::BN, Cfg::BK, 0}, launch_mma_base<Cfg>, mma_blocks_per_sm<Cfg>};
}
const SplitKBase<bf16> kMmaBases[] = {mma_base<MmaBest>(), mma_base<MmaStep>()};
const int kMmaBaseCount = 2;

int g_mma_splits = 0;

void launch_mma_unsplit(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  launch_mma_base<MmaBest>(M, N, K, A, Bt, C, 1, 0, false);
}
void launch_splitk_mma(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  splitk_gemm(kMmaBases, kMmaBaseCount, SplitMode::kWorkspace, g_mma_splits, M, N, K, A, Bt, C);
}
void launch_splitk_mma_atomic(int M, int N, int K, const bf16* A, const bf16* Bt, float* C) {
  splitk_gemm(kMmaBases, kMmaBaseCount, SplitMode::kAtomic, g_mma_splits, M, N, K, A, Bt, C);
}
