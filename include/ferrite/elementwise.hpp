// Elementwise ops: NumPy broadcasting, no silent dtype promotion (add(F32, F64) is a
// DTypeMismatch; cast first with x.to(dtype)).
#pragma once

#include "ferrite/tensor.hpp"

namespace ferrite {

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);

/// Write variants: `out` must already have the broadcast shape, the inputs' dtype and their
/// device. They return `out`.
const Tensor& add_out(const Tensor& a, const Tensor& b, const Tensor& out);
const Tensor& sub_out(const Tensor& a, const Tensor& b, const Tensor& out);
const Tensor& mul_out(const Tensor& a, const Tensor& b, const Tensor& out);
const Tensor& div_out(const Tensor& a, const Tensor& b, const Tensor& out);

Tensor neg(const Tensor& x);
Tensor relu(const Tensor& x);

/// The shape that `a` and `b` broadcast to; ShapeMismatch naming `op` when they do not.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");

}  // namespace ferrite
