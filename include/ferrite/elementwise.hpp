// Elementwise ops: NumPy broadcasting, no silent dtype promotion (add(F32, F64) is a
// DTypeMismatch; cast first with x.to(dtype)). Names and semantics follow PyTorch; the
// rules for NaN, zero divisors and shift counts are in docs/families/elementwise.md.
#pragma once

#include <optional>

#include "ferrite/scalar.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite {

// ---- arithmetic with broadcasting (every real numeric dtype) ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
/// Mixed precision: F16/BF16 operands with an F32 result (computed in float, rounded once).
/// `out_dtype` equal to the operands' dtype is the plain op.
Tensor add(const Tensor& a, const Tensor& b, DType out_dtype);
Tensor sub(const Tensor& a, const Tensor& b, DType out_dtype);
Tensor mul(const Tensor& a, const Tensor& b, DType out_dtype);
Tensor div(const Tensor& a, const Tensor& b, DType out_dtype);

/// Write variants: `out` must already have the broadcast shape, the inputs' dtype and their
/// device. They return `out`.
const Tensor& add_out(const Tensor& a, const Tensor& b, const Tensor& out);
const Tensor& sub_out(const Tensor& a, const Tensor& b, const Tensor& out);
const Tensor& mul_out(const Tensor& a, const Tensor& b, const Tensor& out);
const Tensor& div_out(const Tensor& a, const Tensor& b, const Tensor& out);

/// NaN wins; maximum(+0, -0) = +0, minimum(+0, -0) = -0.
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

// ---- integer (I32, I64) and bitwise (also Bool) ops ----
/// Rounds toward -Inf; x // 0 = 0; MIN // -1 = MIN (wraps).
Tensor floor_divide(const Tensor& a, const Tensor& b);
/// Takes the sign of the divisor; x % 0 = 0.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_not(const Tensor& x);
/// Counts outside [0, bits) give 0.
Tensor shift_left(const Tensor& a, const Tensor& counts);
/// Arithmetic shift; counts outside [0, bits) give -1 for negative values, else 0.
Tensor shift_right(const Tensor& a, const Tensor& counts);

// ---- Bool ----
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& x);

// ---- comparisons -> Bool (every real dtype and Bool; NaN compares as IEEE) ----
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);

// ---- selection (every dtype) ----
/// cond ? x : y with a Bool cond; the three broadcast together.
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);
/// x with `value` where the Bool mask (broadcastable to x's shape) is true.
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
/// Whether a floating tensor holds any Inf or NaN; reads one flag back from the device.
bool has_inf_nan(const Tensor& x);

// ---- unary ----
Tensor neg(const Tensor& x);   // real numeric dtypes
Tensor abs(const Tensor& x);   // real numeric dtypes; |MIN| wraps to MIN for integers
Tensor relu(const Tensor& x);  // real numeric dtypes
Tensor exp(const Tensor& x);   // the rest: floating dtypes
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor pow(const Tensor& x, double exponent);
Tensor scale(const Tensor& x, double factor);
/// min(max(x, lo), hi); an absent bound does not clamp; lo > hi gives hi (torch.clamp).
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi);

// ---- activations ----
enum class GeluApproximation { None, Tanh };

Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor gelu(const Tensor& x, GeluApproximation approximate = GeluApproximation::None);
Tensor silu(const Tensor& x);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor mish(const Tensor& x);
/// Mixed precision: an F16/BF16 x with an F32 result.
Tensor relu(const Tensor& x, DType out_dtype);
Tensor sigmoid(const Tensor& x, DType out_dtype);

// ---- backward: the gradient of the input from the gradient of the output ----
// From the forward input x, except sigmoid and tanh, which take the forward output y.
Tensor relu_backward(const Tensor& grad, const Tensor& x);
Tensor abs_backward(const Tensor& grad, const Tensor& x);
Tensor clamp_backward(const Tensor& grad, const Tensor& x, std::optional<double> lo, std::optional<double> hi);
Tensor sigmoid_backward(const Tensor& grad, const Tensor& y);
Tensor tanh_backward(const Tensor& grad, const Tensor& y);
Tensor gelu_backward(const Tensor& grad, const Tensor& x, GeluApproximation approximate = GeluApproximation::None);
Tensor silu_backward(const Tensor& grad, const Tensor& x);
Tensor elu_backward(const Tensor& grad, const Tensor& x, double alpha = 1.0);
Tensor mish_backward(const Tensor& grad, const Tensor& x);

/// The shape that `a` and `b` broadcast to; ShapeMismatch naming `op` when they do not.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");

}  // namespace ferrite
