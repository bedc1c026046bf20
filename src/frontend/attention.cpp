// Front end of scaled dot-product attention (ferrite/nn.hpp): shape, dtype, device and mask
// validation, the mask's broadcast strides, the inputs as views or dense Buffers, then the
// backend's AttentionOps.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "ferrite/backend.hpp"
#include "ferrite/backend_families/attention_ops.hpp"
#include "ferrite/nn.hpp"
#include "frontend/checks.hpp"
#include "frontend/dropout_draw.hpp"
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
  d.set_row_major_strides();
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
  d.deterministic = options.deterministic;
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
  frontend::check_dropout_p(op, "dropout_p", options.dropout_p);
  d.dropout_threshold = frontend::dropout_threshold(options.dropout_p);
  d.dropout_scale = frontend::dropout_scale(options.dropout_p);
  return d;
}

// The forward's dropout draw: one call of options.generator (or the device's default
// generator) when dropout_p > 0, nothing otherwise (the stream does not advance, as in
// PyTorch's attention without dropout).
random::RngState draw_dropout(const char* op, AttentionDesc& d, const Tensor& q, const AttentionOptions& options) {
  if (!d.has_dropout()) return {};
  random::Generator* g = options.generator;
  FERRITE_CHECK(!g || g->device() == q.device(), DeviceMismatch, op, ": the generator belongs to ",
                g ? g->device().str() : "", ", q to ", q.device().str());
  const random::RngState state = g ? g->take() : random::default_generator(q.device()).take();
  d.dropout_seed = state.seed;
  d.dropout_offset = state.offset;
  return state;
}

// The backward's dropout: the forward's draw, which the caller must hand back.
void replay_dropout(const char* op, AttentionDesc& d, const AttentionOptions& options) {
  if (!d.has_dropout()) return;
  FERRITE_CHECK(options.dropout_state.has_value(), InvalidArgument, op, ": dropout_p is ", options.dropout_p,
                " but no dropout_state was given (pass the forward's AttentionResult::dropout_state)");
  d.dropout_seed = options.dropout_state->seed;
  d.dropout_offset = options.dropout_state->offset;
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

// The strides of [B, H, S, X] laid out dense in the dim order of `like` (its dims by
// decreasing stride, as row_aligned_view gives them): PyTorch's cuDNN and flash attention
// allocate the output in the query's layout this way. For q permuted out of one [B, S, 3, H,
// D] projection that is [B, S, H, Dv] in memory, so out.permute(0, 2, 1, 3) (the attention's
// [B, S, H * Dv] input to the output projection) is contiguous and needs no copy.
AttentionStrides strides_in_order_of(const AttentionStrides& like, const std::array<std::int64_t, 4>& sizes) {
  std::array<int, 4> order = {0, 1, 2, 3};
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return like[static_cast<std::size_t>(a)] > like[static_cast<std::size_t>(b)]; });
  AttentionStrides s{};
  std::int64_t step = 1;
  for (int i = 3; i >= 0; --i) {
    const auto dim = static_cast<std::size_t>(order[static_cast<std::size_t>(i)]);
    s[dim] = step;
    step *= sizes[dim];
  }
  return s;
}

// An output the caller wants written in a layout of its choice (the stride field of `d`
// it goes to and the strides asked).
struct OutputLayout {
  AttentionStrides* field;
  AttentionStrides wanted;
};

