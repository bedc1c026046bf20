// Front end of the reductions and scans: validate, turn a dim into [outer, dim, inner],
// allocate the result, call the backend's ReductionOps.
#include "ferrite/reduction.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "core/extent.hpp"
#include "core/reduction_support.hpp"
#include "frontend/checks.hpp"
#include "frontend/reduction_common.hpp"
#include "frontend/strided.hpp"

namespace ferrite {
namespace frontend {

ReduceExtents extents_around(const Tensor& x, std::int64_t d) {
  ReduceExtents e;
  if (x.dim() == 0) return e;
  const auto u = static_cast<std::size_t>(d);
  e.outer = detail::checked_product(x.shape(), 0, u, "reduction");
  e.dim = x.shape()[u];
  e.inner = detail::checked_product(x.shape(), u + 1, x.shape().size(), "reduction");
  return e;
}

Shape reduced_shape(const Tensor& x, std::int64_t d, bool keepdim) {
  Shape s = x.shape();
  if (s.empty()) return s;
  if (keepdim)
    s[d] = 1;
  else
    s.erase(s.begin() + d);
  return s;
}

ReductionInput reduction_input(const Tensor& x) {
  ReductionInput in{x, {}};
  if (const auto order = memory_order(x)) {
    in.dense = x.permute(*order);
    in.order = *order;
  }
  return in;
}

std::int64_t ReductionInput::dense_dim(std::int64_t d) const {
  if (order.empty()) return d;
  return static_cast<std::int64_t>(std::find(order.begin(), order.end(), d) - order.begin());
}

Tensor ReductionInput::to_view_order(Tensor out, const std::vector<bool>& reduced, bool keepdim,
                                     const Shape& x_shape) const {
  // out's dims are x's kept dims as they lie in memory; `back` lists them in x's order.
  std::vector<std::int64_t> kept;
  for (std::int64_t d : order)
    if (!reduced[static_cast<std::size_t>(d)]) kept.push_back(d);
  std::vector<std::int64_t> back(kept.size());
  std::iota(back.begin(), back.end(), 0);
  std::sort(back.begin(), back.end(), [&](std::int64_t a, std::int64_t b) {
    return kept[static_cast<std::size_t>(a)] < kept[static_cast<std::size_t>(b)];
  });
  if (!std::is_sorted(kept.begin(), kept.end())) out = out.permute(back).contiguous();
  if (!keepdim) return out;
  Shape shape = x_shape;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) shape[d] = 1;
  return out.reshape(shape);
}

}  // namespace frontend

