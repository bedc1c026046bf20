// Front end of scaled dot-product attention (ferrite/nn.hpp): shape, dtype, device and mask
// validation, the mask's broadcast strides, then the backend's AttentionOps.
#include <cmath>
#include <limits>

#include "ferrite/backend.hpp"
#include "ferrite/backend_families/attention_ops.hpp"
#include "ferrite/nn.hpp"
#include "frontend/checks.hpp"

namespace ferrite::nn {
namespace {

using frontend::allocate;

bool attention_dtype(DType d) { return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16; }

// Validates q, k, v and the options; returns the problem description (mask strides included).
AttentionDesc describe(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                       const AttentionOptions& options) {
  frontend::check_defined(op, {&q, &k, &v});
  frontend::check_same_device(op, {&q, &k, &v});
  frontend::check_same_dtype(op, {&q, &k, &v});
  FERRITE_CHECK(attention_dtype(q.dtype()), Unsupported, op, ": dtype ", dtype_name(q.dtype()),
                " is not supported (F32, F64, F16, BF16)");
  FERRITE_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, ShapeMismatch, op,
                ": q, k, v must be 4-D [B, H, S, D], got q ", q.description(), ", k ", k.description(), ", v ",
                v.description());
  AttentionDesc d;
  d.dtype = q.dtype();
  d.batch = q.size(0);
  d.heads_q = q.size(1);
  d.seq_q = q.size(2);
  d.head_dim = q.size(3);
  d.heads_kv = k.size(1);
  d.seq_k = k.size(2);
  d.value_dim = v.size(3);
  FERRITE_CHECK(k.size(0) == d.batch && v.size(0) == d.batch && v.size(1) == d.heads_kv && v.size(2) == d.seq_k &&
                    k.size(3) == d.head_dim,
                ShapeMismatch, op, ": q ", q.description(), ", k ", k.description(), " and v ", v.description(),
                " do not fit q [B, Hq, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv]");
  FERRITE_CHECK(d.heads_kv > 0 ? d.heads_q % d.heads_kv == 0 : d.heads_q == 0, ShapeMismatch, op,
                ": key/value heads (", d.heads_kv, ") must divide query heads (", d.heads_q, "); q ",
                q.description(), ", k ", k.description());
  FERRITE_CHECK(d.head_dim <= 256 && d.value_dim <= 256, Unsupported, op, ": head dims up to 256 are supported, got D = ",
                d.head_dim, ", Dv = ", d.value_dim);
  FERRITE_CHECK(backend(q.device()).attention_ops().supports(d.dtype), Unsupported, op, ": dtype ",
                dtype_name(d.dtype), " is not supported on ", q.device().str());
  d.causal = options.causal;
  d.scale = options.scale ? *options.scale : (d.head_dim > 0 ? 1.0 / std::sqrt(static_cast<double>(d.head_dim)) : 1.0);
  FERRITE_CHECK(std::isfinite(d.scale), InvalidArgument, op, ": scale must be finite, got ", d.scale);
  if (options.mask) {
    const Tensor& m = *options.mask;
    frontend::check_defined(op, {&m});
    frontend::check_same_device(op, {&q, &m});
    FERRITE_CHECK(m.dtype() == DType::Bool || m.dtype() == d.dtype, DTypeMismatch, op, ": mask ", m.description(),
                  " must be Bool or of the inputs' dtype ", dtype_name(d.dtype));
    FERRITE_CHECK(m.dim() <= 4, ShapeMismatch, op, ": mask ", m.description(),
                  " does not broadcast to [B, Hq, Sq, Sk] = [", d.batch, ", ", d.heads_q, ", ", d.seq_q, ", ", d.seq_k,
                  "]");
    const std::array<std::int64_t, 4> full = {d.batch, d.heads_q, d.seq_q, d.seq_k};
    std::int64_t stride = 1;
    for (int i = 3; i >= 0; --i) {
      const std::int64_t md = static_cast<std::int64_t>(i) - (4 - m.dim());
      const std::int64_t size = md >= 0 ? m.size(md) : 1;
      FERRITE_CHECK(size == full[static_cast<std::size_t>(i)] || size == 1, ShapeMismatch, op, ": mask ",
                    m.description(), " does not broadcast to [B, Hq, Sq, Sk] = [", d.batch, ", ", d.heads_q, ", ",
                    d.seq_q, ", ", d.seq_k, "]");
      d.mask_strides[static_cast<std::size_t>(i)] = size == 1 ? 0 : stride;
      stride *= size;
    }
    d.mask = m.dtype() == DType::Bool ? AttentionMaskKind::Bool : AttentionMaskKind::Additive;
  }
  return d;
}

DType lse_dtype(DType d) { return d == DType::F64 ? DType::F64 : DType::F32; }

}  // namespace

AttentionResult scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention";
  const AttentionDesc d = describe(op, q, k, v, options);
  AttentionResult r;
  r.out = allocate({d.batch, d.heads_q, d.seq_q, d.value_dim}, d.dtype, q.device());
  r.logsumexp = allocate({d.batch, d.heads_q, d.seq_q}, lse_dtype(d.dtype), q.device());
  if (d.batch * d.heads_q * d.seq_q == 0) return r;
  const Buffer mask = options.mask ? options.mask->buffer() : Buffer{};
  backend(q.device()).attention_ops().forward(d, q.buffer(), k.buffer(), v.buffer(), mask, r.out.buffer(),
                                              r.logsumexp.buffer());
  return r;
}

AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& out, const Tensor& logsumexp,
                                                     const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention_backward";
  const AttentionDesc d = describe(op, q, k, v, options);
  frontend::check_defined(op, {&grad_out, &out, &logsumexp});
  frontend::check_same_device(op, {&q, &grad_out, &out, &logsumexp});
  frontend::check_same_dtype(op, {&q, &grad_out, &out});
  const Shape out_shape = {d.batch, d.heads_q, d.seq_q, d.value_dim};
  FERRITE_CHECK(grad_out.shape() == out_shape && out.shape() == out_shape, ShapeMismatch, op, ": grad_out ",
                grad_out.description(), " and out ", out.description(), " must be ", shape_str(out_shape));
  FERRITE_CHECK(logsumexp.shape() == Shape({d.batch, d.heads_q, d.seq_q}), ShapeMismatch, op, ": logsumexp ",
                logsumexp.description(), " must be ", shape_str({d.batch, d.heads_q, d.seq_q}));
  FERRITE_CHECK(logsumexp.dtype() == lse_dtype(d.dtype), DTypeMismatch, op, ": logsumexp ", logsumexp.description(),
                " must be ", dtype_name(lse_dtype(d.dtype)), " (what the forward returns)");
  AttentionGrads g;
  g.dq = allocate(q.shape(), d.dtype, q.device());
  g.dk = allocate(k.shape(), d.dtype, q.device());
  g.dv = allocate(v.shape(), d.dtype, q.device());
  if (g.dq.numel() + g.dk.numel() + g.dv.numel() == 0) return g;
  const Buffer mask = options.mask ? options.mask->buffer() : Buffer{};
  backend(q.device()).attention_ops().backward(d, grad_out.buffer(), q.buffer(), k.buffer(), v.buffer(), out.buffer(),
                                               logsumexp.buffer(), mask, g.dq.buffer(), g.dk.buffer(), g.dv.buffer());
  return g;
}

}  // namespace ferrite::nn
