// Conformance entries of the matrix products: matmul (2-D, 1-D, broadcast batches, every
// transpose combination), matmul_out (alpha/beta), BF16/F16 -> F32 outputs, F32 through
// BF16/F16/TF32, bmm, dot, mv, vm, and nn::linear (with and without bias, with a residual).
//
// Products are compared by normalised error: every output element is divided by
//   scale = Σ_p |alpha · a_ip · b_pj| + |beta · c_ij|
// (the bound a floating-point dot product's error is proportional to), and the quotients
// are compared with an absolute tolerance per dtype. The division runs through ferrite's
// own cast and div, which are bit-exact on both backends, so the CUDA run still compares
// bits for determinism. The reference is a plain long-double triple loop written here.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"

namespace ferrite::conformance {
namespace {

const std::vector<DType> kMatmulDTypes = {DType::F32, DType::F64, DType::F16, DType::BF16};

// ---- the independent reference ----

struct ProductSpec {
  bool transpose_a = false, transpose_b = false;
  long double alpha = 1, beta = 0;
  const Tensor* c = nullptr;          // the accumulated output (beta != 0), else null
  const Tensor* bias = nullptr;       // [n], added to every row (nn::linear), else null
  DType round_inputs_to = DType::F64;  // F16/BF16: the inputs are rounded first (compute = F16/BF16)
};

struct Product {
  Shape shape;
  std::vector<long double> values, scale;
};

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

std::vector<double> safe_scale(const std::vector<long double>& scale) {
  std::vector<double> s(scale.size());
  // A zero or non-finite scale (an Inf operand) divides by 1, so that Inf and NaN results
  // stay apart (Inf / Inf would make both NaN).
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = scale[i] > 0 && std::isfinite(scale[i]) ? static_cast<double>(scale[i]) : 1.0;
  return s;
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

// ---- cases ----

// The operand shapes of an [m, k] x [k, n] product with the given transpose flags.
Shape a_shape(Shape batch, std::int64_t m, std::int64_t k, bool ta) {
  batch.push_back(ta ? k : m);
  batch.push_back(ta ? m : k);
  return batch;
}
Shape b_shape(Shape batch, std::int64_t k, std::int64_t n, bool tb) {
  batch.push_back(tb ? n : k);
  batch.push_back(tb ? k : n);
  return batch;
}

Case product_case(DType dtype, Rng& rng, const Shape& sa, const Shape& sb, bool ta, bool tb) {
  std::string label = shape_str(sa) + (ta ? "ᵀ" : "") + " x " + shape_str(sb) + (tb ? "ᵀ" : "");
  return {label, {random(sa, dtype, rng), random(sb, dtype, rng)}, {ta, tb}};
}

struct Mkn {
  std::int64_t m, k, n;
};

// Sizes 1, 7, 127 and 1025 in every role, non-square, and empty m, k, n.
const std::vector<Mkn> kMatrixSizes = {{1, 1, 1},    {7, 7, 7},     {127, 127, 127}, {1025, 127, 7}, {7, 1025, 127},
                                       {127, 7, 1025}, {1, 1025, 1025}, {3, 5, 2},     {0, 7, 5},      {7, 0, 5},
                                       {7, 5, 0},    {0, 0, 0}};

std::vector<Case> matmul_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  for (const Mkn& s : kMatrixSizes)
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      cases.push_back(product_case(dtype, rng, a_shape({}, s.m, s.k, ta), b_shape({}, s.k, s.n, tb), ta, tb));
    }
  // 1-D operands (dot, vector-matrix, matrix-vector), transposed matrix operands included.
  cases.push_back(product_case(dtype, rng, {127}, {127}, false, false));
  cases.push_back(product_case(dtype, rng, {0}, {0}, false, false));
  for (bool t : {false, true}) {
    cases.push_back(product_case(dtype, rng, {33}, b_shape({}, 33, 65, t), false, t));
    cases.push_back(product_case(dtype, rng, a_shape({}, 65, 33, t), {33}, t, false));
    cases.push_back(product_case(dtype, rng, {9}, b_shape({3}, 9, 5, t), false, t));
    cases.push_back(product_case(dtype, rng, a_shape({2, 3}, 5, 9, t), {9}, t, false));
  }
  // Batches: equal, broadcast along one side, folded into rows, two-sided broadcast, empty.
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    cases.push_back(product_case(dtype, rng, a_shape({3}, 7, 9, ta), b_shape({3}, 9, 5, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({1}, 17, 9, ta), b_shape({4}, 9, 33, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({4}, 17, 9, ta), b_shape({1}, 9, 33, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({4}, 17, 9, ta), b_shape({}, 9, 33, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({}, 17, 9, ta), b_shape({2, 4}, 9, 33, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({2, 1}, 7, 9, ta), b_shape({1, 3}, 9, 5, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({2, 3, 1}, 5, 4, ta), b_shape({3, 4}, 4, 6, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({0}, 7, 9, ta), b_shape({1}, 9, 5, tb), ta, tb));
  }
  cases.push_back(product_case(dtype, rng, a_shape({6, 1}, 65, 129, false), b_shape({1, 5}, 129, 33, true), false, true));
  // A row vector times a wide matrix (a Linear layer at batch 1), GEMV-shaped for cuBLASLt.
  for (int t = 0; t < 3; ++t) {
    const bool ta = t == 1, tb = t == 2;
    cases.push_back(product_case(dtype, rng, a_shape({}, 1, 1100, ta), b_shape({}, 1100, 2050, tb), ta, tb));
  }
  return cases;
}

ProductSpec spec_of(const Case& c) {
  ProductSpec s;
  s.transpose_a = c.ints.size() > 0 && c.ints[0] != 0;
  s.transpose_b = c.ints.size() > 1 && c.ints[1] != 0;
  return s;
}

MatmulOptions options_of(const Case& c) {
  MatmulOptions o;
  o.transpose_a = c.ints.size() > 0 && c.ints[0] != 0;
  o.transpose_b = c.ints.size() > 1 && c.ints[1] != 0;
  return o;
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
// TF32 rounds both inputs to 10 fraction bits: products carry up to ~2^-10 relative error.
Tolerance tf32_tolerance(DType) { return {0, 2e-3}; }

// ---- error cases ----

DType other_dtype(DType d) { return d == DType::F32 ? DType::F64 : DType::F32; }

std::vector<ErrorCase> matmul_errors(DType d) {
  const std::string name = dtype_name(d).data();
  std::vector<ErrorCase> errors = {
      {"inner dims differ", [=](Device dev) { matmul(zeros({2, 3}, d, dev), zeros({4, 5}, d, dev)); },
       ErrorKind::ShapeMismatch, "matmul: inner dimensions differ: a [2, 3] " + name},
      {"inner dims differ, transposed", [=](Device dev) {
         matmul(zeros({2, 3}, d, dev), zeros({2, 5}, d, dev), {.transpose_a = true, .transpose_b = true});
       },
       ErrorKind::ShapeMismatch, "(transposed) has k = 2, b [2, 5] " + name},
      {"batch dims do not broadcast", [=](Device dev) { matmul(zeros({2, 3, 4}, d, dev), zeros({3, 4, 5}, d, dev)); },
       ErrorKind::ShapeMismatch, "matmul: batch dims [2] of a [2, 3, 4] " + name},
      {"mixed dtypes", [=](Device dev) { matmul(zeros({2, 3}, d, dev), zeros({3, 2}, other_dtype(d), dev)); },
       ErrorKind::DTypeMismatch, "matmul: operand dtypes differ ([2, 3] " + name},
      {"integer operands", [=](Device dev) { matmul(zeros({2, 2}, DType::I32, dev), zeros({2, 2}, DType::I32, dev)); },
       ErrorKind::Unsupported, "matmul: dtype I32 is not supported"},
      {"rank 0 operand", [=](Device dev) { matmul(zeros({}, d, dev), zeros({3}, d, dev)); }, ErrorKind::ShapeMismatch,
       "matmul: operands need at least one dim"},
      {"undefined operand", [=](Device dev) { matmul(Tensor(), zeros({3}, d, dev)); }, ErrorKind::InvalidArgument,
       "matmul: an operand is an undefined"},
      {"out_dtype not offered", [=](Device dev) {
         matmul(zeros({2, 2}, d, dev), zeros({2, 2}, d, dev), {.out_dtype = DType::I64});
       },
       ErrorKind::InvalidArgument, "matmul: out_dtype I64 is not available for " + name + " operands"},
      {"out of the wrong shape", [=](Device dev) {
         matmul_out(zeros({2, 3}, d, dev), zeros({2, 4}, d, dev), zeros({4, 2}, d, dev));
       },
       ErrorKind::ShapeMismatch, "matmul: out is [2, 3] " + name},
      {"out of the wrong dtype", [=](Device dev) {
         matmul_out(zeros({2, 2}, other_dtype(d), dev), zeros({2, 4}, d, dev), zeros({4, 2}, d, dev));
       },
       ErrorKind::DTypeMismatch, "expected dtype " + name},
      {"out overlaps an operand", [=](Device dev) {
         const Tensor a = zeros({2, 2}, d, dev);
         matmul_out(a, a, zeros({2, 2}, d, dev));
       },
       ErrorKind::InvalidArgument, "matmul: out [2, 2] " + name},
  };
  if (d != DType::F32)
    errors.push_back({"compute option on non-F32 operands", [=](Device dev) {
                        matmul(zeros({2, 2}, d, dev), zeros({2, 2}, d, dev), {.compute = MatmulCompute::BF16});
                      },
                      ErrorKind::InvalidArgument, "matmul: compute BF16 applies to F32 operands, got " + name});
  return errors;
}

// ---- entries ----

// An entry whose run is `call` on inputs a and b, checked against the reference product that
// `spec` describes (default spec_of: ints are the transpose flags). The result must have the
// inputs' dtype, or `result_dtype` when given.
Entry product_entry(std::string op, std::function<std::vector<Case>(DType, Rng&)> cases,
                    std::function<Tensor(const Case&)> call, std::optional<DType> result_dtype = std::nullopt,
                    std::function<ProductSpec(const Case&)> spec = spec_of) {
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

FERRITE_CONFORMANCE([] {
  Entry e = product_entry("matmul", matmul_cases, [](const Case& c) { return matmul(c.inputs[0], c.inputs[1], options_of(c)); });
  e.errors = matmul_errors;
  return e;
}());

// bmm: 3-D only, equal batches, no broadcasting.
FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "bmm",
      [](DType dtype, Rng& rng) {
        std::vector<Case> cases;
        const std::vector<std::pair<std::int64_t, Mkn>> shapes = {
            {1, {7, 7, 7}}, {3, {127, 33, 65}}, {5, {1, 129, 1}}, {0, {3, 4, 5}}, {2, {0, 4, 5}}, {2, {3, 0, 5}}};
        for (const auto& [batch, s] : shapes)
          for (int t = 0; t < 4; ++t) {
            const bool ta = t & 1, tb = t & 2;
            cases.push_back(product_case(dtype, rng, a_shape({batch}, s.m, s.k, ta), b_shape({batch}, s.k, s.n, tb), ta, tb));
          }
        return cases;
      },
      [](const Case& c) { return bmm(c.inputs[0], c.inputs[1], options_of(c)); });
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"2-D operand", [=](Device dev) { bmm(zeros({2, 3}, d, dev), zeros({1, 3, 2}, d, dev)); }, ErrorKind::ShapeMismatch,
         "bmm: a must be 3-D, got [2, 3] " + std::string(dtype_name(d))},
        {"batch sizes differ", [=](Device dev) { bmm(zeros({2, 3, 4}, d, dev), zeros({1, 4, 2}, d, dev)); },
         ErrorKind::ShapeMismatch, "bmm: batch sizes differ: a [2, 3, 4] " + std::string(dtype_name(d))},
        {"inner dims differ", [=](Device dev) { bmm(zeros({2, 3, 4}, d, dev), zeros({2, 5, 2}, d, dev)); },
         ErrorKind::ShapeMismatch, "bmm: inner dimensions differ"},
    };
  };
  return e;
}());

// matmul_out and linear_out into a contiguous view that starts off the 16-byte grid (one row
// into its storage: 3 elements, 6 or 12 bytes), which the backends cannot write directly: the
// result must still land in out. inputs: a, b and out's starting values (beta = 1 for
// matmul_out, so they are read); ints: 0 matmul_out, 1 linear_out (a, b as x and weight).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (std::int64_t linear : {0, 1}) {
      Case c = product_case(dtype, rng, {4, 5}, linear ? Shape{3, 5} : Shape{5, 3}, false, linear != 0);
      c.inputs.push_back(random({4, 3}, dtype, rng));
      c.ints = {0, linear};
      c.label += linear ? ", linear_out into a view one row into its storage"
                        : ", beta 1 into a view one row into its storage";
      cases.push_back(std::move(c));
    }
    return cases;
  };
  auto call = [](const Case& c) {
    const Tensor& start = c.inputs[2];
    const Tensor out = zeros({5, 3}, start.dtype(), start.device()).narrow(0, 1, 4);
    out.copy_(start);
    if (c.ints[1] != 0)
      nn::linear_out(out, c.inputs[0], c.inputs[1]);
    else
      matmul_out(out, c.inputs[0], c.inputs[1], 1.0, 1.0);
    return out.contiguous();
  };
  auto spec = [](const Case& c) {
    ProductSpec s;
    s.transpose_b = c.ints[1] != 0;
    if (c.ints[1] == 0) {
      s.beta = 1;
      s.c = &c.inputs[2];
    }
    return s;
  };
  return product_entry("product_out_misaligned", cases, call, std::nullopt, spec);
}());

FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "dot",
      [](DType dtype, Rng& rng) {
        std::vector<Case> cases;
        for (std::int64_t n : {0, 1, 7, 127, 1025, 4099}) cases.push_back(product_case(dtype, rng, {n}, {n}, false, false));
        return cases;
      },
      [](const Case& c) { return dot(c.inputs[0], c.inputs[1]); });
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"lengths differ", [=](Device dev) { dot(zeros({3}, d, dev), zeros({4}, d, dev)); }, ErrorKind::ShapeMismatch,
         "dot: inner dimensions differ: a [3] " + std::string(dtype_name(d))},
        {"2-D operand", [=](Device dev) { dot(zeros({3}, d, dev), zeros({3, 1}, d, dev)); }, ErrorKind::ShapeMismatch,
         "dot: b must be 1-D, got [3, 1]"},
    };
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "mv",
      [](DType dtype, Rng& rng) {
        std::vector<Case> cases;
        for (const auto& [m, k] : std::vector<std::pair<std::int64_t, std::int64_t>>{
                 {1, 1}, {7, 127}, {1025, 7}, {127, 1025}, {0, 5}, {5, 0}})
          for (bool t : {false, true}) cases.push_back(product_case(dtype, rng, a_shape({}, m, k, t), {k}, t, false));
        return cases;
      },
      [](const Case& c) { return mv(c.inputs[0], c.inputs[1], options_of(c)); });
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"vector too long", [=](Device dev) { mv(zeros({3, 4}, d, dev), zeros({5}, d, dev)); }, ErrorKind::ShapeMismatch,
         "mv: inner dimensions differ: a [3, 4] " + std::string(dtype_name(d))},
        {"matrix is 1-D", [=](Device dev) { mv(zeros({4}, d, dev), zeros({4}, d, dev)); }, ErrorKind::ShapeMismatch,
         "mv: the matrix must be 2-D"},
    };
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "vm",
      [](DType dtype, Rng& rng) {
        std::vector<Case> cases;
        for (const auto& [k, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{
                 {1, 1}, {127, 7}, {7, 1025}, {1025, 127}, {1025, 4099}, {0, 5}, {5, 0}})
          for (bool t : {false, true}) cases.push_back(product_case(dtype, rng, {k}, b_shape({}, k, n, t), false, t));
        return cases;
      },
      [](const Case& c) { return vm(c.inputs[0], c.inputs[1], options_of(c)); });
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"vector too short", [=](Device dev) { vm(zeros({3}, d, dev), zeros({4, 5}, d, dev)); }, ErrorKind::ShapeMismatch,
         "vm: inner dimensions differ: a [3] " + std::string(dtype_name(d))},
        {"vector is 2-D", [=](Device dev) { vm(zeros({1, 4}, d, dev), zeros({4, 5}, d, dev)); }, ErrorKind::ShapeMismatch,
         "vm: the vector must be 1-D"},
    };
  };
  return e;
}());

