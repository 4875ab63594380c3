#include "02_transpose_copy/copy_chapter.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "common/check.h"
#include "common/driver.h"
#include "common/matrix.h"
#include "common/reference.h"

namespace {

// One size: the input (random, from the seed), one output buffer shared by all kernels (between
// two guard zones, common/matrix.h), and the input on the host, against which every output is
// compared exactly.
class CopyCase : public Case {
 public:
  CopyCase(const std::vector<CopyKernel>& kernels, const Shape& s, uint64_t seed)
      : kernels_(kernels), rows_(s.M), cols_(s.N), n_(size_t(s.M) * s.N), in_(n_), out_(n_) {
    fill_random(in_.get(), rows_, cols_, seed);
    in_host_.resize(n_);
    out_host_.resize(n_);
    CUDA_CHECK(cudaMemcpy(in_host_.data(), in_.get(), in_.bytes(), cudaMemcpyDeviceToHost));
  }

  void launch(size_t i) override {
    const CopyKernel& k = kernels_[i];
    if (k.launch) {
      k.launch(rows_, cols_, in_.get(), out_.get());
    } else {
      if (!cublas_) cublas_ = std::make_unique<Cublas>();  // only when a cuBLAS row runs
      cublas_->transpose(rows_, cols_, in_.get(), out_.get());
    }
  }

  void poison_output() override { out_.poison(); }
  std::string check_guards() override { return out_.touched("out"); }

  std::vector<unsigned char> output_bytes() override {
    std::vector<unsigned char> b(out_.bytes());
    CUDA_CHECK(cudaMemcpy(b.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
    return b;
  }

  std::optional<VerifyResult> verify_output(size_t i) override {
    CUDA_CHECK(cudaMemcpy(out_host_.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
    const Tolerance exact{};  // all zero: every element must be bit-identical
    if (kernels_[i].op == CopyOp::kCopy)
      return verify(out_host_.data(), in_host_.data(), rows_, cols_, exact);
    return verify(out_host_.data(), transposed_input().data(), cols_, rows_, exact);
  }

  double work() const override { return 2.0 * sizeof(float) * rows_ * cols_; }  // read + write

 private:
  // The expected transpose (cols x rows), computed on the host the first time it is needed.
  const std::vector<float>& transposed_input() {
    if (ref_t_.empty()) {
      ref_t_.resize(n_);
      constexpr int kB = 64;  // in blocks, so that both sides stay in the CPU's cache
      for (int r0 = 0; r0 < rows_; r0 += kB)
        for (int c0 = 0; c0 < cols_; c0 += kB)
          for (int r = r0; r < std::min(r0 + kB, rows_); ++r)
            for (int c = c0; c < std::min(c0 + kB, cols_); ++c)
              ref_t_[size_t(c) * rows_ + r] = in_host_[size_t(r) * cols_ + c];
    }
    return ref_t_;
  }

  const std::vector<CopyKernel>& kernels_;
  int rows_, cols_;
  size_t n_;
  DeviceBuffer<float> in_;
  GuardedBuffer out_;
  std::unique_ptr<Cublas> cublas_;
  std::vector<float> in_host_, out_host_, ref_t_;
};

}  // namespace

int run_copy_chapter(const CliSpec& spec, const std::vector<CopyKernel>& kernels, int argc,
                     char** argv) {
  Chapter ch;
  ch.cli = spec;
  ch.cli.has_k = false;  // sizes are rows x cols: --m rows, --n cols
  for (const CopyKernel& k : kernels) {
    KernelEntry entry;
    entry.name = k.name;
    entry.baseline = k.baseline;
    entry.role = k.role;
    ch.kernels.push_back(entry);
  }
  ch.rate_unit = "GB/s";
  ch.rate_scale = 1e-9;
  ch.device_bytes = [](const Shape& s) {
    return 2 * sizeof(float) * size_t(s.M) * s.N + 2 * kGuardBytes;
  };
  ch.make_case = [&kernels](const Shape& s, uint64_t seed) -> std::unique_ptr<Case> {
    return std::make_unique<CopyCase>(kernels, s, seed);
  };
  return run_chapter(ch, argc, argv);
}
