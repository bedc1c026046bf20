// The CUDA backend's scaled dot-product attention on the device's current stream. Two routes,
// both computing ferrite's semantics (attention_ops.hpp) exactly, chosen per call:
//  - cuDNN's fused SDPA (cudnn_sdpa.cpp) for F16/BF16 problems it takes as they are: no mask
//    or causal only (and Bool or additive masks: below), head dims multiples of 8 up to 256,
//    and a graph cuDNN can plan on this device (tried once per shape, cached either way);
//  - the own flash-attention kernels (attention_kernels.cu) for everything else: F32/F64,
//    other head dims, shapes cuDNN declines (and masks with FERRITE_ATTENTION_CUDNN_MASKS=off).
// A F16/BF16 backward that cuDNN does not take but the tiled F32 kernels do (D = Dv in {64, 128},
// no mask: long sequences, whose deterministic cuDNN work area is too large) runs on those, its
// operands widened to F32 and its gradients rounded once (the elementwise family's cast),
// multiplied in 1xTF32 (backward_in_f32), unless the F16/BF16 tensor-core kernels take it first
// (backward_in_dtype: the operands as they are, no copies). Those also take masked F16/BF16
// backwards with D = Dv in {64, 128} (Bool or additive, any broadcast) that cuDNN does not
// (FERRITE_ATTENTION_CUDNN_MASKS=off, no plan) and the F32 copies never do: without them such a
// backward runs on the general SIMT kernels.
// Forward and backward choose independently: both routes read and write the same out and
// logsumexp (natural log of the scaled scores), so either backward takes either forward's.
// Inputs that are views (q/k/v permuted out of one projection) are read in place by cuDNN
// only: reads_views says yes exactly when cuDNN has a plan for the call with those strides;
// the own kernels always get dense inputs (the front end copies them).
// The own backward's per-row scratch and cuDNN's work area come from the device pool.
// Masked F16/BF16 forwards (Bool or additive, causal or not) go to cuDNN too, the mask as its
// additive bias, fully masked rows then set to ferrite's out = 0, logsumexp = -inf
// (cudnn_sdpa::masked_eligible), and so do their backwards (the same bias, the dead rows'
// Stats +inf so that their gradients are 0);
// FERRITE_ATTENTION_CUDNN_MASKS=off keeps both off it. A F16/BF16 forward
// that cuDNN does not take runs on the F16/BF16 tensor-core forward where it fits
// (forward_in_dtype), else on the general kernels. Dropout never goes to cuDNN (its dropout
// stream is not ferrite's): F16/BF16 problems with D = Dv in {64, 128} take the tensor-core
// kernels' dropout instantiations both ways, the rest the general kernels'.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "cuda/attention/attention_kernels.cuh"
#include "cuda/attention/cudnn_sdpa.hpp"
#include "core/borrowed_buffer.hpp"
#include "core/elementwise_layout.hpp"
#include "cuda/cuda_families.hpp"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/runtime/cuda_check.hpp"
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

// The own kernels index dense row-major operands. A view reaches them only if cuDNN declined a
// call that reads_views accepted, which its cached plan rules out: say so rather than read
// the wrong elements.
void check_dense(const AttentionDesc& desc, const char* op) {
  FERRITE_CHECK(desc.dense(), Unsupported, op, ": cuDNN declined strided inputs it had accepted; the own kernels ",
                "take dense inputs only");
}

std::int64_t elements(std::int64_t batch, std::int64_t heads, std::int64_t rows, std::int64_t dim) {
  return batch * heads * rows * dim;
}

// A two-way switch in environment variable `name`: true when it is unset, empty or `default_value`,
// false when it is `other_value`; anything else is an error rather than a silent default. The
// callers read it once (a function-local static).
bool env_switch(const char* name, const char* default_value, const char* other_value) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0' || std::strcmp(v, default_value) == 0) return true;
  FERRITE_CHECK(std::strcmp(v, other_value) == 0, InvalidArgument, name, " is \"", v, "\": expected ", default_value,
                " or ", other_value);
  return false;
}

// How backward_in_f32 multiplies, read once from FERRITE_ATTENTION_HALF_VIA_F32: unset or "1x"
// (the default), 1xTF32 (Tf32Mode::single); "3x", as an F32 backward (FERRITE_ATTENTION_F32_TF32X3
// then chooses, 3xTF32 by default): the A/B of the two, and the way back should 1xTF32 fail a
// problem.
bool half_via_single_tf32() {
  static const bool single = env_switch("FERRITE_ATTENTION_HALF_VIA_F32", "1x", "3x");
  return single;
}

// How a F16/BF16 backward that cuDNN does not take runs, read once from
// FERRITE_ATTENTION_HALF_BWD: unset or "mma" (the default), on the tensor cores in the dtype
// itself where attention_half_mma_bwd.cu takes the problem (backward_half_mma: no F32 copies,
// P and dS rounded to the dtype as cuDNN and FlashAttention do), else via F32
// (backward_in_f32); "f32", always via F32: the A/B of the two and the way back should the
// half kernels fail a problem.
bool half_backward_in_dtype() {
  static const bool in_dtype = env_switch("FERRITE_ATTENTION_HALF_BWD", "mma", "f32");
  return in_dtype;
}