// matmul_out: out = alpha·A·B + beta·out, including k = 0 (out = beta·out) and beta = 0 on
// an out full of NaN (which must not be read). inputs: a, b, out; reals: alpha, beta.
FERRITE_CONFORMANCE([] {
  Entry e;
  e.op = "matmul_out";
  e.dtypes = kMatmulDTypes;
  e.cases = [](DType dtype, Rng& rng) {
    struct Spec {
      Shape a, b, out;
      bool ta, tb;
      double alpha, beta;
      bool nan_out;
    };
    const std::vector<Spec> specs = {
        {{7, 5}, {5, 3}, {7, 3}, false, false, 0.5, -1.5, false},
        {{33, 127}, {65, 127}, {33, 65}, false, true, 2.0, 0.25, false},
        {{127, 33}, {127, 65}, {33, 65}, true, false, -1.0, 1.0, false},
        {{4, 9, 17}, {33, 9}, {4, 17, 33}, true, true, 1.0, 1.0, false},
        {{2, 1, 7, 9}, {1, 3, 9, 5}, {2, 3, 7, 5}, false, false, 0.75, -0.5, false},
        {{7, 0}, {0, 5}, {7, 5}, false, false, 1.0, 2.0, false},    // k = 0: out = beta·out
        {{7, 0}, {0, 5}, {7, 5}, false, false, 1.0, 0.0, true},     // k = 0, beta = 0: zeros, NaN ignored
        {{17, 9}, {9, 33}, {17, 33}, false, false, 1.5, 0.0, true},  // beta = 0: out is write-only
        {{17, 9}, {9, 33}, {17, 33}, false, false, 0.0, 3.0, false},  // alpha = 0
        {{1, 1024}, {1024, 2048}, {1, 2048}, false, false, 0.5, 2.0, false},  // GEMV-shaped
        {{1, 1024}, {1024, 2048}, {1, 2048}, false, false, -1.0, 0.0, true},
    };
    std::vector<Case> cases;
    for (const Spec& s : specs) {
      Case c = product_case(dtype, rng, s.a, s.b, s.ta, s.tb);
      c.inputs.push_back(s.nan_out ? full(s.out, std::numeric_limits<double>::quiet_NaN(), dtype)
                                   : random(s.out, dtype, rng));
      c.reals = {s.alpha, s.beta};
      c.label += " alpha " + std::to_string(s.alpha) + " beta " + std::to_string(s.beta) + (s.nan_out ? " out NaN" : "");
      cases.push_back(std::move(c));
    }
    return cases;
  };
  auto spec = [](const Case& c) {
    ProductSpec s = spec_of(c);
    s.alpha = c.reals[0];
    s.beta = c.reals[1];
    s.c = &c.inputs[2];
    return s;
  };
  e.run_outputs = [spec](const Case& c) {
    const Tensor out = c.inputs[2].clone();  // the case runs twice on CUDA: keep the input intact
    matmul_out(out, c.inputs[0], c.inputs[1], c.reals[0], c.reals[1], options_of(c));
    return std::vector<Tensor>{normalised(out, reference_product(c.inputs[0], c.inputs[1], spec(c)), out.dtype())};
  };
  e.reference_outputs = [spec](const Case& c) {
    return std::vector<Tensor>{normalised_reference(reference_product(c.inputs[0], c.inputs[1], spec(c)))};
  };
  e.reference_tolerance = reference_tolerance;
  e.backend_tolerance = backend_tolerance;
  return e;
}());

