// Front end of the elementwise family: validate, allocate, hand a layout to the backend.
#include "ferrite/elementwise.hpp"

#include "core/elementwise_layout.hpp"
#include "frontend/checks.hpp"

namespace ferrite {
namespace {

// op_name() views a string literal, so its data() is NUL-terminated: no copy per call.
const char* name_of(Op op) { return op_name(op).data(); }

Shape checked_binary_shape(Op op, const Tensor& a, const Tensor& b) {
  const char* name = name_of(op);
  frontend::check_defined(name, {&a, &b});
  frontend::check_same_device(name, {&a, &b});
  frontend::check_same_dtype(name, {&a, &b});
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  frontend::check_supported(op, a.dtype(), a.device());
  return shape;
}

void run_binary(Op op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  const ElementwiseLayout layout = make_elementwise_layout(out.shape(), {&a.shape(), &b.shape()}, name_of(op));
  backend(out.device()).binary(op, a.buffer(), b.buffer(), out.buffer(), layout);
}

Tensor binary(Op op, const Tensor& a, const Tensor& b) {
  const Shape shape = checked_binary_shape(op, a, b);
  Tensor out = frontend::allocate(shape, a.dtype(), a.device());
  run_binary(op, a, b, out);
  return out;
}

const Tensor& binary_out(Op op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const Shape shape = checked_binary_shape(op, a, b);
  const char* name = name_of(op);
  frontend::check_defined(name, {&out});
  FERRITE_CHECK(out.device() == a.device(), DeviceMismatch, name, ": out is ", out.description(),
                " but the operands are on ", a.device().str());
  FERRITE_CHECK(out.dtype() == a.dtype(), DTypeMismatch, name, ": out is ", out.description(),
                ", expected dtype ", dtype_name(a.dtype()), " (operands ", a.description(), ", ", b.description(), ")");
  FERRITE_CHECK(out.shape() == shape, ShapeMismatch, name, ": out is ", out.description(), ", expected shape ",
                shape_str(shape), " (operands ", a.description(), ", ", b.description(), ")");
  run_binary(op, a, b, out);
  return out;
}

Tensor unary(Op op, const Tensor& x, const UnaryParams& params = {}) {
  const char* name = name_of(op);
  frontend::check_defined(name, {&x});
  frontend::check_supported(op, x.dtype(), x.device());
  Tensor out = frontend::allocate(x.shape(), x.dtype(), x.device());
  if (out.numel() > 0) backend(x.device()).unary(op, x.buffer(), out.buffer(), params);
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return binary(Op::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(Op::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(Op::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(Op::Div, a, b); }

const Tensor& add_out(const Tensor& a, const Tensor& b, const Tensor& out) { return binary_out(Op::Add, a, b, out); }
const Tensor& sub_out(const Tensor& a, const Tensor& b, const Tensor& out) { return binary_out(Op::Sub, a, b, out); }
const Tensor& mul_out(const Tensor& a, const Tensor& b, const Tensor& out) { return binary_out(Op::Mul, a, b, out); }
const Tensor& div_out(const Tensor& a, const Tensor& b, const Tensor& out) { return binary_out(Op::Div, a, b, out); }

Tensor neg(const Tensor& x) { return unary(Op::Neg, x); }
Tensor relu(const Tensor& x) { return unary(Op::Relu, x); }

}  // namespace ferrite
