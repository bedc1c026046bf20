// The matrix products' conformance reference (product_reference.hpp): an exact long-double
// product, normalised errors, and the entry shape shared by matmul_entries.cpp and
// linear_entries.cpp.
#include "conformance/product_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "conformance/reference.hpp"

namespace ferrite::conformance::products {
namespace {

std::vector<double> safe_scale(const std::vector<long double>& scale) {
  std::vector<double> s(scale.size());
  // A zero or non-finite scale (an Inf operand) divides by 1, so that Inf and NaN results
  // stay apart (Inf / Inf would make both NaN).
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = scale[i] > 0 && std::isfinite(scale[i]) ? static_cast<double>(scale[i]) : 1.0;
  return s;
}

long double ulp_at(DType dtype, long double x) {
  const int fraction_bits = dtype == DType::BF16 ? 7 : 10;
  const int exponent = x == 0 ? -14 : std::max(std::ilogb(static_cast<double>(x)), dtype == DType::BF16 ? -126 : -14);
  return std::ldexp(1.0L, exponent - fraction_bits);
}

}  // namespace

// ---- the independent reference ----

// torch.matmul semantics written from scratch: 1-D operands become [1, k] / [k, 1], batch
// dims broadcast right-aligned, results summed exactly in long double.
Product reference_product(const Tensor& a, const Tensor& b, const ProductSpec& spec) {
  Shape sa = a.shape(), sb = b.shape();
  const bool a_vector = sa.size() == 1, b_vector = sb.size() == 1;
  const bool ta = spec.transpose_a && !a_vector, tb = spec.transpose_b && !b_vector;
  if (a_vector) sa.insert(sa.begin(), 1);
  if (b_vector) sb.push_back(1);
  const std::size_t ra = sa.size(), rb = sb.size();
  const std::int64_t m = ta ? sa[ra - 1] : sa[ra - 2], k = ta ? sa[ra - 2] : sa[ra - 1];
  const std::int64_t n = tb ? sb[rb - 2] : sb[rb - 1];
  const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  Shape batch(std::max(batch_a.size(), batch_b.size()), 1);  // right-aligned broadcast
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::size_t from_end = batch.size() - 1 - i;
    for (const Shape* s : {&batch_a, &batch_b})
      if (from_end < s->size() && (*s)[s->size() - 1 - from_end] != 1) batch[i] = (*s)[s->size() - 1 - from_end];
  }
  auto av = reference::values(a), bv = reference::values(b);
  if (spec.round_inputs_to != DType::F64) {
    for (auto& x : av) x = reference::round_to(spec.round_inputs_to, x);
    for (auto& x : bv) x = reference::round_to(spec.round_inputs_to, x);
  }
  const std::vector<long double> cv = spec.c ? reference::values(*spec.c) : std::vector<long double>{};
  const std::vector<long double> biasv = spec.bias ? reference::values(*spec.bias) : std::vector<long double>{};

  Product p;
  p.shape = batch;
  if (!a_vector) p.shape.push_back(m);
  if (!b_vector) p.shape.push_back(n);
  const std::int64_t batches = shape_numel(batch);
  p.values.resize(static_cast<std::size_t>(batches * m * n));
  p.scale.resize(p.values.size());
  for (std::int64_t t = 0; t < batches; ++t) {
    const std::int64_t a0 = reference::broadcast_source(t, batch, batch_a) * m * k;
    const std::int64_t b0 = reference::broadcast_source(t, batch, batch_b) * k * n;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        long double sum = 0, magnitude = 0;
        for (std::int64_t q = 0; q < k; ++q) {
          const long double x = av[static_cast<std::size_t>(a0 + (ta ? q * m + i : i * k + q))];
          const long double y = bv[static_cast<std::size_t>(b0 + (tb ? j * k + q : q * n + j))];
          sum += x * y;
          magnitude += std::fabs(x * y);
        }
        const auto o = static_cast<std::size_t>((t * m + i) * n + j);
        long double value = spec.alpha * sum, scale = std::fabs(spec.alpha) * magnitude;
        if (spec.beta != 0) {  // beta == 0 never reads C (it may hold NaN)
          value += spec.beta * cv[o];
          scale += std::fabs(spec.beta * cv[o]);
        }
        if (spec.bias) {
          value += biasv[static_cast<std::size_t>(j)];
          scale += std::fabs(biasv[static_cast<std::size_t>(j)]);
        }
        p.values[o] = value;
        p.scale[o] = scale;
      }
  }
  return p;
}


