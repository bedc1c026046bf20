// Front end of the indexing ops: embedding, index_select, gather, scatter_add and the
// masked ops. Index tensors are I32 or I64; negative values count from the end. Backends
// report the smallest and largest index value they read (IndexRange) and never touch
// memory out of bounds for a bad one; the check here turns it into IndexOutOfRange.
#include "core/extent.hpp"
#include "ferrite/backend.hpp"
#include "ferrite/shape.hpp"
#include "frontend/checks.hpp"
#include "frontend/shape_helpers.hpp"

namespace ferrite {
namespace {

using frontend::wrap_dim;

const char* name_of(Op op) { return op_name(op).data(); }

void check_index_dtype(const char* op, const Tensor& index, const char* what = "index") {
  FERRITE_CHECK(index.dtype() == DType::I32 || index.dtype() == DType::I64, DTypeMismatch, op, ": ", what,
                " must be I32 or I64, got ", index.description());
}

// What every op reading through an index checks first: both operands defined and on one
// device, an I32/I64 index, and a backend that runs the op for `data`'s dtype.
void check_index_operands(Op code, const Tensor& data, const Tensor& index, const char* what = "index") {
  const char* op = name_of(code);
  frontend::check_defined(op, {&data, &index});
  frontend::check_same_device(op, {&data, &index});
  check_index_dtype(op, index, what);
  frontend::check_supported(code, data.dtype(), data.device());
}

void check_range(const char* op, IndexRange range, std::int64_t size, const std::string& where, const Tensor& x,
                 const Tensor& index) {
  if (range.min > range.max) return;  // no index read
  const std::int64_t bad = range.max >= size ? range.max : range.min;
  FERRITE_CHECK(range.min >= -size && range.max < size, IndexOutOfRange, op, ": index ", bad,
                " is out of range for ", where, " of size ", size, " (input ", x.description(), ", index ",
                index.description(), ")");
}

void check_mask(const char* op, const Tensor& x, const Tensor& mask) {
  FERRITE_CHECK(mask.dtype() == DType::Bool, DTypeMismatch, op, ": mask must be Bool, got ", mask.description());
  FERRITE_CHECK(mask.shape() == x.shape(), ShapeMismatch, op, ": mask is ", mask.description(), " but input is ",
                x.description(), "; the shapes must be equal (no broadcasting)");
}

// gather / scatter_add work on rank >= 1; a rank-0 tensor is a one-element rank-1 one.
Shape at_least_1d(const Shape& s) { return s.empty() ? Shape{1} : s; }

}  // namespace

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index) {
  const char* op = name_of(Op::IndexSelect);
  check_index_operands(Op::IndexSelect, x, index);
  FERRITE_CHECK(index.dim() <= 1, InvalidArgument, op, ": index must be 1-D or rank 0, got ", index.description());
  const std::int64_t d = wrap_dim(op, x, dim);
  // As torch.index_select: a rank-0 input takes exactly one index and gives a rank-0 result.
  FERRITE_CHECK(x.dim() > 0 || index.numel() == 1, IndexOutOfRange, op, ": an index into rank-0 input ",
                x.description(), " must have exactly 1 element, got index ", index.description());
  const Shape in_shape = at_least_1d(x.shape());
  Shape out_shape = in_shape;
  out_shape[d] = index.numel();
  if (x.dim() == 0) out_shape = {};
  Tensor out = frontend::allocate(out_shape, x.dtype(), x.device());
  if (index.numel() == 0) return out;
  const IndexRange range = frontend::shape_ops_of(x.device())
                               .index_select(x.buffer(), index.buffer(), out.buffer(), detail::checked_product(in_shape, 0, d, op),
                                             in_shape[d], index.numel(),
                                             detail::checked_product(in_shape, d + 1, in_shape.size(), op));
  check_range(op, range, in_shape[d], "dim " + std::to_string(d), x, index);
  return out;
}

Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index) {
  const char* op = name_of(Op::Gather);
  check_index_operands(Op::Gather, x, index);
  const std::int64_t d = wrap_dim(op, x, dim);
  FERRITE_CHECK(index.dim() == x.dim(), ShapeMismatch, op, ": index ", index.description(),
                " must have the rank of input ", x.description());
  FERRITE_CHECK(x.dim() <= kMaxIndexDims, InvalidArgument, op, ": rank ", x.dim(), " is above ", kMaxIndexDims);
  const Shape xs = at_least_1d(x.shape()), is = at_least_1d(index.shape());
  for (std::size_t k = 0; k < xs.size(); ++k)
    FERRITE_CHECK(static_cast<std::int64_t>(k) == d || is[k] <= xs[k], ShapeMismatch, op, ": index ",
                  index.description(), " is larger than input ", x.description(), " in dim ", k);
  Tensor out = frontend::allocate(index.shape(), x.dtype(), x.device());
  if (index.numel() == 0) return out;
  IndexLayout layout;
  layout.rank = static_cast<int>(is.size());
  layout.dim = static_cast<int>(d);
  layout.dim_size = xs[d];
  const auto x_strides = detail::checked_contiguous_strides(xs, op);
  for (std::size_t k = 0; k < is.size(); ++k) {
    layout.sizes[k] = is[k];
    layout.data_strides[k] = x_strides[k];
  }
  const IndexRange range = frontend::shape_ops_of(x.device()).gather(x.buffer(), index.buffer(), out.buffer(), layout);
  check_range(op, range, xs[d], "dim " + std::to_string(d), x, index);
  return out;
}

Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  const char* op = name_of(Op::ScatterAdd);
  frontend::check_defined(op, {&x, &index, &src});
  frontend::check_same_device(op, {&x, &index, &src});
  frontend::check_same_dtype(op, {&x, &src});
  check_index_dtype(op, index);
  frontend::check_supported(Op::ScatterAdd, x.dtype(), x.device());
  const std::int64_t d = wrap_dim(op, x, dim);
  FERRITE_CHECK(index.dim() == x.dim() && src.dim() == x.dim(), ShapeMismatch, op, ": input ", x.description(),
                ", index ", index.description(), " and src ", src.description(), " must have the same rank");
  FERRITE_CHECK(x.dim() <= kMaxIndexDims, InvalidArgument, op, ": rank ", x.dim(), " is above ", kMaxIndexDims);
  const Shape xs = at_least_1d(x.shape()), is = at_least_1d(index.shape()), ss = at_least_1d(src.shape());
  for (std::size_t k = 0; k < xs.size(); ++k)
    FERRITE_CHECK(is[k] <= ss[k] && (static_cast<std::int64_t>(k) == d || is[k] <= xs[k]), ShapeMismatch, op,
                  ": index ", index.description(), " does not fit src ", src.description(), " and input ",
                  x.description(), " in dim ", k);
  Tensor out = frontend::allocate(x.shape(), x.dtype(), x.device());
  if (out.numel() == 0 && index.numel() == 0) return out;
  IndexLayout layout;
  layout.rank = static_cast<int>(is.size());
  layout.dim = static_cast<int>(d);
  layout.dim_size = xs[d];
  const auto x_strides = detail::checked_contiguous_strides(xs, op), s_strides = detail::checked_contiguous_strides(ss, op);
  for (std::size_t k = 0; k < is.size(); ++k) {
    layout.sizes[k] = is[k];
    layout.data_strides[k] = x_strides[k];
    layout.src_strides[k] = s_strides[k];
  }
  const IndexRange range =
      frontend::shape_ops_of(x.device()).scatter_add(x.buffer(), index.buffer(), src.buffer(), out.buffer(), layout);
  check_range(op, range, xs[d], "dim " + std::to_string(d), x, index);
  return out;
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  const char* op = name_of(Op::MaskedSelect);
  frontend::check_defined(op, {&x, &mask});
  frontend::check_same_device(op, {&x, &mask});
  check_mask(op, x, mask);
  frontend::check_supported(Op::MaskedSelect, x.dtype(), x.device());
  if (x.numel() == 0) return frontend::allocate({0}, x.dtype(), x.device());
  Tensor out;
  frontend::shape_ops_of(x.device()).masked_select(x.buffer(), mask.buffer(), [&](std::int64_t count) {
    out = frontend::allocate({count}, x.dtype(), x.device());
    return out.buffer();
  });
  return out;
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  const char* op = name_of(Op::MaskedScatter);
  frontend::check_defined(op, {&x, &mask, &source});
  frontend::check_same_device(op, {&x, &mask, &source});
  frontend::check_same_dtype(op, {&x, &source});
  check_mask(op, x, mask);
  frontend::check_supported(Op::MaskedScatter, x.dtype(), x.device());
  Tensor out = frontend::allocate(x.shape(), x.dtype(), x.device());
  if (x.numel() == 0) return out;
  const std::int64_t count =
      frontend::shape_ops_of(x.device()).masked_scatter(x.buffer(), mask.buffer(), source.buffer(), out.buffer());
  FERRITE_CHECK(count <= source.numel(), ShapeMismatch, op, ": mask ", mask.description(), " has ", count,
                " true elements but source ", source.description(), " has only ", source.numel());
  return out;
}

