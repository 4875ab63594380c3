#include "gemm.h"

#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "driver.h"
#include "matrix.h"

namespace {

// At most this many multiply-adds, the CPU also computes the product in double precision.
constexpr double kCpuCheckMaxFma = 1 << 27;

template <typename T>
constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;

template <typename T>
class GemmCase : public Case {
 public:
  GemmCase(const std::vector<GemmKernelT<T>>& kernels, const Shape& s, uint64_t seed)
      : kernels_(kernels), s_(s) {
    const int M = s.M, N = s.N, K = s.K;
    bool need_b = false, need_bt = false;
    for (const auto& k : kernels) (k.layout == BLayout::kRowMajor ? need_b : need_bt) = true;
    A_ = DeviceBuffer<T>(size_t(M) * K);
    C_ = GuardedBuffer(size_t(M) * N);  // C between two guard zones (matrix.h)
    fill_random(A_.get(), M, K, seed * 4 + 1);
    // B and Bᵀ hold the same logical matrix (same seed), in the two layouts.
    if (need_b) {
      B_ = DeviceBuffer<T>(size_t(K) * N);
      fill_random(B_.get(), K, N, seed * 4 + 2, /*transposed=*/false);
    }
    if (need_bt) {
      Bt_ = DeviceBuffer<T>(size_t(N) * K);
      fill_random(Bt_.get(), K, N, seed * 4 + 2, /*transposed=*/true);
    }
    ref_host_.resize(size_t(M) * N);
    out_host_.resize(size_t(M) * N);

    // The CPU's double-precision product of exactly the values on the GPU, at small sizes.
    if (double(M) * N * K <= kCpuCheckMaxFma) {
      std::vector<float> a(size_t(M) * K), b(size_t(K) * N);
      auto value = [](uint64_t seed, size_t i) {
        float x = random_uniform(seed, i);
        return kBf16<T> ? bf16_round(x) : x;
      };
      for (size_t i = 0; i < a.size(); ++i) a[i] = value(seed * 4 + 1, i);
      for (size_t i = 0; i < b.size(); ++i) b[i] = value(seed * 4 + 2, i);
      cpu_host_.resize(size_t(M) * N);
      cpu_gemm(M, N, K, a.data(), b.data(), cpu_host_.data());
    }

    if constexpr (kBf16<T>) {
      // The reference is the exact product: on the CPU where it was computed, else on the GPU
      // in double precision. Both round each element to float once, so they agree to the bit
      // but for the rare sum the two round differently (checked here at sizes where both run).
      poison_output();
      gpu_gemm_fp64(M, N, K, A_.get(), need_bt ? Bt_.get() : B_.get(),
                    need_bt ? BLayout::kTransposed : BLayout::kRowMajor, C_.get());
      CUDA_CHECK(cudaDeviceSynchronize());
      exit_if_guard_touched("gpu_gemm_fp64 (the reference itself)");
      CUDA_CHECK(cudaMemcpy(ref_host_.data(), C_.get(), C_.bytes(), cudaMemcpyDeviceToHost));
      if (!cpu_host_.empty()) {
        Tolerance one_rounding{0, 1.0 / (1 << 23), 1.0 / (1 << 23)};
        VerifyResult v = verify(ref_host_.data(), cpu_host_.data(), M, N, one_rounding);
        if (!v.pass) {
          print_mismatches(stderr, "gpu_gemm_fp64 (the reference itself)", v);
          std::exit(kExitFail);
        }
        ref_host_ = cpu_host_;
      }
      tol_ = tensor_core_tolerance(K, rms(ref_host_.data(), int64_t(M) * N));
    } else {
      // The reference: the first cuBLAS entry.
      for (size_t i = 0; i < kernels.size() && ref_ == SIZE_MAX; ++i)
        if (!kernels[i].launch) ref_ = i;
      poison_output();
      launch(ref_);
      CUDA_CHECK(cudaDeviceSynchronize());
      exit_if_guard_touched(kernels[ref_].name);
      CUDA_CHECK(cudaMemcpy(ref_host_.data(), C_.get(), C_.bytes(), cudaMemcpyDeviceToHost));
      tol_ = gemm_tolerance(kFp32Roundoff, K, rms(ref_host_.data(), int64_t(M) * N));
    }
    // Say so where the check has lost the power to see one wrong product term.
    const double bound = tol_.atol + tol_.rtol * rms(ref_host_.data(), int64_t(M) * N);
    if (bound > kTypicalTerm)
      std::fprintf(stderr,
                   "note: at K = %d the elementwise bound (%.3g) exceeds a typical product term "
                   "(%.2g): one wrong term in one element could pass\n",
                   K, bound, kTypicalTerm);
  }

