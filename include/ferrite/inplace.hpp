// In-place ops: they write into an existing tensor, through its strides when it is a view, so
// `x.select(0, 1).fill_(5)` changes x (PyTorch's trailing-underscore ops; the same calls are
// members of Tensor: x.add_(y), x.fill_(0), ...). Each returns its target.
//
// Rules, as PyTorch: the other operand broadcasts to the target's shape, never the target to
// a larger one (ShapeMismatch); the target keeps its dtype (a tensor operand of another dtype
// is a DTypeMismatch, except for copy_, which converts, and a Scalar takes the target's
// dtype as in operators.hpp); a target whose elements overlap (an expand()ed view) cannot be
// written (InvalidArgument). An operand that shares memory with the target is read before
// anything is written (x.add_(x.t()) gives x + x.t() of the old values).
#pragma once

#include <optional>

#include "ferrite/scalar.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite {

/// dst = src: src broadcast to dst's shape, converted to dst's dtype (the rules of to(dtype))
/// and moved to dst's device when it lives elsewhere.
const Tensor& copy_(const Tensor& dst, const Tensor& src);
/// Every element of t = value (checked as full() checks it).
const Tensor& fill_(const Tensor& t, Scalar value);
const Tensor& zero_(const Tensor& t);

const Tensor& add_(const Tensor& a, const Tensor& b);
const Tensor& add_(const Tensor& a, Scalar b);
const Tensor& sub_(const Tensor& a, const Tensor& b);
const Tensor& sub_(const Tensor& a, Scalar b);
const Tensor& mul_(const Tensor& a, const Tensor& b);
const Tensor& mul_(const Tensor& a, Scalar b);
/// ferrite's div: floating division, truncation for integers (docs/families/elementwise.md).
const Tensor& div_(const Tensor& a, const Tensor& b);
const Tensor& div_(const Tensor& a, Scalar b);
/// t = clamp(t, lo, hi).
const Tensor& clamp_(const Tensor& t, std::optional<double> lo, std::optional<double> hi);
/// t = value where mask (Bool, broadcast to t) is true.
const Tensor& masked_fill_(const Tensor& t, const Tensor& mask, Scalar value);

}  // namespace ferrite