namespace nn {

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  const char* op = name_of(Op::Embedding);
  check_index_operands(Op::Embedding, weight, indices, "indices");
  FERRITE_CHECK(weight.dim() >= 1, InvalidArgument, op, ": weight ", weight.description(),
                " must be [num_embeddings, ...] (rank >= 1)");
  Shape out_shape = indices.shape();
  out_shape.insert(out_shape.end(), weight.shape().begin() + 1, weight.shape().end());
  Tensor out = frontend::allocate(out_shape, weight.dtype(), weight.device());
  if (indices.numel() == 0) return out;
  const std::int64_t rows = weight.shape()[0], width = detail::checked_product(weight.shape(), 1, weight.shape().size(), op);
  const IndexRange range = frontend::shape_ops_of(weight.device())
                               .index_select(weight.buffer(), indices.buffer(), out.buffer(), 1, rows,
                                             indices.numel(), width);
  check_range(op, range, rows, "the weight's rows", weight, indices);
  return out;
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, std::int64_t num_embeddings) {
  const char* op = name_of(Op::EmbeddingBackward);
  check_index_operands(Op::EmbeddingBackward, grad, indices, "indices");
  FERRITE_CHECK(num_embeddings >= 0, InvalidArgument, op, ": num_embeddings must be >= 0, got ", num_embeddings);
  const std::size_t ir = indices.shape().size();
  bool fits = grad.shape().size() >= ir;
  for (std::size_t k = 0; fits && k < ir; ++k) fits = grad.shape()[k] == indices.shape()[k];
  FERRITE_CHECK(fits, ShapeMismatch, op, ": grad ", grad.description(), " must be indices.shape + [d...] (indices ",
                indices.description(), ")");
  Shape out_shape{num_embeddings};
  out_shape.insert(out_shape.end(), grad.shape().begin() + static_cast<std::ptrdiff_t>(ir), grad.shape().end());
  Tensor out = frontend::allocate(out_shape, grad.dtype(), grad.device());
  const std::int64_t width = detail::checked_product(grad.shape(), ir, grad.shape().size(), op);
  const IndexRange range = frontend::shape_ops_of(grad.device())
                               .embedding_backward(grad.buffer(), indices.buffer(), out.buffer(), num_embeddings, width);
  check_range(op, range, num_embeddings, "num_embeddings", grad, indices);
  return out;
}

}  // namespace nn
}  // namespace ferrite
