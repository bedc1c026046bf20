// In-place ops (ferrite/inplace.hpp): checks, then a write through the target's strides.
// Binary ops run the elementwise engine straight into the target when it is contiguous
// (add_out handles aliasing); everything else computes a dense result and copies it into the
// target's view with one strided copy.
#include "ferrite/inplace.hpp"

#include <cstdint>

#include "core/elementwise_layout.hpp"
#include "core/scalar_convert.hpp"
#include "ferrite/backend.hpp"
#include "ferrite/elementwise.hpp"
#include "ferrite/operators.hpp"
#include "frontend/checks.hpp"
#include "frontend/strided.hpp"

namespace ferrite {

const Tensor& copy_(const Tensor& dst, const Tensor& src) {
  const char* op = "copy_";
  frontend::check_defined(op, {&dst, &src});
  frontend::check_writable(op, dst);
  FERRITE_CHECK(broadcast_shapes(dst.shape(), src.shape(), op) == dst.shape(), ShapeMismatch, op, ": source ",
                src.description(), " cannot be broadcast to the destination ", dst.description());
  Tensor from = src.to(dst.device()).to(dst.dtype());
  if (frontend::may_overlap(from, dst)) {
    if (from.storage_offset() == dst.storage_offset() && from.shape() == dst.shape() && from.strides() == dst.strides())
      return dst;  // x.copy_(x)
    from = from.clone();
  }
  frontend::copy_elements(from.expand(dst.shape()), dst);
  return dst;
}

const Tensor& fill_(const Tensor& t, Scalar value) {
  const char* op = "fill_";
  frontend::check_defined(op, {&t});
  frontend::check_writable(op, t);
  frontend::check_supported(Op::Fill, t.dtype(), t.device());
  detail::check_fill_value(op, value, t.dtype());
  if (t.numel() == 0) return t;
  if (frontend::buffer_is_own(t)) {
    backend(t.device()).fill(t.buffer(), value);
    return t;
  }
  return copy_(t, full({}, value, t.dtype(), t.device()));
}

const Tensor& zero_(const Tensor& t) { return fill_(t, 0); }

const Tensor& add_(const Tensor& a, const Tensor& b) { return add_out(a, b, a); }
const Tensor& sub_(const Tensor& a, const Tensor& b) { return sub_out(a, b, a); }
const Tensor& mul_(const Tensor& a, const Tensor& b) { return mul_out(a, b, a); }
const Tensor& div_(const Tensor& a, const Tensor& b) { return div_out(a, b, a); }
const Tensor& add_(const Tensor& a, Scalar b) { return add_out(a, scalar_tensor_like("add_", b, a), a); }
const Tensor& sub_(const Tensor& a, Scalar b) { return sub_out(a, scalar_tensor_like("sub_", b, a), a); }
const Tensor& mul_(const Tensor& a, Scalar b) { return mul_out(a, scalar_tensor_like("mul_", b, a), a); }
const Tensor& div_(const Tensor& a, Scalar b) { return div_out(a, scalar_tensor_like("div_", b, a), a); }

const Tensor& clamp_(const Tensor& t, std::optional<double> lo, std::optional<double> hi) {
  frontend::check_defined("clamp_", {&t});
  frontend::check_writable("clamp_", t);
  return copy_(t, clamp(t, lo, hi));
}

const Tensor& masked_fill_(const Tensor& t, const Tensor& mask, Scalar value) {
  const char* op = "masked_fill_";
  frontend::check_defined(op, {&t, &mask});
  frontend::check_writable(op, t);
  FERRITE_CHECK(broadcast_shapes(t.shape(), mask.shape(), op) == t.shape(), ShapeMismatch, op, ": mask ",
                mask.description(), " cannot be broadcast to ", t.description());
  return copy_(t, masked_fill(t, mask, value));
}

// ---- the same as members of Tensor ----
const Tensor& Tensor::copy_(const Tensor& src) const { return ferrite::copy_(*this, src); }
const Tensor& Tensor::fill_(Scalar value) const { return ferrite::fill_(*this, value); }
const Tensor& Tensor::zero_() const { return ferrite::zero_(*this); }
const Tensor& Tensor::add_(const Tensor& other) const { return ferrite::add_(*this, other); }
const Tensor& Tensor::add_(Scalar other) const { return ferrite::add_(*this, other); }
const Tensor& Tensor::sub_(const Tensor& other) const { return ferrite::sub_(*this, other); }
const Tensor& Tensor::sub_(Scalar other) const { return ferrite::sub_(*this, other); }
const Tensor& Tensor::mul_(const Tensor& other) const { return ferrite::mul_(*this, other); }
const Tensor& Tensor::mul_(Scalar other) const { return ferrite::mul_(*this, other); }
const Tensor& Tensor::div_(const Tensor& other) const { return ferrite::div_(*this, other); }
const Tensor& Tensor::div_(Scalar other) const { return ferrite::div_(*this, other); }
const Tensor& Tensor::clamp_(std::optional<double> lo, std::optional<double> hi) const {
  return ferrite::clamp_(*this, lo, hi);
}
const Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value) const {
  return ferrite::masked_fill_(*this, mask, value);
}

}  // namespace ferrite