// F16/BF16 operands with an F32 result (the product is exact in F32, only the sum rounds).
FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "matmul_out_dtype_f32",
      [](DType dtype, Rng& rng) {
        std::vector<Case> cases;
        for (int t = 0; t < 4; ++t) {
          const bool ta = t & 1, tb = t & 2;
          cases.push_back(product_case(dtype, rng, a_shape({}, 127, 1025, ta), b_shape({}, 1025, 7, tb), ta, tb));
          cases.push_back(product_case(dtype, rng, a_shape({3}, 33, 65, ta), b_shape({1}, 65, 17, tb), ta, tb));
        }
        cases.push_back(product_case(dtype, rng, {7, 0}, {0, 5}, false, false));
        return cases;
      },
      [](const Case& c) {
        MatmulOptions o = options_of(c);
        o.out_dtype = DType::F32;
        return matmul(c.inputs[0], c.inputs[1], o);
      },
      DType::F32);
  e.dtypes = {DType::F16, DType::BF16};
  e.reference_tolerance = f32_result_tolerance;
  e.backend_tolerance = f32_result_tolerance;
  return e;
}());

// F32 in and out through BF16 or F16 (the seed's matmul_bf16_f32 / matmul_f16_f32 and
// their bmm twins). ints: ta, tb, compute (0: BF16, 1: F16), bmm (0/1).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (std::int64_t half = 0; half < 2; ++half)
      for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        Case c = product_case(dtype, rng, a_shape({}, 127, 1025, ta), b_shape({}, 1025, 33, tb), ta, tb);
        c.ints.push_back(half);
        c.ints.push_back(0);
        cases.push_back(c);
        Case batched = product_case(dtype, rng, a_shape({3}, 17, 65, ta), b_shape({3}, 65, 9, tb), ta, tb);
        batched.ints.push_back(half);
        batched.ints.push_back(1);
        batched.label = "bmm " + batched.label;
        cases.push_back(batched);
      }
    return cases;
  };
  auto spec = [](const Case& c) {
    ProductSpec s = spec_of(c);
    s.round_inputs_to = c.ints[2] ? DType::F16 : DType::BF16;
    return s;
  };
  auto call = [](const Case& c) {
    MatmulOptions o = options_of(c);
    o.compute = c.ints[2] ? MatmulCompute::F16 : MatmulCompute::BF16;
    return c.ints[3] ? bmm(c.inputs[0], c.inputs[1], o) : matmul(c.inputs[0], c.inputs[1], o);
  };
  Entry e = product_entry("matmul_compute_half", cases, call, DType::F32, spec);
  e.dtypes = {DType::F32};
  e.reference_tolerance = f32_result_tolerance;
  e.backend_tolerance = f32_result_tolerance;
  return e;
}());

// ---- nn::linear: x [..., in] · weightᵀ ([out, in]) + bias [out] ----
// inputs: x, weight and, where the case has one, bias. The reference is the product with
// transpose_b and the bias added exactly; on CUDA the bias rides in cuBLASLt's epilogue
// (F32, F16, BF16) or, for F64 and where cuBLASLt has no epilogue algorithm, is the output's
// starting value for a beta = 1 product: both round once, so the tolerances are matmul's.

Case linear_case(DType dtype, Rng& rng, const Shape& x, std::int64_t out_features, bool with_bias) {
  const std::int64_t in = x.empty() ? 0 : x.back();
  Case c{shape_str(x) + " x [" + std::to_string(out_features) + ", " + std::to_string(in) + "]ᵀ" +
             (with_bias ? " + bias" : ""),
         {random(x, dtype, rng), random({out_features, in}, dtype, rng)}};
  if (with_bias) c.inputs.push_back(random({out_features}, dtype, rng));
  return c;
}

// out features 5, 17, 33, 127 (not multiples of 8: C rows and the bias vector off the 16-byte
// grid after the first row) next to 40 and 96; 2-D, 1-D, 3-D and 4-D x; a GEMV-shaped batch
// of 1; empty m, n and k (k = 0: the result is the bias).
std::vector<Case> linear_cases(DType dtype, Rng& rng) {
  struct Spec {
    Shape x;
    std::int64_t out;
  };
  const std::vector<Spec> specs = {
      {{7, 9}, 5},        {{33, 65}, 17},     {{127, 129}, 33}, {{64, 128}, 96},  {{1025, 127}, 7},
      {{17, 1025}, 127},  {{1, 1100}, 2050},  {{33}, 17},       {{2, 7, 33}, 9},  {{3, 65, 96}, 40},
      {{4, 17, 31}, 13},  {{2, 3, 5, 9}, 7},  {{0, 5}, 3},      {{4, 0}, 3},      {{4, 5}, 0},
      {{2, 0, 7}, 5},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs)
    for (bool with_bias : {true, false}) cases.push_back(linear_case(dtype, rng, s.x, s.out, with_bias));
  // Edge values: x rows holding NaN, +Inf, +Inf beside -Inf, and -0 only; the bias holds -0
  // and +Inf. Every result is fixed by IEEE rules whatever the summation order (Inf + finite,
  // Inf - Inf = NaN), so the backends and the reference must agree on each NaN and Inf.
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Case edge = linear_case(dtype, rng, {4, 6}, 5, true);
  edge.label += ", NaN/Inf/-0 rows and bias";
  edge.inputs[0] = from_vector<double>({1, nan, 2, 3, 4, 5,       //
                                        1, 2, inf, 3, 4, 5,       //
                                        inf, 1, 2, -inf, 3, 4,    //
                                        -0.0, -0.0, -0.0, -0.0, -0.0, -0.0},
                                       {4, 6})
                       .to(dtype);
  edge.inputs[2] = from_vector<double>({-0.0, 1, inf, 2, 3}, {5}).to(dtype);
  cases.push_back(std::move(edge));
  return cases;
}

ProductSpec linear_spec(const Case& c, DType round_inputs_to = DType::F64) {
  ProductSpec s;
  s.transpose_b = true;
  s.bias = c.inputs.size() > 2 ? &c.inputs[2] : nullptr;
  s.round_inputs_to = round_inputs_to;
  return s;
}

std::optional<Tensor> bias_of(const Case& c) {
  return c.inputs.size() > 2 ? std::optional<Tensor>(c.inputs[2]) : std::nullopt;
}

