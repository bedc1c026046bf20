// Front end of where, masked_fill and has_inf_nan.
#include "core/elementwise_layout.hpp"
#include "core/scalar_convert.hpp"
#include "ferrite/elementwise.hpp"
#include "frontend/checks.hpp"
#include "frontend/elementwise_common.hpp"
#include "frontend/strided.hpp"

namespace ferrite {
namespace {

void check_bool(const char* op, const char* what, const Tensor& t, const Tensor& other) {
  FERRITE_CHECK(t.dtype() == DType::Bool, DTypeMismatch, op, ": ", what, " is ", t.description(),
                ", expected a Bool tensor (input ", other.description(), ")");
}

/// Runs where(cond, x, y) into a new tensor of `shape` (already checked).
Tensor run_where(const char* op, const Tensor& cond_in, const Tensor& x_in, const Tensor& y_in, const Shape& shape) {
  Tensor out = frontend::allocate(shape, x_in.dtype(), x_in.device());
  if (out.numel() == 0) return out;
  // Operands are read through their own strides (views cost no copy).
  const std::vector<Tensor> operands = frontend::elementwise_operands(shape, {&cond_in, &x_in, &y_in}, op);
  const Tensor &cond = operands[0], &x = operands[1], &y = operands[2];
  const ElementwiseLayout layout = make_strided_layout(shape, {&cond, &x, &y}, op);
  backend(x.device()).where(frontend::strided_buffer(cond), frontend::strided_buffer(x), frontend::strided_buffer(y),
                            out.buffer(), layout);
  return out;
}

}  // namespace

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  const char* op = "where";
  frontend::check_defined(op, {&cond, &x, &y});
  frontend::check_same_device(op, {&cond, &x, &y});
  check_bool(op, "cond", cond, x);
  frontend::check_same_dtype(op, {&x, &y});
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), x.shape(), op), y.shape(), op);
  frontend::check_supported(Op::Where, x.dtype(), x.device());
  return run_where(op, cond, x, y, shape);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  const char* op = "masked_fill";
  frontend::check_defined(op, {&x, &mask});
  frontend::check_same_device(op, {&x, &mask});
  check_bool(op, "mask", mask, x);
  const Shape shape = broadcast_shapes(x.shape(), mask.shape(), op);
  FERRITE_CHECK(shape == x.shape(), ShapeMismatch, op, ": mask ", mask.description(),
                " does not broadcast to the input's shape (input ", x.description(), ", broadcast ", shape_str(shape),
                ")");
  frontend::check_supported(Op::MaskedFill, x.dtype(), x.device());
  // The value as a rank-0 tensor of x's dtype (the documented Scalar -> dtype rule), which
  // the where engine broadcasts with a zero stride.
  detail::check_fill_value(op, value, x.dtype());
  const Tensor fill = full({}, value, x.dtype(), x.device());
  return run_where(op, mask, fill, x, shape);
}

bool has_inf_nan(const Tensor& x) {
  const char* op = "has_inf_nan";
  frontend::check_defined(op, {&x});
  frontend::check_supported(Op::HasInfNan, x.dtype(), x.device());
  if (x.numel() == 0) return false;
  return backend(x.device()).has_inf_nan(x.buffer());
}

}  // namespace ferrite
