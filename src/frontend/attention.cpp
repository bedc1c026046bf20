// Front end of scaled dot-product attention (ferrite/nn.hpp): shape, dtype, device and mask
// validation, the mask's broadcast strides, the inputs as views or dense Buffers, then the
// backend's AttentionOps.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "ferrite/backend.hpp"
#include "ferrite/backend_families/attention_ops.hpp"
#include "ferrite/nn.hpp"
#include "frontend/checks.hpp"
#include "frontend/strided.hpp"

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
  d.q_strides = dense_attention_strides(d.heads_q, d.seq_q, d.head_dim);
  d.k_strides = dense_attention_strides(d.heads_kv, d.seq_k, d.head_dim);
  d.v_strides = dense_attention_strides(d.heads_kv, d.seq_k, d.value_dim);
  d.out_strides = d.grad_out_strides = dense_attention_strides(d.heads_q, d.seq_q, d.value_dim);
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

// The strides through which a backend may read `t`, a 4-D input, where it stands: only for a
// non-contiguous view whose rows are dense and start on the 16-byte grid (head-dim stride 1,
// first element 16-byte aligned, the other strides of dims longer than 1 positive multiples of
// 16 bytes), as in q/k/v split from one projection and permuted to [B, H, S, D]. A dim of
// extent 1 is given its row-major stride over the inner dims (any stride addresses the same
// elements), so equal problems have equal strides. Nothing for every other tensor.
std::optional<AttentionStrides> row_aligned_view(const Tensor& t) {
  if (t.is_contiguous() || t.numel() == 0) return std::nullopt;
  if (reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 != 0) return std::nullopt;
  const auto bytes = static_cast<std::int64_t>(t.element_size());
  AttentionStrides s{};
  for (int i = 3; i >= 0; --i) {
    const std::int64_t size = t.size(i), stride = t.stride(i);
    if (size == 1) {
      s[static_cast<std::size_t>(i)] = i == 3 ? 1 : s[static_cast<std::size_t>(i + 1)] * t.size(i + 1);
      continue;
    }
    if (i == 3 ? stride != 1 : stride <= 0 || stride * bytes % 16 != 0) return std::nullopt;
    s[static_cast<std::size_t>(i)] = stride;
  }
  return s;
}

// The Buffers of the inputs `ts` (q, k, v, then out and grad_out in the backward) whose
// strides are `strides`: each row-aligned view is offered to the backend as it stands
// (AttentionOps::reads_views); if the backend declines, or for any other non-contiguous
// input, the input is made dense (Tensor::buffer) and its strides are the row-major ones
// already in `d`. PyTorch's attention kernels read such views too, so the GPT's q, k, v
// (permuted slices of one projection) cost no copy where cuDNN runs.
std::vector<Buffer> input_buffers(AttentionDesc& d, bool backward, const std::vector<const Tensor*>& ts,
                                  const std::vector<AttentionStrides*>& strides) {
  const AttentionDesc dense = d;
  std::vector<bool> as_view(ts.size(), false);
  bool any = false;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (const auto s = row_aligned_view(*ts[i])) {
      *strides[i] = *s;
      as_view[i] = any = true;
    }
  }
  if (any && !backend(ts[0]->device()).attention_ops().reads_views(d, backward, ts[0]->device())) {
    d = dense;
    as_view.assign(ts.size(), false);
  }
  std::vector<Buffer> buffers;
  buffers.reserve(ts.size());
  for (std::size_t i = 0; i < ts.size(); ++i)
    buffers.push_back(as_view[i] ? frontend::strided_buffer(*ts[i]) : ts[i]->buffer());
  return buffers;
}

}  // namespace

AttentionResult scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention";
  AttentionDesc d = describe(op, q, k, v, options);
  AttentionResult r;
  r.out = allocate({d.batch, d.heads_q, d.seq_q, d.value_dim}, d.dtype, q.device());
  r.logsumexp = allocate({d.batch, d.heads_q, d.seq_q}, lse_dtype(d.dtype), q.device());
  if (d.batch * d.heads_q * d.seq_q == 0) return r;
  const Buffer mask = options.mask ? options.mask->buffer() : Buffer{};
  const std::vector<Buffer> in = input_buffers(d, false, {&q, &k, &v}, {&d.q_strides, &d.k_strides, &d.v_strides});
  backend(q.device()).attention_ops().forward(d, in[0], in[1], in[2], mask, r.out.buffer(), r.logsumexp.buffer());
  return r;
}

AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& out, const Tensor& logsumexp,
                                                     const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention_backward";
  AttentionDesc d = describe(op, q, k, v, options);
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
  const std::vector<Buffer> in =
      input_buffers(d, true, {&q, &k, &v, &out, &grad_out},
                    {&d.q_strides, &d.k_strides, &d.v_strides, &d.out_strides, &d.grad_out_strides});
  backend(q.device()).attention_ops().backward(d, in[4], in[0], in[1], in[2], in[3], logsumexp.buffer(), mask,
                                               g.dq.buffer(), g.dk.buffer(), g.dv.buffer());
  return g;
}

}  // namespace ferrite::nn
