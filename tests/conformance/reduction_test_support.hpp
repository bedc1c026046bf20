// Shared by the reduction group's conformance files (reductions, scans, softmax, norms):
// case shapes, input makers, tolerances, and host helpers for the independent references.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"

namespace ferrite::conformance::reduction_support {

/// Case::ints[0] for "reduce over everything".
inline constexpr std::int64_t kAll = std::numeric_limits<std::int64_t>::min();
inline constexpr long double kInf = std::numeric_limits<long double>::infinity();

const std::vector<DType> kFloatTypes = {DType::F32, DType::F64, DType::F16, DType::BF16};
const std::vector<DType> kRealTypes = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64};

struct Extents {
  std::int64_t outer = 1, dim = 1, inner = 1;
};

/// [outer, dim, inner] of `shape` around `dim` (kAll: everything), as the front end does.
inline Extents extents_of(const Shape& shape, std::int64_t dim) {
  Extents e;
  if (dim == kAll) {
    e.dim = shape_numel(shape);
    return e;
  }
  if (shape.empty()) return e;
  const auto rank = static_cast<std::int64_t>(shape.size());
  const std::int64_t d = dim < 0 ? dim + rank : dim;
  for (std::int64_t i = 0; i < d; ++i) e.outer *= shape[i];
  e.dim = shape[d];
  for (std::int64_t i = d + 1; i < rank; ++i) e.inner *= shape[i];
  return e;
}

inline Shape reduced(const Shape& shape, std::int64_t dim, bool keepdim) {
  if (dim == kAll || shape.empty()) return {};
  Shape s = shape;
  const auto rank = static_cast<std::int64_t>(shape.size());
  const std::int64_t d = dim < 0 ? dim + rank : dim;
  if (keepdim)
    s[d] = 1;
  else
    s.erase(s.begin() + d);
  return s;
}

/// Flat index of element j of output column k (k over outer * inner).
inline std::int64_t flat(const Extents& e, std::int64_t k, std::int64_t j) {
  return (k / e.inner) * e.dim * e.inner + k % e.inner + j * e.inner;
}

/// Random values of a float or integer dtype; `positive` draws from [1/16, 1/4] (sums of long
/// rows then stay far from cancellation and inside F16's range).
inline Tensor values_for(const Shape& shape, DType dtype, Rng& rng, bool positive = false) {
  return positive ? random(shape, dtype, rng, 0.0625, 0.25) : random(shape, dtype, rng);
}

/// x with about one element in `every` replaced by -Inf (floats only).
inline Tensor with_negative_infinity(const Tensor& x, Rng& rng, int every = 5) {
  if (!is_floating(x.dtype())) return x;
  std::vector<double> v = x.to(DType::F64).to_vector<double>();
  for (auto& e : v)
    if (rng() % every == 0) e = -std::numeric_limits<double>::infinity();
  return from_vector(v, x.shape()).to(x.dtype());
}

/// Every element equal (ties everywhere).
inline Tensor all_equal(const Shape& shape, DType dtype) { return full(shape, 3, dtype); }

/// Tolerance of a GPU result accumulated in float (F64: double) against the CPU backend,
/// which accumulates in double: a few units of the accumulator's rounding over the row.
inline Tolerance accumulated(DType d) {
  switch (d) {
    case DType::F32: return {1e-5, 1e-4};
    case DType::F64: return {1e-12, 1e-12};
    case DType::F16: return {2e-3, 1e-3};
    case DType::BF16: return {1.6e-2, 1e-2};
    default: return {};
  }
}

/// Tolerance for small probabilities (softmax): relative, with a tiny absolute floor.
inline Tolerance probabilities(DType d) {
  switch (d) {
    case DType::F32: return {1e-5, 1e-7};
    case DType::F64: return {1e-12, 1e-15};
    case DType::F16: return {2e-3, 1e-6};
    case DType::BF16: return {1.6e-2, 1e-6};
    default: return {};
  }
}

/// CPU (double accumulation, one rounding) against the long-double reference.
inline Tolerance cpu_rounding(DType d) {
  switch (d) {
    case DType::F32: return {1.3e-6, 1e-9};
    case DType::F64: return {1e-12, 1e-10};  // double accumulation over up to 2^20 terms
    case DType::F16: return {1e-3, 1e-7};
    case DType::BF16: return {8e-3, 1e-7};
    default: return {};
  }
}

/// Central-difference vector-Jacobian product of a host function f: R^n -> R^m in long
/// double: result_i = sum_j grad_j * d f_j / d x_i.
template <class F>
std::vector<long double> finite_difference_vjp(F&& f, std::vector<long double> x, const std::vector<long double>& grad) {
  std::vector<long double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double h = 1e-6L * std::max(1.0L, std::fabs(x[i]));
    const long double saved = x[i];
    x[i] = saved + h;
    const std::vector<long double> up = f(x);
    x[i] = saved - h;
    const std::vector<long double> down = f(x);
    x[i] = saved;
    long double s = 0;
    for (std::size_t j = 0; j < grad.size(); ++j) s += grad[j] * (up[j] - down[j]) / (2 * h);
    out[i] = s;
  }
  return out;
}

}  // namespace ferrite::conformance::reduction_support