std::vector<ErrorCase> linear_errors(DType d) {
  const std::string name = dtype_name(d).data();
  return {
      {"bias of the wrong length", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({5}, d, dev));
       },
       ErrorKind::ShapeMismatch, "linear: bias is [5] " + name},
      {"bias of the wrong length names the shapes", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({5}, d, dev));
       },
       ErrorKind::ShapeMismatch, "expected [4], one per output feature (input [2, 3] " + name},
      {"2-D bias", [=](Device dev) { nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({1, 4}, d, dev)); },
       ErrorKind::ShapeMismatch, "linear: bias is [1, 4] " + name},
      {"bias of another dtype", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({4}, other_dtype(d), dev));
       },
       ErrorKind::DTypeMismatch, "linear: bias is [4] " + std::string(dtype_name(other_dtype(d)))},
      {"0-d input", [=](Device dev) { nn::linear(zeros({}, d, dev), zeros({4, 3}, d, dev)); },
       ErrorKind::ShapeMismatch, "linear: operands need at least one dim, got [] " + name},
      {"in_features differ", [=](Device dev) { nn::linear(zeros({2, 3}, d, dev), zeros({4, 5}, d, dev)); },
       ErrorKind::ShapeMismatch, "linear: inner dimensions differ: a [2, 3] " + name},
      {"3-D weight", [=](Device dev) { nn::linear(zeros({2, 3}, d, dev), zeros({1, 4, 3}, d, dev)); },
       ErrorKind::ShapeMismatch, "linear: weight must be 2-D [out_features, in_features], got [1, 4, 3]"},
      {"integer operands", [=](Device dev) {
         nn::linear(zeros({2, 2}, DType::I32, dev), zeros({2, 2}, DType::I32, dev), zeros({2}, DType::I32, dev));
       },
       ErrorKind::Unsupported, "linear: dtype I32 is not supported"},
      {"undefined weight", [=](Device dev) { nn::linear(zeros({2, 2}, d, dev), Tensor()); }, ErrorKind::InvalidArgument,
       "linear: an operand is an undefined"},
      {"out of the wrong shape", [=](Device dev) {
         nn::linear_out(zeros({2, 3}, d, dev), zeros({2, 5}, d, dev), zeros({4, 5}, d, dev), zeros({4}, d, dev));
       },
       ErrorKind::ShapeMismatch, "linear: out is [2, 3] " + name},
      {"out overlaps the bias", [=](Device dev) {
         const Tensor out = zeros({1, 4}, d, dev);
         nn::linear_out(out, zeros({1, 5}, d, dev), zeros({4, 5}, d, dev), out.view({4}));
       },
       ErrorKind::InvalidArgument, "linear: out [1, 4] " + name},
  };
}

ProductSpec plain_linear_spec(const Case& c) { return linear_spec(c); }

FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "linear", linear_cases, [](const Case& c) { return nn::linear(c.inputs[0], c.inputs[1], bias_of(c)); },
      std::nullopt, plain_linear_spec);
  e.errors = linear_errors;
  return e;
}());

// linear_out into a dense out full of NaN (write-only, as beta = 0: neither the fused bias nor
// the bias-filled fallback may read it) and into a transposed view (computed densely and
// written back through the strides).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (std::int64_t view = 0; view < 2; ++view)
      for (bool with_bias : {true, false}) {
        Case c = linear_case(dtype, rng, {2, 17, 33}, 9, with_bias);
        c.ints = {view};
        c.label += view ? ", out a transposed view" : ", out NaN";
        cases.push_back(std::move(c));
      }
    return cases;
  };
  auto call = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    const Shape shape = {x.size(0), x.size(1), c.inputs[1].size(0)};
    Tensor out;
    if (c.ints[0] != 0) {
      out = zeros({shape[0], shape[2], shape[1]}, x.dtype(), x.device()).transpose(1, 2);
    } else {
      out = full(shape, std::numeric_limits<double>::quiet_NaN(), x.dtype(), x.device());
    }
    nn::linear_out(out, x, c.inputs[1], bias_of(c));
    return out.contiguous();
  };
  return product_entry("linear_out", std::move(cases), call, std::nullopt, plain_linear_spec);
}());

// Mixed precision with a bias: F16/BF16 operands and bias with an F32 result (the epilogue's
// bias dtype differs from the output's), and F32 operands and bias computed through BF16/F16
// (the bias stays F32; only x and weight are rounded). ints: mode (0: out_dtype F32,
// 1: compute BF16, 2: compute F16).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    const std::vector<std::int64_t> modes =
        dtype == DType::F32 ? std::vector<std::int64_t>{1, 2} : std::vector<std::int64_t>{0};
    for (std::int64_t mode : modes)
      for (bool with_bias : {true, false})
        for (const auto& [x, out] : std::vector<std::pair<Shape, std::int64_t>>{{{127, 1025}, 33}, {{3, 33, 65}, 17}}) {
          Case c = linear_case(dtype, rng, x, out, with_bias);
          c.ints = {mode};
          c.label += mode == 0 ? ", out F32" : mode == 1 ? ", compute BF16" : ", compute F16";
          cases.push_back(std::move(c));
        }
    return cases;
  };
  auto spec = [](const Case& c) {
    const std::int64_t mode = c.ints[0];
    return linear_spec(c, mode == 1 ? DType::BF16 : mode == 2 ? DType::F16 : DType::F64);
  };
  auto call = [](const Case& c) {
    nn::LinearOptions o;
    if (c.ints[0] == 0) o.out_dtype = DType::F32;
    if (c.ints[0] == 1) o.compute = MatmulCompute::BF16;
    if (c.ints[0] == 2) o.compute = MatmulCompute::F16;
    return nn::linear(c.inputs[0], c.inputs[1], bias_of(c), o);
  };
  Entry e = product_entry("linear_mixed_precision", cases, call, DType::F32, spec);
  e.dtypes = {DType::F32, DType::F16, DType::BF16};
  e.reference_tolerance = f32_result_tolerance;
  e.backend_tolerance = f32_result_tolerance;
  return e;
}());

// ---- nn::linear with a residual: residual + (x · weightᵀ + bias) ----
// inputs: x, weight, residual (the result's shape and dtype) and, where the case has one,
// bias. The reference is the product with transpose_b, the residual as an accumulated C
// (beta = 1) and the bias, all added exactly. On CUDA the residual is cuBLASLt's C (C ≠ D)
// with the bias in the epilogue, one rounding; the CPU (and CUDA where nothing fuses) starts
// the result as residual + bias, rounded to the result's dtype, and accumulates the product
// onto it: a second rounding, within the F16/BF16 tolerances (each rounding is at most one
// unit roundoff of the normalising scale, which includes |residual| and |bias|).

