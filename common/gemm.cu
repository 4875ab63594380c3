#include "gemm.h"

#include <memory>
#include <optional>
#include <string>

#include "driver.h"
#include "matrix.h"

namespace {

// At most this many multiply-adds, the CPU also computes the product in double precision,
// to check the cuBLAS reference (and our operand swap) independently.
constexpr double kCpuCheckMaxFma = 1 << 27;

class GemmCase : public Case {
 public:
  GemmCase(const std::vector<GemmKernel>& kernels, const Shape& s, uint64_t seed)
      : kernels_(kernels), s_(s) {
    const int M = s.M, N = s.N, K = s.K;
    bool need_b = false, need_bt = false;
    for (const auto& k : kernels) (k.layout == BLayout::kRowMajor ? need_b : need_bt) = true;
    A_ = DeviceBuffer<float>(size_t(M) * K);
    C_ = DeviceBuffer<float>(size_t(M) * N);
    fill_random(A_.get(), M, K, seed * 4 + 1);
    // B and Bᵀ hold the same logical matrix (same seed), in the two layouts.
    if (need_b) {
      B_ = DeviceBuffer<float>(size_t(K) * N);
      fill_random(B_.get(), K, N, seed * 4 + 2, /*transposed=*/false);
    }
    if (need_bt) {
      Bt_ = DeviceBuffer<float>(size_t(N) * K);
      fill_random(Bt_.get(), K, N, seed * 4 + 2, /*transposed=*/true);
    }
    // The reference: the first cuBLAS entry.
    for (size_t i = 0; i < kernels.size() && ref_ == SIZE_MAX; ++i)
      if (!kernels[i].launch) ref_ = i;
    poison_output();
    launch(ref_);
    CUDA_CHECK(cudaDeviceSynchronize());
    ref_host_.resize(size_t(M) * N);
    out_host_.resize(size_t(M) * N);
    CUDA_CHECK(cudaMemcpy(ref_host_.data(), C_.get(), C_.bytes(), cudaMemcpyDeviceToHost));
    tol_ = gemm_tolerance(kFp32Roundoff, K, rms(ref_host_.data(), int64_t(M) * N));

    if (double(M) * N * K <= kCpuCheckMaxFma) {
      std::vector<float> a(size_t(M) * K), b(size_t(K) * N);
      for (size_t i = 0; i < a.size(); ++i) a[i] = random_uniform(seed * 4 + 1, i);
      for (size_t i = 0; i < b.size(); ++i) b[i] = random_uniform(seed * 4 + 2, i);
      cpu_host_.resize(size_t(M) * N);
      cpu_gemm(M, N, K, a.data(), b.data(), cpu_host_.data());
    }
  }

  void launch(size_t i) override {
    const GemmKernel& k = kernels_[i];
    const float* B = k.layout == BLayout::kRowMajor ? B_.get() : Bt_.get();
    if (k.launch)
      k.launch(s_.M, s_.N, s_.K, A_.get(), B, C_.get());
    else
      cublas_.sgemm(s_.M, s_.N, s_.K, A_.get(), B, k.layout, C_.get());
  }

  void poison_output() override { poison(C_.get(), C_.bytes()); }

  std::optional<VerifyResult> verify_output(size_t i) override {
    CUDA_CHECK(cudaMemcpy(out_host_.data(), C_.get(), C_.bytes(), cudaMemcpyDeviceToHost));
    if (i == ref_) {
      // The reference against the CPU's double-precision product, where there is one.
      if (cpu_host_.empty()) return std::nullopt;
      return verify(out_host_.data(), cpu_host_.data(), s_.M, s_.N, tol_);
    }
    return verify(out_host_.data(), ref_host_.data(), s_.M, s_.N, tol_);
  }

  double work() const override { return 2.0 * s_.M * s_.N * s_.K; }

 private:
  const std::vector<GemmKernel>& kernels_;
  Shape s_;
  Cublas cublas_;
  DeviceBuffer<float> A_, B_, Bt_, C_;
  size_t ref_ = SIZE_MAX;
  std::vector<float> ref_host_, out_host_, cpu_host_;
  Tolerance tol_;
};

}  // namespace

int run_gemm_chapter(const CliSpec& spec, const std::vector<GemmKernel>& kernels, int argc,
                     char** argv) {
  Chapter ch;
  ch.cli = spec;
  bool need_b = false, need_bt = false;
  for (const auto& k : kernels) {
    (k.layout == BLayout::kRowMajor ? need_b : need_bt) = true;
    // Baseline: the cuBLAS entry with the same B layout.
    std::string baseline;
    for (const auto& b : kernels)
      if (!b.launch && b.layout == k.layout) baseline = b.name;
    ch.kernels.push_back({k.name, k.launch ? baseline : ""});
  }
  ch.rate_unit = "TFLOP/s";
  ch.rate_scale = 1e-12;
  ch.device_bytes = [=](const Shape& s) {
    size_t M = s.M, N = s.N, K = s.K;
    return sizeof(float) * (M * K + M * N + (need_b ? K * N : 0) + (need_bt ? N * K : 0));
  };
  ch.make_case = [&kernels](const Shape& s, uint64_t seed) -> std::unique_ptr<Case> {
    return std::make_unique<GemmCase>(kernels, s, seed);
  };
  return run_chapter(ch, argc, argv);
}
