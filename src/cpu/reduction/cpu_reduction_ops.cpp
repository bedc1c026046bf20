// The cpu backend's ReductionOps: routes each call to its topic's file.
#include "core/reduction_support.hpp"
#include "cpu/cpu_families.hpp"
#include "cpu/reduction/cpu_reduction.hpp"

namespace ferrite::cpu {
namespace {

class CpuReductionOps final : public ReductionOps {
 public:
  bool supports(Op op, DType dtype) const override { return detail::reduction_supported(op, dtype); }
  void reduce(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e) override {
    reduction::reduce(op, x, out, e);
  }
  void arg_reduce(Op op, const Buffer& x, const Buffer& indices, const ReduceExtents& e) override {
    reduction::arg_reduce(op, x, indices, e);
  }
  void masked_reduce(Op op, const Buffer& x, const Buffer& mask, const Buffer& out, const ReduceExtents& e) override {
    reduction::masked_reduce(op, x, mask, out, e);
  }
  void prod_backward(const Buffer& grad, const Buffer& x, const Buffer& out, const ReduceExtents& e) override {
    reduction::prod_backward(grad, x, out, e);
  }
  void scan(Op op, const Buffer& x, const Buffer& out, const Buffer& indices, const ReduceExtents& e) override {
    reduction::scan(op, x, out, indices, e);
  }
  void softmax(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e) override {
    reduction::softmax(op, x, out, e);
  }
  void softmax_backward(Op op, const Buffer& grad, const Buffer& y, const Buffer& dx, const ReduceExtents& e) override {
    reduction::softmax_backward(op, grad, y, dx, e);
  }
  void layer_norm(const Buffer& x, const Buffer& weight, const Buffer& bias, const Buffer& y, const Buffer& mean,
                  const Buffer& rstd, std::int64_t rows, std::int64_t cols, double eps) override {
    reduction::layer_norm(x, weight, bias, y, mean, rstd, rows, cols, eps);
  }
  void layer_norm_backward(const Buffer& grad, const Buffer& x, const Buffer& mean, const Buffer& rstd,
                           const Buffer& weight, const Buffer& residual, const Buffer& dx, const Buffer& dx_cast,
                           const Buffer& dweight, const Buffer& dbias, std::int64_t rows, std::int64_t cols) override {
    reduction::layer_norm_backward(grad, x, mean, rstd, weight, residual, dx, dx_cast, dweight, dbias, rows, cols);
  }
  void rms_norm(const Buffer& x, const Buffer& weight, const Buffer& y, const Buffer& rstd, std::int64_t rows,
                std::int64_t cols, double eps) override {
    reduction::rms_norm(x, weight, y, rstd, rows, cols, eps);
  }
  void rms_norm_backward(const Buffer& grad, const Buffer& x, const Buffer& rstd, const Buffer& weight,
                         const Buffer& residual, const Buffer& dx, const Buffer& dx_cast, const Buffer& dweight,
                         std::int64_t rows, std::int64_t cols) override {
    reduction::rms_norm_backward(grad, x, rstd, weight, residual, dx, dx_cast, dweight, rows, cols);
  }
};

}  // namespace

std::unique_ptr<ReductionOps> make_cpu_reduction_ops() { return std::make_unique<CpuReductionOps>(); }

}  // namespace ferrite::cpu
