// Shared by the reduction group's conformance files (reductions, scans, softmax, norms):
// case shapes, input makers, tolerances, and host helpers for the independent references.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
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

/// Entry::on_dense_block of the entries whose Case::ints[0] is a dim or kAll (the rest of the
/// case, keepdim included, as it is).
inline std::pair<Case, std::vector<bool>> dim_case_on_dense_block(const Case& c, const Tensor& dense,
                                                                  const std::vector<std::int64_t>& perm) {
  const auto rank = static_cast<std::int64_t>(perm.size());
  Case mapped = c;
  mapped.inputs = {dense};
  std::vector<bool> reduced(static_cast<std::size_t>(rank), c.ints[0] == kAll);
  if (c.ints[0] != kAll) {
    const std::int64_t d = c.ints[0] < 0 ? c.ints[0] + rank : c.ints[0];
    reduced[static_cast<std::size_t>(d)] = true;
    mapped.ints[0] = perm[static_cast<std::size_t>(d)];
  }
  return {mapped, reduced};
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

/// Factors near 1 whose products stay far inside every float dtype's range: x = exp(u), u
/// uniform in [-a, a] with a = min(log 1.25, 2.5 / sqrt(n)) for products of up to n factors.
/// The log of any product of k <= n of them then has mean 0 and standard deviation at most
/// 1.5, so neither a product nor a partial product in any order comes near F16's 65504 or
/// float's 3.4e38: uniform [0.8, 1.25] has a positive mean log, and the product of 4096 of
/// them was around 1e29 to 1e38, where a float partial product overflowed on the GPU and the
/// CPU's double one did not (prod_backward BF16 got -inf, expected -2.35e38).
inline Tensor near_one(const Shape& shape, DType dtype, Rng& rng, std::int64_t n) {
  const double a = std::min(std::log(1.25), 2.5 / std::sqrt(static_cast<double>(std::max<std::int64_t>(n, 1))));
  std::vector<double> v = random(shape, DType::F64, rng, -a, a).to_vector<double>();
  for (double& x : v) x = std::exp(x);
  return from_vector(v, shape).to(dtype);
}

/// Every element equal (ties everywhere).
inline Tensor all_equal(const Shape& shape, DType dtype) { return full(shape, 3, dtype); }

/// `rows` rows of `cols` random values (cols >= 2), cycling over the non-finite cases of the
/// row-wise ops: one +Inf, one -Inf, one NaN, +Inf and -Inf, two +Inf, all -Inf, all +Inf,
/// all equal, all finite. Shape [rows, cols], or [cols, rows] when `along_dim0` (the rows then
/// run down dim 0, for the column kernels).
inline Tensor special_rows(std::int64_t rows, std::int64_t cols, DType dtype, Rng& rng, bool along_dim0 = false) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v = random({rows, cols}, DType::F64, rng).to_vector<double>();
  for (std::int64_t r = 0; r < rows; ++r) {
    double* row = v.data() + r * cols;
    const std::int64_t a = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cols));
    const std::int64_t b = (a + 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cols - 1))) % cols;
    switch (r % 9) {
      case 0: row[a] = inf; break;
      case 1: row[a] = -inf; break;
      case 2: row[a] = nan; break;
      case 3: row[a] = inf, row[b] = -inf; break;
      case 4: row[a] = inf, row[b] = inf; break;
      case 5: std::fill(row, row + cols, -inf); break;
      case 6: std::fill(row, row + cols, inf); break;
      case 7: std::fill(row, row + cols, row[a]); break;
      default: break;
    }
  }
  if (!along_dim0) return from_vector(v, {rows, cols}).to(dtype);
  std::vector<double> t(v.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
  return from_vector(t, {cols, rows}).to(dtype);
}

/// special_rows in the shapes that reach each GPU path of the row-wise kernels: a row shorter
/// than a vector, rows in registers (scalar and 16-byte vector layouts), long rows.
inline std::vector<std::pair<std::int64_t, std::int64_t>> special_row_shapes() {
  return {{18, 7}, {18, 1024}, {9, 4096}, {9, 9000}};
}

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