namespace {

const char* name_of(Op op) { return op_name(op).data(); }

void check_input(Op op, const Tensor& x) {
  frontend::check_defined(name_of(op), {&x});
  frontend::check_supported(op, x.dtype(), x.device());
}

// amin/amax/argmax/argmin have no identity: PyTorch rejects an empty extent.
void check_not_empty(Op op, const Tensor& x, const ReduceExtents& e, bool full) {
  if (e.dim > 0) return;
  if (full) FERRITE_THROW(InvalidArgument, name_of(op), ": input ", x.description(), " is empty and the op has no identity");
  if (e.outer * e.inner > 0)
    FERRITE_THROW(InvalidArgument, name_of(op), ": reducing an empty dim of input ", x.description(),
                  " (the op has no identity)");
}

// The result dtype a caller asked for: the plain one, or F32 from a half-precision input.
DType checked_result_dtype(Op op, const Tensor& x, DType requested) {
  const DType plain = detail::reduction_result_dtype(op, x.dtype());
  FERRITE_CHECK(requested == plain || (is_half_precision(x.dtype()) && requested == DType::F32), Unsupported,
                name_of(op), ": dtype ", dtype_name(requested), " requested for input ", x.description(),
                "; only the plain result (", dtype_name(plain), ") or F32 from an F16/BF16 input is supported");
  return requested;
}

Tensor reduce_impl(Op op, const Tensor& x, const ReduceExtents& e, const Shape& out_shape,
                   std::optional<DType> requested = std::nullopt) {
  const bool arg = op == Op::Argmax || op == Op::Argmin;
  const DType out_dtype = arg ? DType::I64 : requested ? *requested : detail::reduction_result_dtype(op, x.dtype());
  Tensor out = frontend::allocate(out_shape, out_dtype, x.device());
  if (out.numel() == 0) return out;
  ReductionOps& r = backend(x.device()).reductions();
  if (arg)
    r.arg_reduce(op, x.buffer(), out.buffer(), e);
  else
    r.reduce(op, x.buffer(), out.buffer(), e);
  return out;
}

// Over everything, a transposed or permuted x is reduced as its dense block, in memory order;
// except argmax/argmin, whose index counts x's elements in x's own (row-major) order, which
// memory order is not: those read x through buffer() (a copy of such a view).
Tensor reduce_all(Op op, const Tensor& x, std::optional<DType> dtype = std::nullopt) {
  check_input(op, x);
  const ReduceExtents e{1, x.numel(), 1};
  if (op == Op::Amin || op == Op::Amax || op == Op::Argmax || op == Op::Argmin) check_not_empty(op, x, e, true);
  if (dtype) dtype = checked_result_dtype(op, x, *dtype);
  if (op == Op::Argmax || op == Op::Argmin) return reduce_impl(op, x, e, {}, dtype);
  return reduce_impl(op, frontend::reduction_input(x).dense, e, {}, dtype);
}

Tensor reduce_dim(Op op, const Tensor& x, std::int64_t dim, bool keepdim, std::optional<DType> dtype = std::nullopt) {
  check_input(op, x);
  const std::int64_t d = frontend::wrap_dim(name_of(op), x, dim);
  const ReduceExtents e = frontend::extents_around(x, d);
  if (op == Op::Amin || op == Op::Amax || op == Op::Argmax || op == Op::Argmin) check_not_empty(op, x, e, false);
  if (dtype) dtype = checked_result_dtype(op, x, *dtype);
  if (const frontend::ReductionInput in = frontend::reduction_input(x); in.permuted()) {
    // The same dim of the dense block: same extent, its elements in the same order (argmax's
    // indices along it are x's), only outer and inner differ.
    const std::int64_t p = in.dense_dim(d);
    const Tensor out = reduce_impl(op, in.dense, frontend::extents_around(in.dense, p),
                                   frontend::reduced_shape(in.dense, p, false), dtype);
    std::vector<bool> reduced(static_cast<std::size_t>(x.dim()), false);
    reduced[static_cast<std::size_t>(d)] = true;
    return in.to_view_order(out, reduced, keepdim, x.shape());
  }
  return reduce_impl(op, x, e, frontend::reduced_shape(x, d, keepdim), dtype);
}

Tensor masked_impl(Op op, const Tensor& x, const Tensor& mask, const ReduceExtents& e, const Shape& out_shape) {
  const char* name = name_of(op);
  frontend::check_defined(name, {&x, &mask});
  frontend::check_same_device(name, {&x, &mask});
  FERRITE_CHECK(mask.dtype() == DType::Bool, DTypeMismatch, name, ": mask is ", mask.description(),
                ", expected a Bool mask (input ", x.description(), ")");
  FERRITE_CHECK(mask.shape() == x.shape(), ShapeMismatch, name, ": mask is ", mask.description(),
                ", expected the input's shape ", shape_str(x.shape()), " (input ", x.description(), ")");
  frontend::check_supported(op, x.dtype(), x.device());
  Tensor out = frontend::allocate(out_shape, x.dtype(), x.device());
  if (out.numel() > 0) backend(x.device()).reductions().masked_reduce(op, x.buffer(), mask.buffer(), out.buffer(), e);
  return out;
}

Tensor masked_all(Op op, const Tensor& x, const Tensor& mask) {
  frontend::check_defined(name_of(op), {&x});
  return masked_impl(op, x, mask, {1, x.numel(), 1}, {});
}

Tensor masked_dim(Op op, const Tensor& x, const Tensor& mask, std::int64_t dim, bool keepdim) {
  frontend::check_defined(name_of(op), {&x});
  const std::int64_t d = frontend::wrap_dim(name_of(op), x, dim);
  return masked_impl(op, x, mask, frontend::extents_around(x, d), frontend::reduced_shape(x, d, keepdim));
}

Tensor prod_backward_impl(const Tensor& grad, const Tensor& x, const ReduceExtents& e, const Shape& grad_shape) {
  const char* name = "prod_backward";
  frontend::check_defined(name, {&grad, &x});
  frontend::check_same_device(name, {&grad, &x});
  frontend::check_same_dtype(name, {&grad, &x});
  FERRITE_CHECK(grad.shape() == grad_shape, ShapeMismatch, name, ": grad is ", grad.description(),
                ", expected shape ", shape_str(grad_shape), " (the shape of prod's result for input ",
                x.description(), ")");
  frontend::check_supported(Op::ProdBackward, x.dtype(), x.device());
  Tensor out = frontend::allocate(x.shape(), x.dtype(), x.device());
  if (out.numel() > 0) backend(x.device()).reductions().prod_backward(grad.buffer(), x.buffer(), out.buffer(), e);
  return out;
}

Tensor scan_impl(Op op, const Tensor& x, std::int64_t dim, Tensor* indices) {
  check_input(op, x);
  const std::int64_t d = frontend::wrap_dim(name_of(op), x, dim);
  const ReduceExtents e = frontend::extents_around(x, d);
  Tensor out = frontend::allocate(x.shape(), detail::reduction_result_dtype(op, x.dtype()), x.device());
  Buffer index_buffer;
  if (indices) {
    *indices = frontend::allocate(x.shape(), DType::I64, x.device());
    index_buffer = indices->buffer();
  }
  if (out.numel() > 0) backend(x.device()).reductions().scan(op, x.buffer(), out.buffer(), index_buffer, e);
  return out;
}

}  // namespace

