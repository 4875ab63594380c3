// Chapter 10's harness: the inputs in their three forms (BF16; e4m3 with per-tensor scales;
// e4m3 with 1 x 128 and 128 x 128 scales, quantised here from the same random values), the exact
// reference of each form, the epilogue applied to it in double precision, and cuBLASLt's calls.
#include "10_fp8_epilogue/chapter10.h"

#include <cublasLt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/check.h"
#include "common/device.h"
#include "common/fp8.h"
#include "common/matrix.h"
#include "common/verify.h"

namespace {

// --- The quantiser (common/fp8.h: float_to_e4m3, e4m3_scale; host-tested in test_fp8.cpp) -------
// amax of |x| over n floats, as the bits of a non-negative float (whose order is the integers').
__global__ void amax_kernel(const float* __restrict__ x, int64_t n, unsigned* amax_bits) {
  float m = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    m = fmaxf(m, fabsf(x[i]));
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0) atomicMax(amax_bits, __float_as_uint(m));
}
// One scale for the whole tensor: q = e4m3(x * s), dq = 1 / s.
__global__ void quantize_tensor_kernel(const float* __restrict__ x, int64_t n,
                                       const unsigned* amax_bits, uint8_t* __restrict__ q,
                                       float* dq) {
  const float s = e4m3_scale(__uint_as_float(*amax_bits));
  if (blockIdx.x == 0 && threadIdx.x == 0) *dq = 1.0f / s;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    q[i] = float_to_e4m3(x[i] * s);
}
// One scale per (rows_per_block x 128) block of X (rows x K): a block of 256 threads per block of
// X; rows_per_block is 1 for A (1 x 128: dq at a_scale_index), 128 for Bᵀ (128 x 128: dq at
// b_scale_index).
__global__ void quantize_blocks_kernel(const float* __restrict__ X, int rows, int K,
                                       int rows_per_block, uint8_t* __restrict__ q,
                                       float* __restrict__ dq) {
  const int row_blocks = (rows + rows_per_block - 1) / rows_per_block;
  const int rb = blockIdx.x % row_blocks, kb = blockIdx.x / row_blocks;
  const int r0 = rb * rows_per_block, k0 = kb * kScaleBlock;
  const int r1 = min(rows, r0 + rows_per_block), k1 = min(K, k0 + kScaleBlock);
  const int width = k1 - k0, count = (r1 - r0) * width;
  __shared__ float warp_max[8];
  float m = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x)
    m = fmaxf(m, fabsf(X[int64_t(r0 + i / width) * K + k0 + i % width]));
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();  // every warp's maximum is in shared memory
  m = 0.0f;
  for (int w = 0; w < int(blockDim.x / 32); ++w) m = fmaxf(m, warp_max[w]);
  const float s = e4m3_scale(m);
  if (threadIdx.x == 0)
    dq[rows_per_block == 1 ? a_scale_index(rb, kb, rows) : b_scale_index(rb, kb, K)] = 1.0f / s;
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const int64_t at = int64_t(r0 + i / width) * K + k0 + i % width;
    q[at] = float_to_e4m3(X[at] * s);
  }
}

// --- The inputs ---------------------------------------------------------------------------------
// Uniform values in [-1, 1) times a magnitude 2^e per block, e in -3 .. 3 drawn per (row, K block)
// of A and per (128-row block, K block) of Bᵀ: blocks that differ in size, as activations and
// weights do, so that a scale applied to the wrong block changes the result (a test that must
// fail, tests/meson.build), and per-tensor scales lose the small blocks' bits (README.md).
__host__ __device__ inline float block_magnitude(uint64_t seed, int64_t row_block, int k_block) {
  const float u = random_uniform(seed ^ 0x5bd1e995ull, uint64_t(row_block) * 65537u + k_block);
  return exp2f(float(int((u + 1.0f) * 3.5f) - 3));  // 2^-3 .. 2^3, 7 values
}
template <typename T>
__global__ void fill_blocks_kernel(T* x, int rows, int K, int rows_per_block, uint64_t seed) {
  const int64_t total = int64_t(rows) * K;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / K;
    const int k = int(i % K);
    x[i] = T(random_uniform(seed, uint64_t(i)) *
             block_magnitude(seed, r / rows_per_block, k / kScaleBlock));
  }
}
template <typename T>
void fill_blocks(T* x, int rows, int K, int rows_per_block, uint64_t seed) {
  fill_blocks_kernel<<<1024, 256>>>(x, rows, K, rows_per_block, seed);
  CUDA_CHECK_LAUNCH();
}

