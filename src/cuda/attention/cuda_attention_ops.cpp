// The CUDA backend's scaled dot-product attention: own flash-attention kernels for every dtype
// (attention_kernels.cu) on the device's current stream; the backward's per-row scratch comes
// from the device pool.
#include "cuda/attention/attention_kernels.cuh"
#include "cuda/cuda_families.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/shape/shape_runtime.hpp"

namespace ferrite::cuda {
namespace {

class CudaAttentionOps final : public AttentionOps {
 public:
  bool supports(DType dtype) const override {
    return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 || dtype == DType::BF16;
  }

  void forward(const AttentionDesc& desc, const Buffer& q, const Buffer& k, const Buffer& v, const Buffer& mask,
               const Buffer& out, const Buffer& logsumexp) override {
    const int device = q.device().index;
    DeviceGuard guard(device);
    attention::Pointers p;
    p.q = q.data();
    p.k = k.data();
    p.v = v.data();
    p.mask = desc.mask == AttentionMaskKind::None ? nullptr : mask.data();
    p.result = out.data();
    p.logsumexp = logsumexp.data();
    attention::forward(desc, p, DeviceContext::get(device).current_stream());
  }

  void backward(const AttentionDesc& desc, const Buffer& grad_out, const Buffer& q, const Buffer& k, const Buffer& v,
                const Buffer& out, const Buffer& logsumexp, const Buffer& mask, const Buffer& dq, const Buffer& dk,
                const Buffer& dv) override {
    const int device = q.device().index;
    DeviceGuard guard(device);
    const cudaStream_t stream = DeviceContext::get(device).current_stream();
    shape::Scratch delta(device, attention::delta_bytes(desc), stream);
    attention::Pointers p;
    p.q = q.data();
    p.k = k.data();
    p.v = v.data();
    p.mask = desc.mask == AttentionMaskKind::None ? nullptr : mask.data();
    p.out = out.data();
    p.grad_out = grad_out.data();
    p.logsumexp = logsumexp.data();
    p.delta = delta.as<void>();
    p.dq = dq.data();
    p.dk = dk.data();
    p.dv = dv.data();
    attention::backward(desc, p, stream);
  }
};

}  // namespace

std::unique_ptr<AttentionOps> make_cuda_attention_ops() { return std::make_unique<CudaAttentionOps>(); }

}  // namespace ferrite::cuda