// The Buffers of the inputs `ts` (q, k, v, then out and grad_out in the backward) whose
// strides are `strides`, with the outputs' strides in `d` settled too: each row-aligned input
// view and each output layout asked is offered to the backend as it stands
// (AttentionOps::reads_views); if the backend declines, the outputs fall back to row-major
// (asked again, inputs still as views), then every input is made dense (Tensor::buffer) with
// the row-major strides already in `d`. PyTorch's attention kernels read such views too, so
// the GPT's q, k, v (permuted slices of one projection) cost no copy where cuDNN runs.
std::vector<Buffer> input_buffers(AttentionDesc& d, bool backward, const std::vector<const Tensor*>& ts,
                                  const std::vector<AttentionStrides*>& strides,
                                  const std::vector<OutputLayout>& outputs = {}) {
  const AttentionDesc dense = d;
  std::vector<bool> as_view(ts.size(), false);
  bool any_input = false, any_output = false;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (const auto s = row_aligned_view(*ts[i])) {
      *strides[i] = *s;
      as_view[i] = any_input = true;
    }
  }
  std::vector<AttentionStrides> row_major;  // each output's strides before, as `dense` has them
  for (const OutputLayout& o : outputs) {
    row_major.push_back(*o.field);
    any_output = any_output || o.wanted != *o.field;
    *o.field = o.wanted;
  }
  const Device device = ts[0]->device();
  AttentionOps& ops = backend(device).attention_ops();
  bool taken = (!any_input && !any_output) || ops.reads_views(d, backward, device);
  if (!taken && any_output) {
    for (std::size_t i = 0; i < outputs.size(); ++i) *outputs[i].field = row_major[i];
    taken = !any_input || ops.reads_views(d, backward, device);
  }
  if (!taken) {
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
  r.dropout_state = draw_dropout(op, d, q, options);
  const std::array<std::int64_t, 4> out_sizes = {d.batch, d.heads_q, d.seq_q, d.value_dim};
  r.logsumexp = allocate({d.batch, d.heads_q, d.seq_q}, lse_dtype(d.dtype), q.device());
  if (d.batch * d.heads_q * d.seq_q == 0) {
    r.out = allocate({d.batch, d.heads_q, d.seq_q, d.value_dim}, d.dtype, q.device());
    return r;
  }
  const Buffer mask = options.mask ? options.mask->buffer() : Buffer{};
  // A query view asks for the output in its layout; a backend that declines writes row-major.
  std::vector<OutputLayout> layouts;
  if (const auto q_view = row_aligned_view(q)) layouts.push_back({&d.out_strides, strides_in_order_of(*q_view, out_sizes)});
  const std::vector<Buffer> in =
      input_buffers(d, false, {&q, &k, &v}, {&d.q_strides, &d.k_strides, &d.v_strides}, layouts);
  if (d.out_strides == dense_attention_strides(d.heads_q, d.seq_q, d.value_dim)) {
    r.out = allocate({d.batch, d.heads_q, d.seq_q, d.value_dim}, d.dtype, q.device());
  } else {
    // Dense in the order of decreasing stride, returned as the [B, Hq, Sq, Dv] view of it.
    std::vector<std::int64_t> order = {0, 1, 2, 3};
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return d.out_strides[static_cast<std::size_t>(a)] > d.out_strides[static_cast<std::size_t>(b)];
    });
    Shape memory;
    for (const std::int64_t dim : order) memory.push_back(out_sizes[static_cast<std::size_t>(dim)]);
    r.out = allocate(memory, d.dtype, q.device()).permute(frontend::inverse_permutation(order));
  }
  const Buffer out = d.out_strides == dense_attention_strides(d.heads_q, d.seq_q, d.value_dim)
                         ? r.out.buffer()
                         : frontend::strided_buffer(r.out);
  backend(q.device()).attention_ops().forward(d, in[0], in[1], in[2], mask, out, r.logsumexp.buffer());
  return r;
}

namespace {

// Whether two tensors certainly share an element: the same view twice, or two contiguous
// tensors whose element ranges meet. Interleaved views of one storage (dq, dk, dv as the
// slices of one [B, S, 3, H, D] gradient) have meeting ranges and share nothing; like
// PyTorch's overlap check, which calls such cases too hard, they pass undecided.
bool surely_overlap(const Tensor& a, const Tensor& b) {
  if (!frontend::may_overlap(a, b)) return false;
  const bool same_view = a.storage_offset() == b.storage_offset() && a.strides() == b.strides();
  return same_view || (a.is_contiguous() && b.is_contiguous());
}

// The checks of the backward's extra inputs against the forward's description.
void check_backward_inputs(const char* op, const AttentionDesc& d, const Tensor& q, const Tensor& grad_out,
                           const Tensor& out, const Tensor& logsumexp) {
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
}

// dq, dk, dv into `grads` (defined, checked): each gradient that is a row-aligned view is
// offered to the backend as the layout to write; one the backend declines, or any other
// non-contiguous gradient, is computed into a dense tensor and copied through its strides.
void run_backward(AttentionDesc& d, const AttentionGrads& grads, const Tensor& grad_out, const Tensor& q,
                  const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& logsumexp,
                  const AttentionOptions& options) {
  const Buffer mask = options.mask ? options.mask->buffer() : Buffer{};
  const Tensor* targets[3] = {&grads.dq, &grads.dk, &grads.dv};
  AttentionStrides* fields[3] = {&d.dq_strides, &d.dk_strides, &d.dv_strides};
  std::vector<OutputLayout> layouts;
  for (std::size_t i = 0; i < 3; ++i)
    if (const auto view = row_aligned_view(*targets[i])) layouts.push_back({fields[i], *view});
  const std::vector<Buffer> in =
      input_buffers(d, true, {&q, &k, &v, &out, &grad_out},
                    {&d.q_strides, &d.k_strides, &d.v_strides, &d.out_strides, &d.grad_out_strides}, layouts);
  const AttentionStrides row_major[3] = {dense_attention_strides(d.heads_q, d.seq_q, d.head_dim),
                                         dense_attention_strides(d.heads_kv, d.seq_k, d.head_dim),
                                         dense_attention_strides(d.heads_kv, d.seq_k, d.value_dim)};
  // A gradient the backend writes through the view's strides, or through a WriteWindow (the
  // dense tensor itself, or a dense stand-in copied into any other layout afterwards).
  std::optional<frontend::WriteWindow> windows[3];
  Buffer buffers[3];
  for (std::size_t i = 0; i < 3; ++i) {
    if (*fields[i] != row_major[i]) {
      buffers[i] = frontend::strided_buffer(*targets[i]);
    } else {
      windows[i].emplace("scaled_dot_product_attention_backward", *targets[i], false);
      buffers[i] = windows[i]->tensor().buffer();
    }
  }
  backend(q.device()).attention_ops().backward(d, in[4], in[0], in[1], in[2], in[3], logsumexp.buffer(), mask,
                                               buffers[0], buffers[1], buffers[2]);
  for (const auto& window : windows)
    if (window) window->finish();
}

}  // namespace

AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& out, const Tensor& logsumexp,
                                                     const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention_backward";
  AttentionDesc d = describe(op, q, k, v, options);
  check_backward_inputs(op, d, q, grad_out, out, logsumexp);
  replay_dropout(op, d, options);
  AttentionGrads g;
  g.dq = allocate(q.shape(), d.dtype, q.device());
  g.dk = allocate(k.shape(), d.dtype, q.device());
  g.dv = allocate(v.shape(), d.dtype, q.device());
  if (g.dq.numel() + g.dk.numel() + g.dv.numel() == 0) return g;
  run_backward(d, g, grad_out, q, k, v, out, logsumexp, options);
  return g;
}

const AttentionGrads& scaled_dot_product_attention_backward_out(const AttentionGrads& grads, const Tensor& grad_out,
                                                                const Tensor& q, const Tensor& k, const Tensor& v,
                                                                const Tensor& out, const Tensor& logsumexp,
                                                                const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention_backward_out";
  AttentionDesc d = describe(op, q, k, v, options);
  check_backward_inputs(op, d, q, grad_out, out, logsumexp);
  replay_dropout(op, d, options);
  frontend::check_defined(op, {&grads.dq, &grads.dk, &grads.dv});
  frontend::check_same_device(op, {&q, &grads.dq, &grads.dk, &grads.dv});
  const std::pair<const Tensor*, const Tensor*> pairs[3] = {{&grads.dq, &q}, {&grads.dk, &k}, {&grads.dv, &v}};
  const char* names[3] = {"dq", "dk", "dv"};
  // Everything the backward reads, the mask included (an additive mask of the inputs' dtype
  // can have a gradient's shape, and a backend may read it while writing the gradients).
  std::vector<const Tensor*> read = {&grad_out, &q, &k, &v, &out, &logsumexp};
  if (options.mask) read.push_back(&*options.mask);
  for (std::size_t i = 0; i < 3; ++i) {
    const Tensor& g = *pairs[i].first;
    FERRITE_CHECK(g.dtype() == d.dtype, DTypeMismatch, op, ": ", names[i], " ", g.description(),
                  " must have the dtype of its input ", pairs[i].second->description());
    FERRITE_CHECK(g.shape() == pairs[i].second->shape(), ShapeMismatch, op, ": ", names[i], " ", g.description(),
                  " must have the shape of its input ", pairs[i].second->description());
    frontend::check_writable(op, g);
    for (const Tensor* r : read)
      FERRITE_CHECK(!surely_overlap(g, *r), InvalidArgument, op, ": ", names[i], " ", g.description(),
                    " overlaps an input (", r->description(), ")");
    for (std::size_t j = 0; j < i; ++j)
      FERRITE_CHECK(!surely_overlap(g, *pairs[j].first), InvalidArgument, op, ": ", names[i], " ",
                    g.description(), " overlaps ", names[j]);
  }
  if (grads.dq.numel() + grads.dk.numel() + grads.dv.numel() == 0) return grads;
  run_backward(d, grads, grad_out, q, k, v, out, logsumexp, options);
  return grads;
}

}  // namespace ferrite::nn
