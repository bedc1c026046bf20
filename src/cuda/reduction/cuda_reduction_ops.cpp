// The cuda backend's ReductionOps: picks the device and stream of the operands, then calls
// the launchers of src/cuda/reduction/*.cu. No host synchronisation on any path.
#include "core/reduction_support.hpp"
#include "cuda/cuda_families.hpp"
#include "cuda/reduction/reduction_kernels.cuh"
#include "cuda/runtime/device_context.hpp"

namespace ferrite::cuda {
namespace reduction {

std::shared_ptr<Storage> scratch(const Buffer& like, std::size_t bytes) {
  return backend(like.device()).allocate(bytes, like.device());
}

}  // namespace reduction

namespace {

cudaStream_t stream_on(const Buffer& b) { return DeviceContext::get(b.device().index).current_stream(); }

class CudaReductionOps final : public ReductionOps {
 public:
  bool supports(Op op, DType dtype) const override { return detail::reduction_supported(op, dtype); }

  void reduce(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e) override {
    DeviceGuard guard(x.device().index);
    if (op == Op::Sum || op == Op::Mean || op == Op::Prod)
      reduction::reduce_arithmetic(op, x, out, e, stream_on(x));
    else
      reduction::reduce_extreme(op, x, Buffer(), out, e, stream_on(x));
  }
  void arg_reduce(Op op, const Buffer& x, const Buffer& indices, const ReduceExtents& e) override {
    DeviceGuard guard(x.device().index);
    reduction::arg_reduce(op, x, indices, e, stream_on(x));
  }
  void masked_reduce(Op op, const Buffer& x, const Buffer& mask, const Buffer& out, const ReduceExtents& e) override {
    DeviceGuard guard(x.device().index);
    reduction::reduce_extreme(op, x, mask, out, e, stream_on(x));
  }
  void prod_backward(const Buffer& grad, const Buffer& x, const Buffer& out, const ReduceExtents& e) override {
    DeviceGuard guard(x.device().index);
    reduction::prod_backward(grad, x, out, e, stream_on(x));
  }
  void scan(Op op, const Buffer& x, const Buffer& out, const Buffer& indices, const ReduceExtents& e) override {
    DeviceGuard guard(x.device().index);
    if (op == Op::Cummax || op == Op::Cummin)
      reduction::scan_extreme(op, x, out, indices, e, stream_on(x));
    else
      reduction::scan_arithmetic(op, x, out, e, stream_on(x));
  }
  void softmax(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e) override {
    DeviceGuard guard(x.device().index);
    reduction::softmax(op, x, out, e, stream_on(x));
  }
  void softmax_backward(Op op, const Buffer& grad, const Buffer& y, const Buffer& dx, const ReduceExtents& e) override {
    DeviceGuard guard(y.device().index);
    reduction::softmax_backward(op, grad, y, dx, e, stream_on(y));
  }
  void layer_norm(const Buffer& x, const Buffer& weight, const Buffer& bias, const Buffer& y, const Buffer& mean,
                  const Buffer& rstd, std::int64_t rows, std::int64_t cols, double eps) override {
    DeviceGuard guard(x.device().index);
    reduction::norm_forward(true, x, weight, bias, y, mean, rstd, rows, cols, eps, stream_on(x));
  }
  void layer_norm_backward(const Buffer& grad, const Buffer& x, const Buffer& mean, const Buffer& rstd,
                           const Buffer& weight, const Buffer& residual, const Buffer& dx, const Buffer& dx_cast,
                           const Buffer& dweight, const Buffer& dbias, std::int64_t rows, std::int64_t cols) override {
    DeviceGuard guard(x.device().index);
    reduction::norm_backward(true, grad, x, mean, rstd, weight, residual, dx, dx_cast, dweight, dbias, rows, cols,
                             stream_on(x));
  }
  void rms_norm(const Buffer& x, const Buffer& weight, const Buffer& y, const Buffer& rstd, std::int64_t rows,
                std::int64_t cols, double eps) override {
    DeviceGuard guard(x.device().index);
    reduction::norm_forward(false, x, weight, Buffer(), y, Buffer(), rstd, rows, cols, eps, stream_on(x));
  }
  void rms_norm_backward(const Buffer& grad, const Buffer& x, const Buffer& rstd, const Buffer& weight,
                         const Buffer& residual, const Buffer& dx, const Buffer& dx_cast, const Buffer& dweight,
                         std::int64_t rows, std::int64_t cols) override {
    DeviceGuard guard(x.device().index);
    reduction::norm_backward(false, grad, x, Buffer(), rstd, weight, residual, dx, dx_cast, dweight, Buffer(), rows,
                             cols, stream_on(x));
  }
};

}  // namespace

std::unique_ptr<ReductionOps> make_cuda_reduction_ops() { return std::make_unique<CudaReductionOps>(); }

}  // namespace ferrite::cuda