// The F16/BF16 backward on attention_half_mma_bwd.cu's kernels, its delta scratch from the
// pool; false, having queued and allocated nothing, when they do not take the problem.
bool backward_in_dtype(const AttentionDesc& desc, attention::Pointers p, int device, cudaStream_t stream) {
  if (!half_backward_in_dtype() || !attention::half_mma_backward_fits(desc, p)) return false;
  shape::Scratch delta(device, attention::delta_bytes(desc), stream);
  p.delta = delta.as<void>();
  return attention::backward_half_mma(desc, p, stream);
}

// A F16/BF16 backward on the tiled F32 kernels (tensor cores): q, k, v, out and grad_out
// widened to F32 (exactly), the F32 backward, dq/dk/dv rounded once to the dtype. The widened
// values are exact in TF32 too (F16's 11 and BF16's 8 significant bits within TF32's 11), so by
// default the tensor cores multiply them in 1xTF32 (attention_f32_tf32x3_bwd.cu): the products
// q.k and dO.v are exact with F32 sums, and only the F32 intermediates P and dS are rounded, to
// TF32 (2^-11 relative), where cuDNN and FlashAttention round them to the input dtype (F16:
// 2^-11 as well, BF16: 2^-8); the gradients' own final rounding to F16/BF16 is as large or
// larger. 3xTF32 (FERRITE_ATTENTION_HALF_VIA_F32=3x) is the F32 backward of the same values, as
// accurate as the own F16/BF16 kernels' F32 loops on the CUDA cores, at three times 1xTF32's
// MMAs. Both are an order of magnitude faster than those loops. The F32 copies take 2x the
// bytes of the eight operands (at most 24x one operand's bytes with them: within the issue's
// 4x-of-8 memory bound). False, having queued nothing, when the tiled kernels do not take the
// problem.
bool backward_in_f32(const AttentionDesc& desc, const attention::Pointers& p, int device, cudaStream_t stream) {
  if (desc.dtype != DType::F16 && desc.dtype != DType::BF16) return false;
  AttentionDesc wide = desc;
  wide.dtype = DType::F32;
  if (!attention::tiled_backward_f32_takes(wide)) return false;  // the pool's blocks are 16-byte aligned
  const std::int64_t nq = elements(desc.batch, desc.heads_q, desc.seq_q, desc.head_dim),
                     nk = elements(desc.batch, desc.heads_kv, desc.seq_k, desc.head_dim),
                     nv = elements(desc.batch, desc.heads_kv, desc.seq_k, desc.value_dim),
                     no = elements(desc.batch, desc.heads_q, desc.seq_q, desc.value_dim);
  auto f32 = [&](std::int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); };
  shape::Scratch q(device, f32(nq), stream), k(device, f32(nk), stream), v(device, f32(nv), stream),
      out(device, f32(no), stream), grad_out(device, f32(no), stream), dq(device, f32(nq), stream),
      dk(device, f32(nk), stream), dv(device, f32(nv), stream),
      delta(device, attention::delta_bytes(wide), stream);
  // from (of `from_dtype`) into to (of `to_dtype`), n elements, by the elementwise family's cast
  // over Buffers that borrow the operands and scratch: exact F16/BF16 -> F32, and round to
  // nearest even back.
  auto cast = [&](const void* from, DType from_dtype, const void* to, DType to_dtype, std::int64_t n) {
    if (n > 0)
      kernels::cast(detail::borrowed_buffer(from, from_dtype, n, Device::cuda(device)),
                    detail::borrowed_buffer(to, to_dtype, n, Device::cuda(device)), contiguous_layout(n, 1), stream);
  };
  cast(p.q, desc.dtype, q.as<void>(), DType::F32, nq);
  cast(p.k, desc.dtype, k.as<void>(), DType::F32, nk);
  cast(p.v, desc.dtype, v.as<void>(), DType::F32, nv);
  cast(p.out, desc.dtype, out.as<void>(), DType::F32, no);
  cast(p.grad_out, desc.dtype, grad_out.as<void>(), DType::F32, no);
  attention::Pointers w;
  w.q = q.as<void>();
  w.k = k.as<void>();
  w.v = v.as<void>();
  w.out = out.as<void>();
  w.grad_out = grad_out.as<void>();
  w.logsumexp = p.logsumexp;
  w.delta = delta.as<void>();
  w.dq = dq.as<void>();
  w.dk = dk.as<void>();
  w.dv = dv.as<void>();
  attention::backward(wide, w, stream, half_via_single_tf32());
  cast(dq.as<void>(), DType::F32, p.dq, desc.dtype, nq);
  cast(dk.as<void>(), DType::F32, p.dk, desc.dtype, nk);
  cast(dv.as<void>(), DType::F32, p.dv, desc.dtype, nv);
  return true;
}