Tensor sum(const Tensor& x) { return reduce_all(Op::Sum, x); }
Tensor sum(const Tensor& x, std::int64_t dim, bool keepdim) { return reduce_dim(Op::Sum, x, dim, keepdim); }
Tensor sum(const Tensor& x, DType dtype) { return reduce_all(Op::Sum, x, dtype); }
Tensor sum(const Tensor& x, std::int64_t dim, bool keepdim, DType dtype) { return reduce_dim(Op::Sum, x, dim, keepdim, dtype); }
Tensor mean(const Tensor& x, DType dtype) { return reduce_all(Op::Mean, x, dtype); }
Tensor mean(const Tensor& x, std::int64_t dim, bool keepdim, DType dtype) {
  return reduce_dim(Op::Mean, x, dim, keepdim, dtype);
}
Tensor mean(const Tensor& x) { return reduce_all(Op::Mean, x); }
Tensor mean(const Tensor& x, std::int64_t dim, bool keepdim) { return reduce_dim(Op::Mean, x, dim, keepdim); }
Tensor prod(const Tensor& x) { return reduce_all(Op::Prod, x); }
Tensor prod(const Tensor& x, std::int64_t dim, bool keepdim) { return reduce_dim(Op::Prod, x, dim, keepdim); }
Tensor amin(const Tensor& x) { return reduce_all(Op::Amin, x); }
Tensor amin(const Tensor& x, std::int64_t dim, bool keepdim) { return reduce_dim(Op::Amin, x, dim, keepdim); }
Tensor amax(const Tensor& x) { return reduce_all(Op::Amax, x); }
Tensor amax(const Tensor& x, std::int64_t dim, bool keepdim) { return reduce_dim(Op::Amax, x, dim, keepdim); }
Tensor any(const Tensor& x) { return reduce_all(Op::Any, x); }
Tensor any(const Tensor& x, std::int64_t dim, bool keepdim) { return reduce_dim(Op::Any, x, dim, keepdim); }
Tensor all(const Tensor& x) { return reduce_all(Op::All, x); }
Tensor all(const Tensor& x, std::int64_t dim, bool keepdim) { return reduce_dim(Op::All, x, dim, keepdim); }
Tensor argmax(const Tensor& x) { return reduce_all(Op::Argmax, x); }
Tensor argmax(const Tensor& x, std::int64_t dim, bool keepdim) { return reduce_dim(Op::Argmax, x, dim, keepdim); }
Tensor argmin(const Tensor& x) { return reduce_all(Op::Argmin, x); }
Tensor argmin(const Tensor& x, std::int64_t dim, bool keepdim) { return reduce_dim(Op::Argmin, x, dim, keepdim); }

Tensor masked_amin(const Tensor& x, const Tensor& mask) { return masked_all(Op::MaskedAmin, x, mask); }
Tensor masked_amin(const Tensor& x, const Tensor& mask, std::int64_t dim, bool keepdim) {
  return masked_dim(Op::MaskedAmin, x, mask, dim, keepdim);
}
Tensor masked_amax(const Tensor& x, const Tensor& mask) { return masked_all(Op::MaskedAmax, x, mask); }
Tensor masked_amax(const Tensor& x, const Tensor& mask, std::int64_t dim, bool keepdim) {
  return masked_dim(Op::MaskedAmax, x, mask, dim, keepdim);
}

Tensor prod_backward(const Tensor& grad, const Tensor& x) {
  frontend::check_defined("prod_backward", {&grad, &x});
  FERRITE_CHECK(grad.numel() == 1, ShapeMismatch, "prod_backward: grad is ", grad.description(),
                ", expected one element (the gradient of prod over all of input ", x.description(), ")");
  return prod_backward_impl(grad.reshape({}), x, {1, x.numel(), 1}, {});
}
Tensor prod_backward(const Tensor& grad, const Tensor& x, std::int64_t dim, bool keepdim) {
  frontend::check_defined("prod_backward", {&grad, &x});
  const std::int64_t d = frontend::wrap_dim("prod_backward", x, dim);
  return prod_backward_impl(grad, x, frontend::extents_around(x, d), frontend::reduced_shape(x, d, keepdim));
}

Tensor cumsum(const Tensor& x, std::int64_t dim) { return scan_impl(Op::Cumsum, x, dim, nullptr); }
Tensor cumprod(const Tensor& x, std::int64_t dim) { return scan_impl(Op::Cumprod, x, dim, nullptr); }
Tensor logcumsumexp(const Tensor& x, std::int64_t dim) { return scan_impl(Op::Logcumsumexp, x, dim, nullptr); }
std::pair<Tensor, Tensor> cummax(const Tensor& x, std::int64_t dim) {
  Tensor indices;
  Tensor values = scan_impl(Op::Cummax, x, dim, &indices);
  return {values, indices};
}
std::pair<Tensor, Tensor> cummin(const Tensor& x, std::int64_t dim) {
  Tensor indices;
  Tensor values = scan_impl(Op::Cummin, x, dim, &indices);
  return {values, indices};
}

}  // namespace ferrite