// --- The exact reference, and the bound of each accumulation -------------------------------------
// sum_k a(m, k) b(n, k) in double, from the decoded operands: BF16 values, or e4m3 codes times
// their scales (each product of a code and an FP32 scale is exact in double).
struct Decoded {
  Operands form;
  const void* x;     // BF16 values or e4m3 codes, rows x K
  const float* dq;   // per tensor: dq[0]; per block: at a_scale_index or b_scale_index
  int rows_per_block;
  __device__ double at(int r, int64_t k, int rows, int K) const {
    if (form == Operands::kBf16)
      return __bfloat162float(static_cast<const __nv_bfloat16*>(x)[int64_t(r) * K + k]);
    const double v = e4m3_to_float(static_cast<const uint8_t*>(x)[int64_t(r) * K + k]);
    if (form == Operands::kFp8Tensor) return v * dq[0];
    const int kb = int(k / kScaleBlock);
    return v * dq[rows_per_block == 1 ? a_scale_index(r, kb, rows)
                                      : b_scale_index(r / rows_per_block, kb, K)];
  }
};

// The accumulation model (docs/measuring.md, "Chapter 10's bound"). The tensor cores add a
// group of products into the accumulator in one step; a step may lose up to u times the largest
// magnitude it handles, the accumulator before it plus its products (the standard bound of a
// recursive sum, Higham 2002, section 4.2, with a step of g products: |error| <= u * sum over
// steps of (|T_before| + sum |a b|)). The exact partial sums T are known here, so the bound is
// that sum, element by element:
//   kFp32      BF16 wgmma, g = 16, u = kTcFp32Roundoff
//   kFp8Fast   e4m3 wgmma, g = 32, over all of K, u = kTcFp8Roundoff
//   kPromoted  e4m3 wgmma, g = 32, restarted every 128 K (the part), u = kTcFp8Roundoff; then
//              each part scaled and added into FP32 registers (u = 2^-24, two roundings)
// kTcFp32Roundoff: two FP32 ulps a step (Fasi et al. 2021 found truncation, one ulp, and
// alignment of the products inside the step). kTcFp8Roundoff: the FP8 accumulator keeps about
// 13 bits (the DeepSeek-V3 report says about 14 on H800; this chapter's errors at K = 512 imply
// at least 2^-12.4 a step, NOTES.md), so 2^-11 a step.
constexpr double kTcFp32Roundoff = 1.0 / (1 << 22);
constexpr double kTcFp8Roundoff = 1.0 / (1 << 11);

// The reference's output, per element: the exact sum and two accumulation bounds (bound[0]:
// kFp32 for BF16 operands, kFp8Fast for FP8; bound[1]: kPromoted), already times u.
struct RefOut {
  double* sum;
  float* bound0;
  float* bound1;
};
// 16 x 16 threads, one element each, K through shared tiles of 16 (as common/reference.cu). The
// steps of 16, 32 and the 128-K parts start at tile boundaries, so each thread adds its partial
// sums' magnitudes there.
__global__ void reference_kernel(int M, int N, int K, Decoded a, Decoded b, RefOut out) {
  __shared__ double As[16][17], Bs[16][17];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int n = blockIdx.x * 16 + tx, n_load = blockIdx.x * 16 + ty;
  const bool fp8 = a.form != Operands::kBf16;
  for (int m0 = blockIdx.y * 16; m0 < M; m0 += gridDim.y * 16) {
    const int m = m0 + ty;
    double acc = 0, part = 0;     // the whole sum; the sum of the current 128-K part
    double abs_terms = 0;         // sum |a b|
    double steps = 0;             // sum over steps (16 or 32 K) of |acc| before the step
    double part_steps = 0;        // sum over 32-K steps of |part| before the step
    double promotions = 0;        // sum over parts of |acc| before the part is added
    for (int64_t k0 = 0; k0 < K; k0 += 16) {
      const int64_t ka = k0 + tx;
      As[ty][tx] = (m < M && ka < K) ? a.at(m, ka, M, K) : 0.0;
      Bs[tx][ty] = (n_load < N && ka < K) ? b.at(n_load, ka, N, K) : 0.0;
      __syncthreads();  // both tiles complete before they are read
      if (k0 % kScaleBlock == 0) {
        promotions += fabs(acc);
        part = 0;
      }
      if (k0 % (fp8 ? 32 : 16) == 0) steps += fabs(acc);
      if (k0 % 32 == 0) part_steps += fabs(part);
      for (int k = 0; k < 16; ++k) {
        const double t = As[ty][k] * Bs[k][tx];
        acc += t;
        part += t;
        abs_terms += fabs(t);
      }
      __syncthreads();  // all reads done before the next tiles overwrite them
    }
    if (m < M && n < N) {
      const int64_t at = int64_t(m) * N + n;
      out.sum[at] = acc;
      const double u = fp8 ? kTcFp8Roundoff : kTcFp32Roundoff, u32 = kFp32Roundoff;
      out.bound0[at] = float(u * (steps + abs_terms));
      out.bound1[at] = float(kTcFp8Roundoff * (part_steps + abs_terms) +
                             2 * u32 * (promotions + abs_terms));
    }
  }
}