ProductSpec residual_linear_spec(const Case& c, DType round_inputs_to = DType::F64) {
  ProductSpec s;
  s.transpose_b = true;
  s.beta = 1;
  s.c = &c.inputs[2];
  s.bias = c.inputs.size() > 3 ? &c.inputs[3] : nullptr;
  s.round_inputs_to = round_inputs_to;
  return s;
}
ProductSpec plain_residual_linear_spec(const Case& c) { return residual_linear_spec(c); }

std::optional<Tensor> residual_bias_of(const Case& c) {
  return c.inputs.size() > 3 ? std::optional<Tensor>(c.inputs[3]) : std::nullopt;
}

// x [..., in] and weight [out, in] of `dtype`, the residual [..., out] of `result` and, when
// bias_dtype is given, a bias [out] of that dtype.
Case residual_linear_case(DType dtype, Rng& rng, const Shape& x, std::int64_t out_features, DType result,
                          std::optional<DType> bias_dtype) {
  const std::int64_t in = x.empty() ? 0 : x.back();
  Shape y(x.begin(), x.end() - 1);
  y.push_back(out_features);
  Case c{shape_str(x) + " x [" + std::to_string(out_features) + ", " + std::to_string(in) + "]ᵀ + " +
             std::string(dtype_name(result)) + " residual" +
             (bias_dtype ? " + " + std::string(dtype_name(*bias_dtype)) + " bias" : std::string()),
         {random(x, dtype, rng), random({out_features, in}, dtype, rng), random(y, result, rng)}};
  if (bias_dtype) c.inputs.push_back(random({out_features}, *bias_dtype, rng));
  return c;
}

// 2-D, 1-D, 3-D and 4-D x (batch dims folded into m), out features off the 8-element grid,
// a GEMV-shaped batch of 1, a product large enough for several tiles, empty m and n, and
// k = 0 (the result is residual + bias).
std::vector<Case> residual_linear_cases(DType dtype, Rng& rng) {
  struct Spec {
    Shape x;
    std::int64_t out;
  };
  const std::vector<Spec> specs = {
      {{7, 9}, 5},        {{33, 65}, 17},   {{64, 128}, 96}, {{17, 1025}, 127}, {{1, 1100}, 2050}, {{33}, 17},
      {{2, 7, 33}, 9},    {{3, 65, 96}, 40}, {{2, 3, 5, 9}, 7}, {{0, 5}, 3},      {{4, 5}, 0},       {{4, 0}, 3},
      {{2, 0, 7}, 5},     {{2, 3, 0}, 6},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs)
    for (bool with_bias : {true, false})
      cases.push_back(residual_linear_case(dtype, rng, s.x, s.out, dtype,
                                           with_bias ? std::optional<DType>(dtype) : std::nullopt));
  // Edge values in the residual: NaN, +Inf and -Inf propagate through the sum (Inf + finite),
  // and +Inf in the residual meets -Inf in the bias (NaN), whatever the summation order.
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Case edge = residual_linear_case(dtype, rng, {3, 6}, 4, dtype, dtype);
  edge.label += ", NaN/Inf in the residual and bias";
  edge.inputs[2] = from_vector<double>({nan, 1, inf, 2,     //
                                        -inf, 3, inf, 4,    //
                                        -0.0, inf, 5, -inf},
                                       {3, 4})
                       .to(dtype);
  edge.inputs[3] = from_vector<double>({1, 2, -inf, 3}, {4}).to(dtype);
  cases.push_back(std::move(edge));
  return cases;
}

std::vector<ErrorCase> residual_linear_errors(DType d) {
  const std::string name = dtype_name(d).data();
  auto with_residual = [](Tensor r) {
    nn::LinearOptions o;
    o.residual = std::move(r);
    return o;
  };
  std::vector<ErrorCase> errors = {
      {"residual of the wrong shape", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, with_residual(zeros({2, 5}, d, dev)));
       },
       ErrorKind::ShapeMismatch, "linear: residual is [2, 5] " + name},
      {"residual of the wrong shape names the result's", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, with_residual(zeros({4}, d, dev)));
       },
       ErrorKind::ShapeMismatch, "expected the result's shape [2, 4]"},
      {"residual of another dtype", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({4}, d, dev),
                    with_residual(zeros({2, 4}, other_dtype(d), dev)));
       },
       ErrorKind::DTypeMismatch, "linear: residual is [2, 4] " + std::string(dtype_name(other_dtype(d)))},
      {"residual of another dtype names the result's", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt,
                    with_residual(zeros({2, 4}, other_dtype(d), dev)));
       },
       ErrorKind::DTypeMismatch, "expected the result's dtype " + name + " (input [2, 3] " + name},
      {"out overlaps the residual", [=](Device dev) {
         const Tensor storage = zeros({3, 4}, d, dev);
         const Tensor out = storage.as_strided({2, 4}, {4, 1}, 0), r = storage.as_strided({2, 4}, {4, 1}, 4);
         nn::linear_out(out, zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, with_residual(r));
       },
       ErrorKind::InvalidArgument, "linear: out [2, 4] " + name},
      {"out overlapping the residual is named as such", [=](Device dev) {
         const Tensor storage = zeros({3, 4}, d, dev);
         const Tensor out = storage.as_strided({2, 4}, {4, 1}, 0), r = storage.as_strided({2, 4}, {4, 1}, 4);
         nn::linear_out(out, zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, with_residual(r));
       },
       ErrorKind::InvalidArgument, "overlaps the residual [2, 4] " + name},
      {"out a transposed view of the residual", [=](Device dev) {
         const Tensor r = zeros({4, 4}, d, dev);
         nn::linear_out(r.t(), zeros({4, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, with_residual(r));
       },
       ErrorKind::InvalidArgument, "overlaps the residual"},
  };
  if (is_half_precision(d)) {
    // With out_dtype F32 the residual is F32: the inputs' dtype is refused.
    errors.push_back({"residual of the inputs' dtype with out_dtype F32", [=](Device dev) {
                        nn::LinearOptions o = with_residual(zeros({2, 4}, d, dev));
                        o.out_dtype = DType::F32;
                        nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, o);
                      },
                      ErrorKind::DTypeMismatch, "expected the result's dtype F32 (input [2, 3] " + name});
    // The bias may be the inputs' dtype or the result's, nothing else.
    errors.push_back({"bias of a third dtype with out_dtype F32", [=](Device dev) {
                        nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({4}, DType::F64, dev),
                                   {.out_dtype = DType::F32});
                      },
                      ErrorKind::DTypeMismatch, "expected dtype " + name + " or F32 (input [2, 3] " + name});
  }
  return errors;
}

FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "linear_residual", residual_linear_cases,
      [](const Case& c) {
        nn::LinearOptions o;
        o.residual = c.inputs[2];
        const std::vector<double> before = c.inputs[2].to_vector<double>();
        Tensor y = nn::linear(c.inputs[0], c.inputs[1], residual_bias_of(c), o);
        // The residual is only read.
        const std::vector<double> after = c.inputs[2].to_vector<double>();
        for (std::size_t i = 0; i < before.size(); ++i)
          if (!(before[i] == after[i] || (std::isnan(before[i]) && std::isnan(after[i]))))
            throw std::runtime_error("linear: the residual " + c.inputs[2].description() + " was written");
        return y;
      },
      std::nullopt, plain_residual_linear_spec);
  e.errors = residual_linear_errors;
  return e;
}());

// linear_out with a residual: into a separate out full of NaN (never read), into the residual
// itself (dense: accumulated in place; a transposed view: through a dense copy), and into a
// transposed view distinct from the residual. The call works on a copy of the case's residual
// where it is written, so the reference (and CUDA's repeat run) sees the original.
// ints: where out is (0: separate NaN, 1: the residual, 2: the residual as a transposed view,
// 3: a separate transposed view).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    const char* labels[] = {", out NaN", ", out the residual", ", out the residual, a transposed view",
                            ", out a transposed view"};
    for (std::int64_t where = 0; where < 4; ++where)
      for (bool with_bias : {true, false}) {
        Case c = residual_linear_case(dtype, rng, {2, 17, 33}, 9, dtype,
                                      with_bias ? std::optional<DType>(dtype) : std::nullopt);
        c.ints = {where};
        c.label += labels[where];
        cases.push_back(std::move(c));
      }
    return cases;
  };
  auto call = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    const Shape shape = {x.size(0), x.size(1), c.inputs[1].size(0)};
    const std::int64_t where = c.ints[0];
    auto transposed = [&] { return zeros({shape[0], shape[2], shape[1]}, x.dtype(), x.device()).transpose(1, 2); };
    Tensor out, residual = c.inputs[2];
    if (where == 0) out = full(shape, std::numeric_limits<double>::quiet_NaN(), x.dtype(), x.device());
    if (where == 1) out = residual = c.inputs[2].clone();
    if (where == 2) {
      out = residual = transposed();
      out.copy_(c.inputs[2]);
    }
    if (where == 3) out = transposed();
    nn::LinearOptions o;
    o.residual = residual;
    nn::linear_out(out, x, c.inputs[1], residual_bias_of(c), o);
    return out.contiguous();
  };
  return product_entry("linear_out_residual", std::move(cases), call, std::nullopt, plain_residual_linear_spec);
}());

// x and out features of the mixed-precision residual and F32-bias entries: several tiles with
// a long k, a 3-D x, k = 0 (residual + bias) and empty m.
const std::vector<std::pair<Shape, std::int64_t>> kMixedLinearShapes = {
    {{127, 1025}, 33}, {{3, 33, 64}, 96}, {{4, 0}, 5}, {{0, 8}, 3}};

// A transformer block's residual stream: F16/BF16 x and weight with out_dtype F32, an F32
// residual, and no bias, a bias of the inputs' dtype or an F32 bias (the result's dtype); and
// F32 operands computed through BF16 with an F32 residual and bias. ints: bias (0: none,
// 1: the inputs' dtype, 2: F32).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (std::int64_t bias : {0, 1, 2}) {
      if (dtype == DType::F32 && bias == 2) continue;  // the inputs' dtype is F32 already
      for (const auto& [x, out] : kMixedLinearShapes) {
        const std::optional<DType> bias_dtype =
            bias == 0 ? std::nullopt : std::optional<DType>(bias == 1 ? dtype : DType::F32);
        Case c = residual_linear_case(dtype, rng, x, out, DType::F32, bias_dtype);
        c.label += dtype == DType::F32 ? ", compute BF16" : ", out F32";
        cases.push_back(std::move(c));
      }
    }
    return cases;
  };
  auto spec = [](const Case& c) {
    return residual_linear_spec(c, c.inputs[0].dtype() == DType::F32 ? DType::BF16 : DType::F64);
  };
  auto call = [](const Case& c) {
    nn::LinearOptions o;
    o.residual = c.inputs[2];
    if (c.inputs[0].dtype() == DType::F32)
      o.compute = MatmulCompute::BF16;
    else
      o.out_dtype = DType::F32;
    return nn::linear(c.inputs[0], c.inputs[1], residual_bias_of(c), o);
  };
  Entry e = product_entry("linear_residual_mixed_precision", cases, call, DType::F32, spec);
  e.dtypes = {DType::F32, DType::F16, DType::BF16};
  e.reference_tolerance = f32_result_tolerance;
  e.backend_tolerance = f32_result_tolerance;
  return e;
}());

// An F32 bias (the result's dtype) of F16/BF16 operands with out_dtype F32, without a
// residual: gemm_bias with the bias in D's type, cuBLASLt's documented bias type.
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& [x, out] : kMixedLinearShapes) {
      Case c = linear_case(dtype, rng, x, out, true);
      c.inputs[2] = random({out}, DType::F32, rng);
      c.label += ", F32 bias, out F32";
      cases.push_back(std::move(c));
    }
    return cases;
  };
  auto call = [](const Case& c) {
    return nn::linear(c.inputs[0], c.inputs[1], c.inputs[2], {.out_dtype = DType::F32});
  };
  Entry e = product_entry("linear_f32_bias", cases, call, DType::F32, plain_linear_spec);
  e.dtypes = {DType::F16, DType::BF16};
  e.reference_tolerance = f32_result_tolerance;
  e.backend_tolerance = f32_result_tolerance;
  return e;
}());

// Restores the process-wide TF32 switch even when a check throws.
class Tf32Switch {
 public:
  explicit Tf32Switch(bool on) : previous_(allow_tf32()) { set_allow_tf32(on); }
  ~Tf32Switch() { set_allow_tf32(previous_); }
  Tf32Switch(const Tf32Switch&) = delete;
  Tf32Switch& operator=(const Tf32Switch&) = delete;

 private:
  bool previous_;
};

std::vector<Case> tf32_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    cases.push_back(product_case(dtype, rng, a_shape({}, 127, 1025, ta), b_shape({}, 1025, 65, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({2}, 33, 127, ta), b_shape({2}, 127, 17, tb), ta, tb));
  }
  return cases;
}

Entry f32_mode_entry(std::string op, Tolerance (*backend)(DType), std::function<Tensor(const Case&)> call) {
  Entry e = product_entry(std::move(op), tf32_cases, call);
  e.dtypes = {DType::F32};
  e.backend_tolerance = backend;
  return e;
}