// The backend's result divided by the reference scale, with ferrite's bit-exact cast and div
// on the result's own device.
Tensor normalised(const Tensor& out, const Product& p, DType expected_dtype) {
  if (out.shape() != p.shape || out.dtype() != expected_dtype)
    throw std::runtime_error("matmul result is " + out.description() + ", expected " + shape_str(p.shape) + " " +
                             std::string(dtype_name(expected_dtype)));
  const Tensor scale = from_vector(safe_scale(p.scale), p.shape).to(out.device());
  return div(out.to(DType::F64), scale);
}

Tensor normalised_reference(const Product& p) {
  const std::vector<double> s = safe_scale(p.scale);
  std::vector<double> v(p.values.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(p.values[i] / s[i]);
  return from_vector(v, p.shape);
}

ProductSpec spec_of(const Case& c) {
  ProductSpec s;
  s.transpose_a = c.ints.size() > 0 && c.ints[0] != 0;
  s.transpose_b = c.ints.size() > 1 && c.ints[1] != 0;
  return s;
}

// Normalised error tolerances, CPU against the exact reference: F64 and F32 are bounded by
// k·u (u the unit roundoff, k <= 1025), half types by the final rounding (2^-11, 2^-8).
Tolerance reference_tolerance(DType d) {
  switch (d) {
    case DType::F64: return {0, 2e-13};
    case DType::F32: return {0, 3e-5};
    case DType::F16: return {0, 1e-3};
    case DType::BF16: return {0, 8e-3};
    default: return {};
  }
}
// CUDA against the CPU: other summation orders, and one ulp of the result's dtype for half types.
Tolerance backend_tolerance(DType d) {
  switch (d) {
    case DType::F64: return {0, 2e-13};
    case DType::F32: return {0, 3e-5};
    case DType::F16: return {0, 2e-3};
    case DType::BF16: return {0, 1e-2};
    default: return {};
  }
}
// Results in F32 from exactly representable products (half inputs, or inputs rounded to half).
Tolerance f32_result_tolerance(DType) { return {0, 3e-5}; }

DType other_dtype(DType d) { return d == DType::F32 ? DType::F64 : DType::F32; }

// An entry whose run is `call` on inputs a and b, checked against the reference product that
// `spec` describes (default spec_of: ints are the transpose flags). The result must have the
// inputs' dtype, or `result_dtype` when given.
Entry product_entry(std::string op, std::function<std::vector<Case>(DType, Rng&)> cases,
                    std::function<Tensor(const Case&)> call, std::optional<DType> result_dtype,
                    std::function<ProductSpec(const Case&)> spec) {
  Entry e;
  e.op = std::move(op);
  e.dtypes = kMatmulDTypes;
  e.cases = std::move(cases);
  e.run_outputs = [call, result_dtype, spec](const Case& c) {
    const Tensor out = call(c);
    return std::vector<Tensor>{normalised(out, reference_product(c.inputs[0], c.inputs[1], spec(c)),
                                          result_dtype.value_or(c.inputs[0].dtype()))};
  };
  e.reference_outputs = [spec](const Case& c) {
    return std::vector<Tensor>{normalised_reference(reference_product(c.inputs[0], c.inputs[1], spec(c)))};
  };
  e.reference_tolerance = reference_tolerance;
  e.backend_tolerance = backend_tolerance;
  return e;
}

Tensor small_integers(const Shape& shape, DType dtype, Rng& rng) {
  std::uniform_int_distribution<int> pick(-8, 8);
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (float& x : v) x = static_cast<float>(pick(rng));
  return from_vector(v, shape).to(dtype);
}

Tensor error_in_ulps(const Tensor& out, const Product& p) {
  std::vector<double> exact(p.values.size()), ulp(p.values.size());
  for (std::size_t i = 0; i < exact.size(); ++i) {
    exact[i] = static_cast<double>(p.values[i]);
    ulp[i] = static_cast<double>(ulp_at(out.dtype(), p.values[i]));
  }
  const Device dev = out.device();
  return div(sub(out.to(DType::F64), from_vector(exact, p.shape).to(dev)), from_vector(ulp, p.shape).to(dev));
}

}  // namespace ferrite::conformance::products