// How a F16/BF16 forward that cuDNN does not take (explicit masks above all) runs, read once
// from FERRITE_ATTENTION_HALF_FWD: unset or "mma" (the default), on the tensor cores in the
// dtype itself where attention_half_mma_fwd.cu takes the problem; "simt", on the general
// kernels (attention::forward): the A/B of the two and the way back should the mma kernel fail
// a problem.
bool half_forward_on_mma() {
  static const bool mma = env_switch("FERRITE_ATTENTION_HALF_FWD", "mma", "simt");
  return mma;
}

// The F16/BF16 forward on attention_half_mma_fwd.cu's kernel; false, having queued nothing, when
// it does not take the problem. Few query rows against many keys (decoding: the shape
// attention::forward gives its split-keys kernel, which spreads the keys over 8 warps a row)
// stay there: the mma kernel would run one block per (batch, head) over all keys, 7 of its 8
// warps idle.
bool forward_in_dtype(const AttentionDesc& desc, const attention::Pointers& p, cudaStream_t stream) {
  if (!half_forward_on_mma() || !attention::half_mma_forward_fits(desc, p)) return false;
  if (attention::forward_splits_keys(desc)) return false;
  attention::half_mma_forward(desc, p, stream);
  return true;
}

// Whether masked F16/BF16 forwards and backwards try cuDNN first, read once from
// FERRITE_ATTENTION_CUDNN_MASKS: unset or "on" (the default), cuDNN's SDPA with the mask as its
// bias (cudnn_sdpa.cpp); "off", the routes before it (forward: forward_in_dtype, else the general
// kernels; backward: backward_in_dtype, else the general kernels): the A/B of the two and the way
// back should cuDNN fail a masked problem.
bool cudnn_masks() {
  static const bool on = env_switch("FERRITE_ATTENTION_CUDNN_MASKS", "on", "off");
  return on;
}

// Whether cuDNN may take this forward or backward: unmasked problems when eligible; masked ones
// when the switch above allows (it is read only when a masked problem comes). Grouped-query
// backwards, causal ones too, are cuDNN's like any other: cuDNN computes dk and dv per query head
// in F16/BF16 and sums each group of heads (as PyTorch does: FlashAttention's dk/dv expanded to
// the query heads, then summed), so they carry up to group x the rounding of one head's gradient,
// not one rounding of an F32 sum as the own kernels and the CPU backend. Where early keys gather
// large per-head gradients (causal) that exceeds the plain F16/BF16 tolerance: sessions 12 and 13
// took it for a cuDNN fault (dv -0.0898 against -0.0762 at key 0 of batch 1, B=2, Hq=8, Hkv=2,
// S=200, D=128 BF16) and kept causal ones on the own kernels at a third of PyTorch's speed;
// session 14's probe showed cuDNN's per-head gradients agree with the CPU backend's. The tests
// hold grouped gradients to that bound (attention_test_problems.hpp: compare_grouped).
bool cudnn_candidate(const AttentionDesc& desc) {
  if (desc.mask == AttentionMaskKind::None) return cudnn_sdpa::eligible(desc);
  return cudnn_sdpa::masked_eligible(desc) && cudnn_masks();
}

class CudaAttentionOps final : public AttentionOps {
 public:
  bool supports(DType dtype) const override {
    return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 || dtype == DType::BF16;
  }

  // The front end guarantees the views' alignment (attention_ops.hpp); whether cuDNN plans
  // the graph with these strides is settled here, once per problem (the graph is cached), so
  // forward/backward below never meet a view they cannot run. Masked problems get dense inputs
  // (eligible() is false for them), also when their forward runs on cuDNN.
  bool reads_views(const AttentionDesc& desc, bool backward, Device device) override {
    if (!cudnn_sdpa::eligible(desc)) return false;
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
    if (cudnn_candidate(desc) && aligned16({p.q, p.k, p.v, p.result, p.logsumexp}) &&
        cudnn_sdpa::forward(desc, p, device, stream))
      return;
    check_dense(desc, "scaled_dot_product_attention");
    if (forward_in_dtype(desc, p, stream)) return;
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
    if (cudnn_candidate(desc) &&
        aligned16({p.q, p.k, p.v, p.out, p.grad_out, p.logsumexp, p.dq, p.dk, p.dv}) &&
        cudnn_sdpa::backward(desc, p, device, stream))
      return;
    check_dense(desc, "scaled_dot_product_attention_backward");
    if (backward_in_dtype(desc, p, device, stream)) return;
    if (backward_in_f32(desc, p, device, stream)) return;
    shape::Scratch delta(device, attention::delta_bytes(desc), stream);
    p.delta = delta.as<void>();
    attention::backward(desc, p, stream);
  }
};

}  // namespace

std::unique_ptr<AttentionOps> make_cuda_attention_ops() { return std::make_unique<CudaAttentionOps>(); }

}  // namespace ferrite::cuda