// Long inner dimensions with half outputs: the result must be the exact product rounded once
// (F32 accumulation up to the final rounding, as PyTorch's). The inputs are integers in
// [-8, 8]: every product and every partial sum is an integer below 2^24, so F32 accumulates
// them exactly in any order, while the signs make partial sums larger than the result (the
// cancellation that exposes partial sums rounded to F16/BF16 on the way). The error is
// measured in units in the last place of the output dtype at the exact value:
// (result - exact) / ulp(exact). Correct rounding gives at most 0.5 on both backends, so
// CUDA and the CPU may differ by 1; a split-K that adds partial sums in BF16 was 3 ulps off
// at K = 5000.
Tensor small_integers(const Shape& shape, DType dtype, Rng& rng) {
  std::uniform_int_distribution<int> pick(-8, 8);
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (float& x : v) x = static_cast<float>(pick(rng));
  return from_vector(v, shape).to(dtype);
}

std::vector<Case> long_k_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  auto add = [&](Shape sa, Shape sb, bool ta, bool tb) {
    std::string label = shape_str(sa) + (ta ? "ᵀ" : "") + " x " + shape_str(sb) + (tb ? "ᵀ" : "") + ", integers";
    cases.push_back({label, {small_integers(sa, dtype, rng), small_integers(sb, dtype, rng)}, {ta, tb}});
  };
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    add(a_shape({}, 4, 5000, ta), b_shape({}, 5000, 3, tb), ta, tb);
  }
  add(a_shape({}, 2, 20000, false), b_shape({}, 20000, 5, false), false, false);
  add(a_shape({3}, 2, 6000, false), b_shape({3}, 6000, 4, true), false, true);
  add(a_shape({}, 16, 8192, false), b_shape({}, 8192, 16, false), false, false);
  // Small outputs with very long K: too few output tiles to fill the GPU, so cuBLASLt splits
  // K, and a plan that adds the split-K partial sums in the output type rounds each to BF16.
  add(a_shape({}, 16, 65536, false), b_shape({}, 65536, 16, false), false, false);
  add(a_shape({}, 16, 262144, false), b_shape({}, 262144, 16, false), false, false);
  add({65537}, {65537}, false, false);
  return cases;
}

long double ulp_at(DType dtype, long double x) {
  const int fraction_bits = dtype == DType::BF16 ? 7 : 10;
  const int exponent = x == 0 ? -14 : std::max(std::ilogb(static_cast<double>(x)), dtype == DType::BF16 ? -126 : -14);
  return std::ldexp(1.0L, exponent - fraction_bits);
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

FERRITE_CONFORMANCE([] {
  Entry e;
  e.op = "matmul_long_k";
  e.dtypes = {DType::F16, DType::BF16};
  e.cases = long_k_cases;
  e.run_outputs = [](const Case& c) {
    const Tensor out = matmul(c.inputs[0], c.inputs[1], options_of(c));
    return std::vector<Tensor>{error_in_ulps(out, reference_product(c.inputs[0], c.inputs[1], spec_of(c)))};
  };
  e.reference_outputs = [](const Case& c) {
    return std::vector<Tensor>{zeros(reference_product(c.inputs[0], c.inputs[1], spec_of(c)).shape, DType::F64)};
  };
  // Half an ulp for the rounding, plus the F32 accumulation's own error (under 0.02 ulp).
  e.reference_tolerance = [](DType) { return Tolerance{0, 0.52}; };
  e.backend_tolerance = [](DType) { return Tolerance{0, 1.04}; };
  return e;
}());

// linear's bias is added before the one rounding (PyTorch's addmm), not to a rounded product:
// integer operands and integer biases of the product's size (to ±4096, rounded to the dtype,
// so still integers), exact in F32 in any order, measured in ulps of the exact result as in
// matmul_long_k. Rounding the product first and the sum again adds up to half an ulp of the
// product, several ulps of the result where the bias cancels part of the product.
FERRITE_CONFORMANCE([] {
  Entry e;
  e.op = "linear_long_k";
  e.dtypes = {DType::F16, DType::BF16};
  e.cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    std::uniform_int_distribution<int> pick(-4096, 4096);
    for (const auto& [x, out] : std::vector<std::pair<Shape, std::int64_t>>{
             {{4, 5000}, 33}, {{2, 3, 6000}, 17}, {{16, 8192}, 40}, {{16, 65536}, 16}}) {
      std::vector<float> bias(static_cast<std::size_t>(out));
      for (float& b : bias) b = static_cast<float>(pick(rng));
      cases.push_back({shape_str(x) + " x [" + std::to_string(out) + ", " + std::to_string(x.back()) +
                           "]ᵀ + bias, integers",
                       {small_integers(x, dtype, rng), small_integers({out, x.back()}, dtype, rng),
                        from_vector(bias, {out}).to(dtype)}});
    }
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    const Tensor out = nn::linear(c.inputs[0], c.inputs[1], c.inputs[2]);
    return std::vector<Tensor>{error_in_ulps(out, reference_product(c.inputs[0], c.inputs[1], linear_spec(c)))};
  };
  e.reference_outputs = [](const Case& c) {
    return std::vector<Tensor>{zeros(reference_product(c.inputs[0], c.inputs[1], linear_spec(c)).shape, DType::F64)};
  };
  e.reference_tolerance = [](DType) { return Tolerance{0, 0.52}; };
  e.backend_tolerance = [](DType) { return Tolerance{0, 1.04}; };
  return e;
}());

// TF32 per call, and through the global switch. The CPU computes these in full F32 (TF32
// is a permission), so only CUDA against the CPU is looser.
FERRITE_CONFORMANCE(f32_mode_entry("matmul_tf32", tf32_tolerance, [](const Case& c) {
  MatmulOptions o = options_of(c);
  o.compute = MatmulCompute::TF32;
  return matmul(c.inputs[0], c.inputs[1], o);
}));
FERRITE_CONFORMANCE(f32_mode_entry("matmul_tf32_global", tf32_tolerance, [](const Case& c) {
  const Tf32Switch on(true);
  return matmul(c.inputs[0], c.inputs[1], options_of(c));
}));
// MatmulCompute::F32 overrides the global switch: F32 accuracy on CUDA too.
FERRITE_CONFORMANCE(f32_mode_entry("matmul_f32_strict", backend_tolerance, [](const Case& c) {
  const Tf32Switch on(true);
  MatmulOptions o = options_of(c);
  o.compute = MatmulCompute::F32;
  return matmul(c.inputs[0], c.inputs[1], o);
}));

}  // namespace
}  // namespace ferrite::conformance
