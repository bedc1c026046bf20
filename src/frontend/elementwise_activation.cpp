// Front end of the unary ops, activations and their backward passes.
#include <cmath>
#include <limits>

#include "core/elementwise_layout.hpp"
#include "ferrite/elementwise.hpp"
#include "frontend/checks.hpp"
#include "frontend/elementwise_common.hpp"
#include "frontend/strided.hpp"

namespace ferrite {
namespace frontend {

Tensor unary_op(Op op, const Tensor& x, const UnaryParams& params, DType out_dtype) {
  const char* name = name_of(op);
  check_defined(name, {&x});
  check_supported(op, x.dtype(), x.device());
  check_out_dtype(op, x.dtype(), out_dtype);
  // A transposed or permuted x is computed in its memory order, and the result takes x's
  // layout (as PyTorch's elementwise ops do): no copy, full speed.
  if (const auto order = memory_order(x)) {
    const Tensor dense_x = x.permute(*order);
    const Tensor out = allocate(dense_x.shape(), out_dtype, x.device());
    backend(x.device()).unary(op, dense_x.buffer(), out.buffer(), params, contiguous_layout(out.numel(), 1));
    return out.permute(inverse_permutation(*order));
  }
  Tensor out = allocate(x.shape(), out_dtype, x.device());
  if (out.numel() == 0) return out;
  if (x.is_contiguous()) {
    backend(x.device()).unary(op, x.buffer(), out.buffer(), params, contiguous_layout(out.numel(), 1));
    return out;
  }
  // Other views (a narrowed x, a slice with a step) are read through their strides, into a
  // contiguous result; elementwise_operand copies those a direct read would serve badly.
  const Tensor operand = elementwise_operand(x);
  const ElementwiseLayout layout = make_strided_layout(out.shape(), {&operand}, name);
  backend(x.device()).unary(op, strided_buffer(operand), out.buffer(), params, layout);
  return out;
}

}  // namespace frontend

namespace {

using frontend::name_of;

Tensor backward_op(Op op, const Tensor& grad, const Tensor& x, const UnaryParams& params = {}) {
  const char* name = name_of(op);
  frontend::check_grad(name, grad, x, "the forward input");
  frontend::check_supported(op, x.dtype(), x.device());
  Backend& engine = backend(x.device());
  // grad and x transposed or permuted alike (the grad of a transposed activation usually is):
  // computed in their memory order, the result taking their layout, as unary_op does.
  if (const auto order = frontend::memory_order(x); order && grad.strides() == x.strides()) {
    const Tensor dense_grad = grad.permute(*order), dense_x = x.permute(*order);
    const Tensor out = frontend::allocate(dense_x.shape(), x.dtype(), x.device());
    engine.unary_backward(op, dense_grad.buffer(), dense_x.buffer(), out.buffer(), params,
                          contiguous_layout(out.numel(), 2));
    return out.permute(frontend::inverse_permutation(*order));
  }
  Tensor out = frontend::allocate(x.shape(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  if (grad.is_contiguous() && x.is_contiguous()) {
    engine.unary_backward(op, grad.buffer(), x.buffer(), out.buffer(), params, contiguous_layout(out.numel(), 2));
    return out;
  }
  // Other views (narrowed, sliced with a step, one operand transposed) are read through their
  // strides into a contiguous result; elementwise_operand copies those a direct read would
  // serve badly (a transposed operand: the backward kernels have no transposing tile).
  const Tensor g = frontend::elementwise_operand(grad), input = frontend::elementwise_operand(x);
  const ElementwiseLayout layout = make_strided_layout(out.shape(), {&g, &input}, name);
  engine.unary_backward(op, frontend::strided_buffer(g), frontend::strided_buffer(input), out.buffer(), params,
                        layout);
  return out;
}

/// Clamp bounds as UnaryParams (alpha = lo, beta = hi; an absent bound is an infinity).
UnaryParams clamp_bounds(const char* op, std::optional<double> lo, std::optional<double> hi) {
  FERRITE_CHECK(lo || hi, InvalidArgument, op, ": at least one of lo and hi must be given");
  FERRITE_CHECK(!(lo && std::isnan(*lo)) && !(hi && std::isnan(*hi)), InvalidArgument, op,
                ": a bound is NaN (lo ", lo ? std::to_string(*lo) : "none", ", hi ", hi ? std::to_string(*hi) : "none",
                ")");
  constexpr double inf = std::numeric_limits<double>::infinity();
  return {lo.value_or(-inf), hi.value_or(inf)};
}

}  // namespace

Tensor neg(const Tensor& x) { return frontend::unary_op(Op::Neg, x); }
Tensor abs(const Tensor& x) { return frontend::unary_op(Op::Abs, x); }
Tensor relu(const Tensor& x) { return frontend::unary_op(Op::Relu, x); }
Tensor exp(const Tensor& x) { return frontend::unary_op(Op::Exp, x); }
Tensor log(const Tensor& x) { return frontend::unary_op(Op::Log, x); }
Tensor sqrt(const Tensor& x) { return frontend::unary_op(Op::Sqrt, x); }
Tensor pow(const Tensor& x, double exponent) { return frontend::unary_op(Op::Pow, x, {exponent, 0}); }
Tensor scale(const Tensor& x, double factor) { return frontend::unary_op(Op::Scale, x, {factor, 0}); }
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  return frontend::unary_op(Op::Clamp, x, clamp_bounds("clamp", lo, hi));
}
Tensor bitwise_not(const Tensor& x) { return frontend::unary_op(Op::BitwiseNot, x); }
Tensor logical_not(const Tensor& x) { return frontend::unary_op(Op::LogicalNot, x); }

Tensor sigmoid(const Tensor& x) { return frontend::unary_op(Op::Sigmoid, x); }
Tensor tanh(const Tensor& x) { return frontend::unary_op(Op::Tanh, x); }
Tensor gelu(const Tensor& x, GeluApproximation approximate) {
  return frontend::unary_op(approximate == GeluApproximation::Tanh ? Op::GeluTanh : Op::Gelu, x);
}
Tensor silu(const Tensor& x) { return frontend::unary_op(Op::Silu, x); }
Tensor elu(const Tensor& x, double alpha) { return frontend::unary_op(Op::Elu, x, {alpha, 0}); }
Tensor mish(const Tensor& x) { return frontend::unary_op(Op::Mish, x); }
Tensor relu(const Tensor& x, DType out_dtype) { return frontend::unary_op(Op::Relu, x, {}, out_dtype); }
Tensor sigmoid(const Tensor& x, DType out_dtype) { return frontend::unary_op(Op::Sigmoid, x, {}, out_dtype); }

Tensor relu_backward(const Tensor& grad, const Tensor& x) { return backward_op(Op::ReluBackward, grad, x); }
Tensor abs_backward(const Tensor& grad, const Tensor& x) { return backward_op(Op::AbsBackward, grad, x); }
Tensor clamp_backward(const Tensor& grad, const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  return backward_op(Op::ClampBackward, grad, x, clamp_bounds("clamp_backward", lo, hi));
}
Tensor sigmoid_backward(const Tensor& grad, const Tensor& y) { return backward_op(Op::SigmoidBackward, grad, y); }
Tensor tanh_backward(const Tensor& grad, const Tensor& y) { return backward_op(Op::TanhBackward, grad, y); }
Tensor gelu_backward(const Tensor& grad, const Tensor& x, GeluApproximation approximate) {
  return backward_op(approximate == GeluApproximation::Tanh ? Op::GeluTanhBackward : Op::GeluBackward, grad, x);
}
Tensor silu_backward(const Tensor& grad, const Tensor& x) { return backward_op(Op::SiluBackward, grad, x); }
Tensor elu_backward(const Tensor& grad, const Tensor& x, double alpha) {
  return backward_op(Op::EluBackward, grad, x, {alpha, 0});
}
Tensor mish_backward(const Tensor& grad, const Tensor& x) { return backward_op(Op::MishBackward, grad, x); }

}  // namespace ferrite
