// The CUDA backend's RandomOps and TrainingOps: pick the operands' device and stream, then
// call the launchers of src/cuda/training/*.cu. No host synchronisation on any path.
#include "core/training_families.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/training/training_kernels.cuh"

namespace ferrite::cuda {
namespace {

cudaStream_t stream_on(const Buffer& b) { return DeviceContext::get(b.device().index).current_stream(); }

class CudaRandomOps final : public RandomOps {
 public:
  void fill(const RandomDesc& desc, const Buffer& out, const Buffer& probs) override {
    DeviceGuard guard(out.device().index);
    training::random_fill(desc, out, probs, stream_on(out));
  }
  void dropout(const DropoutDesc& desc, const Buffer& x, const Buffer& out, const Buffer& mask) override {
    DeviceGuard guard(x.device().index);
    training::dropout(desc, x, out, mask, stream_on(x));
  }
  void dropout_backward(const Buffer& grad, const Buffer& mask, double scale, const Buffer& out) override {
    DeviceGuard guard(grad.device().index);
    training::dropout_backward(grad, mask, scale, out, stream_on(grad));
  }
};

class CudaTrainingOps final : public TrainingOps {
 public:
  void optimizer_step(const OptimizerDesc& desc, const std::vector<OptimizerTensor>& tensors,
                      const Buffer& found_inf) override {
    if (tensors.empty()) return;
    DeviceGuard guard(tensors[0].param.device().index);
    training::optimizer_step(desc, tensors, found_inf, stream_on(tensors[0].param));
  }
  void cross_entropy_forward(const CrossEntropyDesc& d, const Buffer& logits, const Buffer& targets, const Buffer& loss,
                             const Buffer& lse, const Buffer& counted) override {
    DeviceGuard guard(logits.device().index);
    training::cross_entropy_forward(d, logits, targets, loss, lse, counted, stream_on(logits));
  }
  void cross_entropy_backward(const CrossEntropyDesc& d, const Buffer& grad, const Buffer& divisor,
                              const Buffer& logits, const Buffer& targets, const Buffer& lse,
                              const Buffer& out) override {
    DeviceGuard guard(logits.device().index);
    training::cross_entropy_backward(d, grad, divisor, logits, targets, lse, out, stream_on(logits));
  }
};

}  // namespace

std::unique_ptr<RandomOps> make_cuda_random_ops() { return std::make_unique<CudaRandomOps>(); }
std::unique_ptr<TrainingOps> make_cuda_training_ops() { return std::make_unique<CudaTrainingOps>(); }

}  // namespace ferrite::cuda