// --- cuBLASLt -------------------------------------------------------------------------------------
// Row-major D = A Bᵀ is column-major Dᵀ = Bt' * A: cuBLASLt's "A" is our Bᵀ (transposed, K x N
// column-major), its "B" our A; m = N, n = M. This TN form is the one FP8 requires. Its A scale
// is our Bᵀ's, its B scale our A's; its bias runs along its rows, our columns.
class Lt {
 public:
  Lt() {
    CUBLAS_CHECK(cublasLtCreate(&h_));
    workspace_ = DeviceBuffer<unsigned char>(kWorkspace);
  }
  ~Lt() {
    for (auto& [k, p] : plans_) {
      cublasLtMatmulDescDestroy(p.op);
      cublasLtMatrixLayoutDestroy(p.la);
      cublasLtMatrixLayoutDestroy(p.lb);
      cublasLtMatrixLayoutDestroy(p.lc);
    }
    cublasLtDestroy(h_);
  }
  // Throws KernelNotSupported when cuBLASLt has no algorithm for the call on this GPU.
  void matmul(LtCall call, const GemmProblem& p) {
    Plan& plan = plan_for(call, p);
    const bool fp8 = call == LtCall::kFp8 || call == LtCall::kFp8Fast || call == LtCall::kFp8Block;
    const void* a = fp8 ? (call == LtCall::kFp8Block ? p.qBt_blk : p.qBt) : (const void*)p.Bt;
    const void* b = fp8 ? (call == LtCall::kFp8Block ? p.qA_blk : p.qA) : (const void*)p.A;
    const void* c = p.beta != 0.0f ? (const void*)p.C : (const void*)p.D;
    CUBLAS_CHECK(cublasLtMatmul(h_, plan.op, &p.alpha, a, plan.la, b, plan.lb, &p.beta, c,
                                plan.lc, p.D, plan.lc, &plan.algo, workspace_.get(), kWorkspace,
                                nullptr));
  }

