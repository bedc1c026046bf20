// Helpers shared by the elementwise conformance files: case generators and host
// references that apply an exact (long double) function over broadcast operands.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"

namespace ferrite::conformance::elementwise {

inline const std::vector<DType> kFloatDTypes = {DType::F32, DType::F64, DType::F16, DType::BF16};
inline const std::vector<DType> kRealDTypes = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64};

/// Every shape of unary_shapes() with fresh values in [lo, hi], plus an extremes case.
inline std::vector<Case> unary_cases(DType dtype, Rng& rng, double lo = -4, double hi = 4) {
  std::vector<Case> cases;
  for (const Shape& s : unary_shapes()) cases.push_back({shape_str(s), {random(s, dtype, rng, lo, hi)}});
  cases.push_back({"extremes", {extremes(dtype, 1000, rng)}});
  return cases;
}

/// Every pair of binary_shape_pairs() plus an extremes case.
inline std::vector<Case> binary_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  for (const auto& [sa, sb] : binary_shape_pairs())
    cases.push_back({shape_str(sa) + " op " + shape_str(sb), {random(sa, dtype, rng), random(sb, dtype, rng)}});
  cases.push_back({"extremes", {extremes(dtype, 513, rng), extremes(dtype, 513, rng)}});
  return cases;
}

using Exact1 = std::function<long double(long double)>;
using Exact2 = std::function<long double(long double, long double)>;

/// f applied to every element of `x`, rounded once to `out` (x's dtype by default).
inline Tensor unary_reference(const Tensor& x, const Exact1& f, std::optional<DType> out = {}) {
  auto v = reference::values(x);
  for (auto& e : v) e = f(e);
  return reference::from_values(v, x.shape(), out.value_or(x.dtype()));
}

/// f over the broadcast of a and b, rounded once to `out`.
inline Tensor binary_reference(const Tensor& a, const Tensor& b, const Exact2& f, DType out) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  const auto va = reference::values(a), vb = reference::values(b);
  std::vector<long double> r(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < r.size(); ++i) {
    const auto flat = static_cast<std::int64_t>(i);
    r[i] = f(va[reference::broadcast_source(flat, shape, a.shape())], vb[reference::broadcast_source(flat, shape, b.shape())]);
  }
  return reference::from_values(r, shape, out);
}

/// The DTypeMismatch / ShapeMismatch / Unsupported errors every broadcasting binary op has.
inline std::vector<ErrorCase> binary_errors(const std::string& name, Tensor (*fn)(const Tensor&, const Tensor&),
                                            DType dtype, DType unsupported) {
  const DType other = dtype == DType::I64 ? DType::I32 : DType::I64;
  return {
      {"dtype mismatch", [=](Device d) { fn(zeros({3}, dtype, d), zeros({3}, other, d)); }, ErrorKind::DTypeMismatch,
       name + ": operand dtypes differ ([3] " + std::string(dtype_name(dtype))},
      {"no broadcast", [=](Device d) { fn(zeros({3, 4}, dtype, d), zeros({5}, dtype, d)); }, ErrorKind::ShapeMismatch,
       name + ": shapes [3, 4] and [5] do not broadcast"},
      {"unsupported dtype", [=](Device d) { fn(zeros({2}, unsupported, d), zeros({2}, unsupported, d)); },
       ErrorKind::Unsupported, name + ": dtype " + std::string(dtype_name(unsupported)) + " is not supported"},
  };
}

}  // namespace ferrite::conformance::elementwise
