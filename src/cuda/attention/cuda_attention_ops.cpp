// The CUDA backend's scaled dot-product attention on the device's current stream. Two routes,
// both computing ferrite's semantics (attention_ops.hpp) exactly, chosen per call:
//  - cuDNN's fused SDPA (cudnn_sdpa.cpp) for F16/BF16 problems it takes as they are: no mask
//    or causal only, head dims multiples of 8 up to 256, and a graph cuDNN can plan on this
//    device (tried once per shape, cached either way);
//  - the own flash-attention kernels (attention_kernels.cu) for everything else: F32/F64,
//    Bool and additive masks (fully masked rows), other head dims, shapes cuDNN declines.
// Forward and backward choose independently: both routes read and write the same out and
// logsumexp (natural log of the scaled scores), so either backward takes either forward's.
// Inputs that are views (q/k/v permuted out of one projection) are read in place by cuDNN
// only: reads_views says yes exactly when cuDNN has a plan for the call with those strides;
// the own kernels always get dense inputs (the front end copies them).
// The own backward's per-row scratch and cuDNN's work area come from the device pool.
#include <cstdint>
#include <initializer_list>

#include "cuda/attention/attention_kernels.cuh"
#include "cuda/attention/cudnn_sdpa.hpp"
#include "cuda/cuda_families.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/shape/shape_runtime.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda {
namespace {

// cuDNN's kernels move q/k/v/out with 16-byte vector loads; the front end's dense Buffers
// (Tensor::buffer) and the views it passes (attention_ops.hpp) start on that grid, checked
// here so no route depends on it silently.
bool aligned16(std::initializer_list<const void*> pointers) {
  for (const void* p : pointers)
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  return true;
}

// Causal grouped-query backward stays on the own kernels: on the H200 run of f9e7727 cuDNN
// 9.14's dv for B=2, Hq=8, Hkv=2, S=200, D=128 BF16 causal differed from the CPU backend by
// 18% (key 0 of batch 1) while the own kernels matched (CudnnAttention.BothRoutesAgree...).
bool cudnn_backward_allowed(const AttentionDesc& desc) { return !(desc.causal && desc.heads_q != desc.heads_kv); }

// The own kernels index dense row-major operands. A view reaches them only if cuDNN declined a
// call that reads_views accepted, which its cached plan rules out: say so rather than read
// the wrong elements.
void check_dense(const AttentionDesc& desc, const char* op) {
  FERRITE_CHECK(desc.dense(), Unsupported, op, ": cuDNN declined strided inputs it had accepted; the own kernels ",
                "take dense inputs only");
}

class CudaAttentionOps final : public AttentionOps {
 public:
  bool supports(DType dtype) const override {
    return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 || dtype == DType::BF16;
  }

  // The front end guarantees the views' alignment (attention_ops.hpp); whether cuDNN plans
  // the graph with these strides is settled here, once per problem (the graph is cached), so
  // forward/backward below never meet a view they cannot run.
  bool reads_views(const AttentionDesc& desc, bool backward, Device device) override {
    if (!cudnn_sdpa::eligible(desc) || (backward && !cudnn_backward_allowed(desc))) return false;
    DeviceGuard guard(device.index);
    return cudnn_sdpa::plans(desc, backward, device.index, DeviceContext::get(device.index).current_stream());
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
    const cudaStream_t stream = DeviceContext::get(device).current_stream();
    if (cudnn_sdpa::eligible(desc) && aligned16({p.q, p.k, p.v, p.result, p.logsumexp}) &&
        cudnn_sdpa::forward(desc, p, device, stream))
      return;
    check_dense(desc, "scaled_dot_product_attention");
    attention::forward(desc, p, stream);
  }

  void backward(const AttentionDesc& desc, const Buffer& grad_out, const Buffer& q, const Buffer& k, const Buffer& v,
                const Buffer& out, const Buffer& logsumexp, const Buffer& mask, const Buffer& dq, const Buffer& dk,
                const Buffer& dv) override {
    const int device = q.device().index;
    DeviceGuard guard(device);
    const cudaStream_t stream = DeviceContext::get(device).current_stream();
    attention::Pointers p;
    p.q = q.data();
    p.k = k.data();
    p.v = v.data();
    p.mask = desc.mask == AttentionMaskKind::None ? nullptr : mask.data();
    p.out = out.data();
    p.grad_out = grad_out.data();
    p.logsumexp = logsumexp.data();
    p.dq = dq.data();
    p.dk = dk.data();
    p.dv = dv.data();
    if (cudnn_backward_allowed(desc) && cudnn_sdpa::eligible(desc) &&
        aligned16({p.q, p.k, p.v, p.out, p.grad_out, p.logsumexp, p.dq, p.dk, p.dv}) &&
        cudnn_sdpa::backward(desc, p, device, stream))
      return;
    check_dense(desc, "scaled_dot_product_attention_backward");
    shape::Scratch delta(device, attention::delta_bytes(desc), stream);
    p.delta = delta.as<void>();
    attention::backward(desc, p, stream);
  }
};

}  // namespace

std::unique_ptr<AttentionOps> make_cuda_attention_ops() { return std::make_unique<CudaAttentionOps>(); }

}  // namespace ferrite::cuda