  void launch(size_t i) override {
    const GemmKernelT<T>& k = kernels_[i];
    const T* B = k.layout == BLayout::kRowMajor ? B_.get() : Bt_.get();
    if (k.launch)
      k.launch(s_.M, s_.N, s_.K, A_.get(), B, C_.get());
    else
      (k.math == CublasMath::kPedantic && !kBf16<T> ? pedantic_ : default_)
          .gemm(s_.M, s_.N, s_.K, A_.get(), B, k.layout, C_.get());
  }

  void poison_output() override { C_.poison(); }
  std::string check_guards() override { return C_.touched("C"); }

  std::optional<VerifyResult> verify_output(size_t i) override {
    CUDA_CHECK(cudaMemcpy(out_host_.data(), C_.get(), C_.bytes(), cudaMemcpyDeviceToHost));
    if (i == ref_) {
      // The FP32 reference against the CPU's double-precision product, where there is one.
      if (cpu_host_.empty()) return std::nullopt;
      return verify(out_host_.data(), cpu_host_.data(), s_.M, s_.N, tol_);
    }
    return verify(out_host_.data(), ref_host_.data(), s_.M, s_.N, tol_);
  }

  std::vector<unsigned char> output_bytes() override {
    std::vector<unsigned char> b(C_.bytes());
    CUDA_CHECK(cudaMemcpy(b.data(), C_.get(), C_.bytes(), cudaMemcpyDeviceToHost));
    return b;
  }

  double work() const override { return 2.0 * s_.M * s_.N * s_.K; }

 private:
  // The reference run in the constructor must not write outside C either.
  void exit_if_guard_touched(const char* who) {
    if (const std::string t = check_guards(); !t.empty()) {
      std::fprintf(stderr, "%dx%dx%d %s: FAIL %s\n", s_.M, s_.N, s_.K, who, t.c_str());
      std::exit(kExitFail);
    }
  }

  const std::vector<GemmKernelT<T>>& kernels_;
  Shape s_;
  Cublas pedantic_{CublasMath::kPedantic}, default_{CublasMath::kDefault};
  DeviceBuffer<T> A_, B_, Bt_;
  GuardedBuffer C_;
  size_t ref_ = SIZE_MAX;  // FP32: the cuBLAS entry that is the reference
  std::vector<float> ref_host_, out_host_, cpu_host_;
  Tolerance tol_;
};

template <typename T>
int run_gemm(const CliSpec& spec, const std::vector<GemmKernelT<T>>& kernels, int argc,
             char** argv) {
  Chapter ch;
  ch.cli = spec;
  ch.precision = kBf16<T> ? "bf16" : "fp32";
  bool need_b = false, need_bt = false;
  for (const auto& k : kernels) {
    (k.layout == BLayout::kRowMajor ? need_b : need_bt) = true;
    // Baseline: the first cuBLAS entry with the same B layout (none for that entry itself).
    std::string baseline;
    for (const auto& b : kernels)
      if (!b.launch && b.layout == k.layout && baseline.empty()) baseline = b.name;
    if (baseline == k.name) baseline.clear();
    KernelEntry entry;
    entry.name = k.name;
    entry.baseline = baseline;
    entry.role = k.launch ? k.role : Role::kBaseline;
    ch.kernels.push_back(entry);
  }
  ch.rate_unit = "TFLOP/s";
  ch.rate_scale = 1e-12;
  ch.device_bytes = [=](const Shape& s) {
    size_t M = s.M, N = s.N, K = s.K;
    return sizeof(T) * (M * K + (need_b ? K * N : 0) + (need_bt ? N * K : 0)) +
           sizeof(float) * M * N + 2 * kGuardBytes;
  };
  ch.make_case = [&kernels](const Shape& s, uint64_t seed) -> std::unique_ptr<Case> {
    return std::make_unique<GemmCase<T>>(kernels, s, seed);
  };
  return run_chapter(ch, argc, argv);
}

}  // namespace

int run_gemm_chapter(const CliSpec& spec, const std::vector<GemmKernel>& kernels, int argc,
                     char** argv) {
  return run_gemm(spec, kernels, argc, argv);
}

int run_gemm_chapter(const CliSpec& spec, const std::vector<Bf16GemmKernel>& kernels, int argc,
                     char** argv) {
  return run_gemm(spec, kernels, argc, argv);
}