 private:
  static constexpr size_t kWorkspace = 32u << 20;
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
    cublasLtMatmulAlgo_t algo;
  };
  Plan& plan_for(LtCall call, const GemmProblem& p) {
    auto key = std::make_tuple(int(call), p.M, p.N, p.K, p.beta != 0.0f);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    Plan plan;
    const bool fp8 = call == LtCall::kFp8 || call == LtCall::kFp8Fast || call == LtCall::kFp8Block;
    const cudaDataType in = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (call == LtCall::kBf16BiasGelu) {
      const cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_GELU_BIAS;
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                  &p.bias, sizeof p.bias));
    }
    if (fp8) {
      const float* sa = call == LtCall::kFp8Block ? p.b_dq_blk : p.b_dq;  // its A: our Bᵀ
      const float* sb = call == LtCall::kFp8Block ? p.a_dq_blk : p.a_dq;
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                  &sa, sizeof sa));
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                  &sb, sizeof sb));
      if (call == LtCall::kFp8Block) {
        const int32_t ma = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
        const int32_t mb = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                                                    &ma, sizeof ma));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                                                    &mb, sizeof mb));
      }
      const int8_t fast = call == LtCall::kFp8Fast ? 1 : 0;
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                  &fast, sizeof fast));
    }
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.la, in, p.K, p.N, p.K));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.lb, in, p.K, p.M, p.K));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.lc, CUDA_R_16BF, p.N, p.M, p.N));
    cublasLtMatmulPreference_t pref;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const size_t ws = kWorkspace;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    // A split K may be summed only in the compute type (FP32, in the workspace): the same
    // accumulation as this chapter's kernels. Left free, cuBLASLt split 256 x 256 x 262144 and
    // summed the slices in BF16, 8 times past the FP32 bound (NOTES.md, "cuBLASLt's split K").
    const uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes, sizeof schemes));
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(h_, plan.op, plan.la, plan.lb, plan.lc,
                                                             plan.lc, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
      cublasLtMatmulDescDestroy(plan.op);
      cublasLtMatrixLayoutDestroy(plan.la);
      cublasLtMatrixLayoutDestroy(plan.lb);
      cublasLtMatrixLayoutDestroy(plan.lc);
      throw KernelNotSupported("cuBLASLt " + std::to_string(cublasLtGetVersion()) +
                               " has no algorithm for this call (status " +
                               std::to_string(int(st)) + ")");
    }
    plan.algo = result.algo;
    if (report_) {  // --errors: which split and reduction cuBLASLt chose
      int32_t splits = 0;
      uint32_t scheme = 0;
      size_t got = 0;
      cublasLtMatmulAlgoConfigGetAttribute(&plan.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits,
                                           sizeof splits, &got);
      cublasLtMatmulAlgoConfigGetAttribute(&plan.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                           &scheme, sizeof scheme, &got);
      std::printf("cublaslt call %d %dx%dx%d split_k %d reduction_scheme %u\n", int(call), p.M,
                  p.N, p.K, splits, scheme);
    }
    return plans_.emplace(key, plan).first->second;
  }
  cublasLtHandle_t h_ = nullptr;
  DeviceBuffer<unsigned char> workspace_;
 public:
  bool report_ = false;
 private:
  std::map<std::tuple<int, int, int, int, bool>, Plan> plans_;
};

// --- The check (docs/measuring.md, "Chapter 10's bound") ------------------------------------------
// Per element, from the reference's exact sum S and accumulation bound B (already times u):
//   x  = alpha S + beta C                          exact pre-activation
//   Ex = |alpha| B + 4 u32 (|alpha S| + |alpha| B + |beta C|)   its error in FP32 (the scales'
//        product, alpha, the FMA with beta C: at most four FP32 roundings)
//   alpha-beta:  |got - x| <= Ex + u16 (|x| + Ex)                  u16 = 2^-8: the BF16 output
//   bias + GELU: x' = x + bias, its error Ex' = Ex (+ u16 (|x| + Ex) where x was rounded to BF16
//        first) + u32 (|x'| + Ex); gelu moves by at most kGeluMaxSlope Ex' (for the chapters'
//        kernels in the left tail, x' + Ex' below kGeluTailEdge, by |gelu'(x' + Ex')| Ex': the
//        slope's largest value on the interval, fp8_gemm.h); the device's gelu adds kGeluRelErr
//        of its result (or kGeluFlush |x'|); the output rounding u16 of it. cuBLASLt's
//        GELU_BIAS returns 0 for results as large as 5e-7 in magnitude (measured: NOTES.md,
//        "GELU's tail bound"), which only kGeluMaxSlope's bound holds: the library keeps it.
// Norm-wise, where enough elements carry the bound (n_eff = (sum b^2)^2 / sum b^4 >= 256):
//   ||got - want|| <= 0.75 ||b||: each rounding error spread over its interval has a mean
//   square at most a third of its bound squared (Higham and Mary 2019's model), so the mean of
//   ||got - want||^2 is at most ||b||^2 / 3 = (0.577 ||b||)^2; by Hoeffding's inequality a
//   right kernel passes 0.75 ||b|| with probability below e^-27 at n_eff = 256.
constexpr double kBf16Roundoff = 1.0 / 256;
constexpr double kBf16HalfSubnormal = 4.591774807899561e-41;  // 2^-134: half BF16's least step
constexpr double kNormFraction = 0.75;
constexpr double kNormMinElements = 256;

