// The C++ operators of ferrite/operators.hpp: each forwards to its named op; a Scalar operand
// becomes a rank-0 tensor of the other operand's dtype, which broadcasting then spreads.
#include "ferrite/operators.hpp"

#include <sstream>

#include "core/scalar_convert.hpp"
#include "ferrite/elementwise.hpp"
#include "ferrite/inplace.hpp"
#include "frontend/checks.hpp"

namespace ferrite {
namespace {

std::string scalar_text(Scalar value) {
  std::ostringstream text;
  if (value.kind() == Scalar::Kind::Bool)
    text << (value.to_int64() ? "true" : "false");
  else if (value.is_integral())
    text << value.to_int64();
  else
    text << value.to_double();
  return text.str();
}

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);

Tensor with_scalar(const char* op, BinaryFn fn, const Tensor& a, Scalar b) {
  return fn(a, scalar_tensor_like(op, b, a));
}
Tensor with_scalar(const char* op, BinaryFn fn, Scalar a, const Tensor& b) {
  return fn(scalar_tensor_like(op, a, b), b);
}

/// PyTorch's `/` is true division: integer operands give a floating result. ferrite's div of
/// integers truncates (and nothing promotes), so `/` on integers would silently differ from
/// LibTorch; it is refused and the three meanings are named instead.
void check_true_division(const Tensor& a, const Tensor& b) {
  const auto not_floating = [](const Tensor& t) {
    return t.defined() && (is_integral(t.dtype()) || t.dtype() == DType::Bool);
  };
  FERRITE_CHECK(!not_floating(a) && !not_floating(b), DTypeMismatch, "operator/: operands ", a.description(), " and ",
                b.description(), " are not floating; PyTorch's / would divide exactly into a floating result. Use "
                "x.to(DType::F32) / y for that, div(x, y) to truncate or floor_divide(x, y) to floor");
}

Tensor true_divide(const Tensor& a, const Tensor& b) {
  check_true_division(a, b);
  return div(a, b);
}

}  // namespace

Tensor scalar_tensor_like(const char* op, Scalar value, const Tensor& like) {
  frontend::check_defined(op, {&like});
  const DType dtype = like.dtype();
  // PyTorch would promote these to a floating (or, for a Bool tensor, an integer) result;
  // ferrite promotes nothing, and converting the scalar would change the answer.
  FERRITE_CHECK(!(is_integral(dtype) && !value.is_integral()), DTypeMismatch, op, ": floating-point scalar ",
                scalar_text(value), " with the integer tensor ", like.description(),
                " (PyTorch would promote to a floating result; cast first with .to(DType::F32) or use an "
                "integer scalar)");
  FERRITE_CHECK(!(dtype == DType::Bool && value.kind() != Scalar::Kind::Bool), DTypeMismatch, op, ": scalar ",
                scalar_text(value), " with the Bool tensor ", like.description(),
                " (PyTorch would promote; cast first with .to(dtype) or use a bool scalar)");
  detail::check_fill_value(op, value, dtype);
  return full({}, value, dtype, like.device());
}

#define FERRITE_BINARY_OPERATOR(sym, fn)                                                                      \
  Tensor operator sym(const Tensor& a, const Tensor& b) { return fn(a, b); }                                \
  Tensor operator sym(const Tensor& a, Scalar b) { return with_scalar("operator" #sym, fn, a, b); }         \
  Tensor operator sym(Scalar a, const Tensor& b) { return with_scalar("operator" #sym, fn, a, b); }

FERRITE_BINARY_OPERATOR(+, add)
FERRITE_BINARY_OPERATOR(-, sub)
FERRITE_BINARY_OPERATOR(*, mul)
FERRITE_BINARY_OPERATOR(/, true_divide)
FERRITE_BINARY_OPERATOR(%, remainder)
FERRITE_BINARY_OPERATOR(==, eq)
FERRITE_BINARY_OPERATOR(!=, ne)
FERRITE_BINARY_OPERATOR(<, lt)
FERRITE_BINARY_OPERATOR(<=, le)
FERRITE_BINARY_OPERATOR(>, gt)
FERRITE_BINARY_OPERATOR(>=, ge)
FERRITE_BINARY_OPERATOR(&, bitwise_and)
FERRITE_BINARY_OPERATOR(|, bitwise_or)
FERRITE_BINARY_OPERATOR(^, bitwise_xor)
#undef FERRITE_BINARY_OPERATOR

Tensor operator-(const Tensor& x) { return neg(x); }
Tensor operator~(const Tensor& x) { return bitwise_not(x); }

// Compound assignment writes into a's storage (through a's strides when it is a view), as in
// LibTorch; `/=` keeps `/`'s rule that integer tensors are refused.
namespace {
const Tensor& divide_in_place(const Tensor& a, const Tensor& b) {
  check_true_division(a, b);
  return div_(a, b);
}
}  // namespace

#define FERRITE_COMPOUND_OPERATOR(sym, fn)                                                              \
  Tensor& operator sym##=(Tensor& a, const Tensor& b) {                                                 \
    fn(a, b);                                                                                           \
    return a;                                                                                           \
  }                                                                                                     \
  Tensor& operator sym##=(Tensor& a, Scalar b) {                                                        \
    fn(a, scalar_tensor_like("operator" #sym "=", b, a));                                               \
    return a;                                                                                           \
  }                                                                                                     \
  Tensor operator sym##=(Tensor&& a, const Tensor& b) {                                                 \
    fn(a, b);                                                                                           \
    return std::move(a);                                                                                \
  }                                                                                                     \
  Tensor operator sym##=(Tensor&& a, Scalar b) {                                                        \
    fn(a, scalar_tensor_like("operator" #sym "=", b, a));                                               \
    return std::move(a);                                                                                \
  }

FERRITE_COMPOUND_OPERATOR(+, add_)
FERRITE_COMPOUND_OPERATOR(-, sub_)
FERRITE_COMPOUND_OPERATOR(*, mul_)
FERRITE_COMPOUND_OPERATOR(/, divide_in_place)
#undef FERRITE_COMPOUND_OPERATOR

}  // namespace ferrite