// Unpromoted FP8 (fp8 at every width, fp8_tuned, lt_fp8_fast) is refused above this K: its bound grows as
// u (2/3) (K / 32) of the result (the partial sums' magnitudes add up over K / 32 steps), a sixth
// of it at K = 65536 and past the result itself at K = 2^20. There the answer is `promoted`.
constexpr int kFastAccumMaxK = 65536;

struct Inputs {
  DeviceBuffer<__nv_bfloat16> A, Bt, C, bias;
  DeviceBuffer<uint8_t> qA, qBt, qA_blk, qBt_blk;
  DeviceBuffer<float> a_dq, b_dq;  // one float each (cuBLASLt wants them 16-byte aligned)
  DeviceBuffer<float> a_dq_blk, b_dq_blk;
};

class Fp8Case : public Case {
 public:
  Fp8Case(const std::vector<Fp8Entry>& entries, const Shape& s, uint64_t seed, float beta,
          bool gelu_tail, bool errors_report)
      : entries_(entries), s_(s) {
    errors_report_ = errors_report;
    require_tail_ = gelu_tail;
    lt_.report_ = errors_report;
    const int M = s.M, N = s.N, K = s.K;
    const int64_t a_n = int64_t(M) * K, b_n = int64_t(N) * K;
    in_.A = DeviceBuffer<__nv_bfloat16>(a_n);
    in_.Bt = DeviceBuffer<__nv_bfloat16>(b_n);
    fill_blocks(in_.A.get(), M, K, 1, seed * 4 + 1);
    fill_blocks(in_.Bt.get(), N, K, kScaleBlock, seed * 4 + 2);
    in_.C = DeviceBuffer<__nv_bfloat16>(int64_t(M) * N);
    fill_random(in_.C.get(), M, N, seed * 4 + 3);
    in_.bias = DeviceBuffer<__nv_bfloat16>(N);
    fill_random(in_.bias.get(), 1, N, seed * 4 + 4);
    // The FP8 forms: the same random values (before BF16 rounding) quantised two ways.
    {
      DeviceBuffer<float> a(a_n), b(b_n);
      fill_blocks(a.get(), M, K, 1, seed * 4 + 1);
      fill_blocks(b.get(), N, K, kScaleBlock, seed * 4 + 2);
      DeviceBuffer<unsigned> amax(2);
      CUDA_CHECK(cudaMemset(amax.get(), 0, amax.bytes()));
      amax_kernel<<<1024, 256>>>(a.get(), a_n, amax.get());
      amax_kernel<<<1024, 256>>>(b.get(), b_n, amax.get() + 1);
      CUDA_CHECK_LAUNCH();
      in_.qA = DeviceBuffer<uint8_t>(a_n);
      in_.qBt = DeviceBuffer<uint8_t>(b_n);
      in_.a_dq = DeviceBuffer<float>(1);
      in_.b_dq = DeviceBuffer<float>(1);
      quantize_tensor_kernel<<<1024, 256>>>(a.get(), a_n, amax.get(), in_.qA.get(),
                                            in_.a_dq.get());
      quantize_tensor_kernel<<<1024, 256>>>(b.get(), b_n, amax.get() + 1, in_.qBt.get(),
                                            in_.b_dq.get());
      CUDA_CHECK_LAUNCH();
      const int kbs = scale_blocks(K);
      in_.qA_blk = DeviceBuffer<uint8_t>(a_n);
      in_.qBt_blk = DeviceBuffer<uint8_t>(b_n);
      in_.a_dq_blk = DeviceBuffer<float>(int64_t(kbs) * M);
      in_.b_dq_blk = DeviceBuffer<float>(int64_t(scale_blocks(N)) * b_scale_ld(K));
      CUDA_CHECK(cudaMemset(in_.b_dq_blk.get(), 0, in_.b_dq_blk.bytes()));  // the padding
      quantize_blocks_kernel<<<unsigned(int64_t(kbs) * M), 256>>>(a.get(), M, K, 1,
                                                                  in_.qA_blk.get(),
                                                                  in_.a_dq_blk.get());
      quantize_blocks_kernel<<<unsigned(int64_t(kbs) * scale_blocks(N)), 256>>>(
          b.get(), N, K, kScaleBlock, in_.qBt_blk.get(), in_.b_dq_blk.get());
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    D_ = GuardedBuffer(size_t(M) * N, sizeof(__nv_bfloat16));
    p_.M = M;
    p_.N = N;
    p_.K = K;
    p_.A = in_.A.get();
    p_.Bt = in_.Bt.get();
    p_.qA = in_.qA.get();
    p_.qBt = in_.qBt.get();
    p_.a_dq = in_.a_dq.get();
    p_.b_dq = in_.b_dq.get();
    p_.qA_blk = in_.qA_blk.get();
    p_.qBt_blk = in_.qBt_blk.get();
    p_.a_dq_blk = in_.a_dq_blk.get();
    p_.b_dq_blk = in_.b_dq_blk.get();
    // Not 1 (a kernel that forgets alpha fails), and a power of two times 0.75 that brings the
    // sum (rms about 4 sqrt(K) with these magnitudes) to about 1, where GELU bends; with
    // gelu_tail, 8 times that, so that many pre-activations lie in GELU's tails (x < -5).
    p_.alpha = 0.75f * std::exp2(-std::ceil(std::log2(4.0 * std::sqrt(double(K))))) *
               (gelu_tail ? 8.0f : 1.0f);
    p_.beta = beta;
    p_.C = in_.C.get();
    p_.bias = in_.bias.get();
    p_.D = D_.as<__nv_bfloat16>();
  }

  void launch(size_t i) override {
    const Fp8Entry& e = entries_[i];
    GemmProblem p = p_;
    if (e.epilogue == Epilogue::kAlphaBeta) p.bias = nullptr;
    if (e.launch) {
      e.launch(p);
    } else {
      lt_.matmul(e.lt, p);
    }
  }
  void poison_output() override { D_.poison(); }
  std::string check_guards() override { return D_.touched("D"); }

  std::optional<VerifyResult> verify_output(size_t i) override {
    const Fp8Entry& e = entries_[i];
    const Reference& ref = reference(e.operands);
    const std::vector<float>& acc_bound = e.accum == Accum::kPromoted ? ref.bound1 : ref.bound0;
    const bool gelu = e.epilogue != Epilogue::kAlphaBeta;
    const bool rounded = e.epilogue == Epilogue::kBiasGeluRounded;
    const int M = s_.M, N = s_.N;
    std::vector<__nv_bfloat16> d(ref.sum.size());
    CUDA_CHECK(cudaMemcpy(d.data(), D_.as<__nv_bfloat16>(), D_.bytes(), cudaMemcpyDeviceToHost));
    // The bound of each element (above, "The check"), and both criteria.
    const double alpha = std::fabs(p_.alpha), u32 = kFp32Roundoff, u16 = kBf16Roundoff;
    VerifyResult r;
    double diff2 = 0, ref2 = 0, b2 = 0, b4 = 0;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        const size_t at = size_t(m) * N + n;
        const double ax = double(p_.alpha) * ref.sum[at];
        const double bc = p_.beta != 0.0f ? double(p_.beta) * c_host_[at] : 0.0;
        const double x = ax + bc, ea = alpha * acc_bound[at];
        double ex = ea + 4 * u32 * (std::fabs(ax) + ea + std::fabs(bc));
        double want, bound;
        if (!gelu) {
          want = x;
          bound = ex + u16 * (std::fabs(x) + ex);
        } else {
          if (rounded) ex += u16 * (std::fabs(x) + ex);
          const double xb = x + bias_host_[n];
          ex += u32 * (std::fabs(xb) + ex);
          want = gelu_tanh_ref(xb);
          // The slope's bound on [x' - Ex', x' + Ex']: in the left tail its right end's (1 %
          // more for the rounding of the slope's own evaluation), elsewhere the largest.
          const bool library = e.launch == nullptr;
          const double slope = !library && xb + ex < kGeluTailEdge
                                   ? 1.01 * std::fabs(gelu_tanh_slope_ref(xb + ex))
                                   : kGeluMaxSlope;
          const double g = std::fabs(want) + slope * ex;  // |gelu| of the computed x'
          const double flush = kGeluFlush * (std::fabs(xb) + ex);
          bound = slope * ex + kGeluRelErr * g + flush + u16 * ((1 + kGeluRelErr) * g + flush);
          if (xb < r_min_preact_) r_min_preact_ = xb;
        }
        bound += kBf16HalfSubnormal;
        const double got = __bfloat162float(d[at]);
        const bool finite = std::isfinite(got);
        if (!finite) ++r.nonfinite;
        const double diff = std::fabs(got - want);
        if (!(finite && diff <= bound)) {  // written so that NaN fails
          ++r.bad;
          if (r.first.size() < 5) r.first.push_back({m, n, want, got, bound});
        }
        if (finite) {
          diff2 += diff * diff;
          ref2 += want * want;
          r.worst_fraction = std::fmax(r.worst_fraction, diff / bound);
        }
        b2 += bound * bound;
        b4 += bound * bound * bound * bound;
      }
    r.rel_err = r.nonfinite ? INFINITY : ref2 > 0 ? std::sqrt(diff2 / ref2) : diff2 > 0 ? INFINITY : 0;
    // The norm-wise criterion, where enough elements carry the bound; as a relative error.
    r.norm_applied = b4 > 0 && b2 * b2 / b4 >= kNormMinElements;
    r.rel_bound = ref2 > 0 ? kNormFraction * std::sqrt(b2 / ref2) : INFINITY;
    r.pass = r.bad == 0 && (!r.norm_applied || r.rel_err <= r.rel_bound);
    if (errors_report_)
      std::printf("errors %s %dx%dx%d rel_err %.4e rel_bound %.4e norm_applied %d "
                  "worst_element_fraction %.4f%s\n",
                  e.name, M, N, s_.K, r.rel_err, r.rel_bound, int(r.norm_applied),
                  r.worst_fraction,
                  gelu ? (" min_preactivation " + std::to_string(r_min_preact_)).c_str() : "");
    // --gelu-tail: the check must have reached GELU's left tail, or it has tested nothing there.
    if (gelu && require_tail_ && r_min_preact_ > -5.0) {
      char why[160];
      std::snprintf(why, sizeof why, "--gelu-tail: the pre-activations reached only %.3f, not -5 "
                    "(GELU's tail untested at this shape)", r_min_preact_);
      r.other = why;
      r.pass = false;
    }
    r_min_preact_ = INFINITY;
    return r;
  }

  std::vector<unsigned char> output_bytes() override {
    std::vector<unsigned char> b(D_.bytes());
    CUDA_CHECK(cudaMemcpy(b.data(), D_.as<__nv_bfloat16>(), D_.bytes(), cudaMemcpyDeviceToHost));
    return b;
  }
  double work() const override { return 2.0 * s_.M * s_.N * s_.K; }

 private:
  // The exact sum of one operand form and its accumulation bounds, computed once (on first use)
  // in double on the GPU.
  struct Reference {
    std::vector<double> sum;
    std::vector<float> bound0, bound1;
  };
  const Reference& reference(Operands form) {
    Reference& ref = refs_[int(form)];
    if (!ref.sum.empty()) return ref;
    const int M = s_.M, N = s_.N, K = s_.K;
    Decoded a{form, nullptr, nullptr, 1}, b{form, nullptr, nullptr, kScaleBlock};
    switch (form) {
      case Operands::kBf16: a.x = p_.A; b.x = p_.Bt; break;
      case Operands::kFp8Tensor:
        a.x = p_.qA; a.dq = p_.a_dq; b.x = p_.qBt; b.dq = p_.b_dq; break;
      case Operands::kFp8Block:
        a.x = p_.qA_blk; a.dq = p_.a_dq_blk; b.x = p_.qBt_blk; b.dq = p_.b_dq_blk; break;
    }
    const size_t count = size_t(M) * N;
    DeviceBuffer<double> sum(count);
    DeviceBuffer<float> bound0(count), bound1(count);
    const int tiles_m = ceil_div(M, 16);
    reference_kernel<<<dim3(ceil_div(N, 16), tiles_m < 32768 ? tiles_m : 32768), dim3(16, 16)>>>(
        M, N, K, a, b, RefOut{sum.get(), bound0.get(), bound1.get()});
    CUDA_CHECK_LAUNCH();
    ref.sum.resize(count);
    ref.bound0.resize(count);
    ref.bound1.resize(count);
    CUDA_CHECK(cudaMemcpy(ref.sum.data(), sum.get(), sum.bytes(), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(ref.bound0.data(), bound0.get(), bound0.bytes(), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(ref.bound1.data(), bound1.get(), bound1.bytes(), cudaMemcpyDeviceToHost));
    if (c_host_.empty()) {  // the epilogue's inputs, once
      std::vector<__nv_bfloat16> c(count), bias(N);
      CUDA_CHECK(cudaMemcpy(c.data(), p_.C, c.size() * 2, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(bias.data(), p_.bias, bias.size() * 2, cudaMemcpyDeviceToHost));
      c_host_.assign(c.size(), 0.0f);
      bias_host_.assign(N, 0.0f);
      for (size_t k = 0; k < c.size(); ++k) c_host_[k] = __bfloat162float(c[k]);
      for (int n = 0; n < N; ++n) bias_host_[n] = __bfloat162float(bias[n]);
    }
    return ref;
  }

  const std::vector<Fp8Entry>& entries_;
  Shape s_;
  Inputs in_;
  GuardedBuffer D_;
  GemmProblem p_;
  Lt lt_;
  Reference refs_[3];
  std::vector<float> c_host_, bias_host_;
  double r_min_preact_ = INFINITY;  // the smallest pre-activation of the GELU just checked
  bool errors_report_ = false, require_tail_ = false;  // --errors, --gelu-tail
};

}  // namespace

int run_fp8_chapter(const CliSpec& spec_in, const std::vector<Fp8Entry>& entries, int argc,
                    char** argv) {
  static int with_c = 0, gelu_tail = 0, errors = 0;
  Chapter ch;
  ch.cli = spec_in;
  ch.cli.options.push_back({"--with-c", "0|1",
                            "1: beta = -0.5 and C is read (D = alpha A Bᵀ + beta C ...); "
                            "default 0: beta = 0",
                            0, 1, &with_c, nullptr});
  ch.cli.options.push_back({"--gelu-tail", "0|1",
                            "1: alpha 8 times larger, so that the pre-activations reach GELU's "
                            "tails; the check fails a GELU kernel whose inputs did not reach -5",
                            0, 1, &gelu_tail, nullptr});
  ch.cli.options.push_back({"--errors", "0|1",
                            "1: print each check's error, its bounds and the smallest "
                            "pre-activation (tools/fp8_errors.sh)",
                            0, 1, &errors, nullptr});
  ch.precision = "fp8";
  for (const auto& e : entries) {
    KernelEntry k;
    k.name = e.name;
    k.baseline = e.baseline;
    k.role = e.launch || e.role != Role::kStep ? e.role : Role::kBaseline;
    k.precision = e.operands == Operands::kBf16 ? "bf16" : "fp8";
    if (e.accum == Accum::kFp8Fast) {
      k.max_k = kFastAccumMaxK;
      k.max_k_why = "FP8 accumulated without promotion; its error bound passes a sixth of the "
                    "result there (docs/measuring.md): use promoted";
    }
    ch.kernels.push_back(k);
  }
  ch.rate_unit = "TFLOP/s";
  ch.rate_scale = 1e-12;
  ch.device_bytes = [](const Shape& s) {
    const size_t M = s.M, N = s.N, K = s.K;
    // BF16 A, Bᵀ; FP32 copies while quantising; two e4m3 forms; C, D; the reference (a double
    // sum and two float bounds).
    return (M + N) * K * (2 + 4 + 2) + M * N * (2 + 2 + 16) + 2 * kGuardBytes;
  };
  ch.make_case = [&entries](const Shape& s, uint64_t seed) -> std::unique_ptr<Case> {
    return std::make_unique<Fp8Case>(entries, s, seed, with_c ? -0.5f : 0.0f, gelu_tail != 0,
                                     errors != 0);
  };
  return run_chapter(ch, argc, argv);
}
