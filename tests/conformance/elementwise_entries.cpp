// Conformance entries of the arithmetic ops: add, sub, mul, div (with broadcasting), neg,
// relu, maximum, minimum for every real numeric dtype, and the mixed-precision forms
// (F16/BF16 in, F32 out) of add, sub, mul, div, relu and sigmoid.
#include <cmath>
#include <limits>

#include "conformance/conformance.hpp"
#include "conformance/elementwise_testing.hpp"
#include "conformance/reference.hpp"

namespace ferrite::conformance {
namespace {

const std::vector<DType> kArithmeticDTypes = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64};

// Integer results wrap to the dtype's width (two's complement), as documented.
long double wrap(DType dtype, __int128 v) {
  if (dtype == DType::I32) return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(v));
}

using ExactBinary = long double (*)(DType, long double, long double);

long double ref_add(DType d, long double a, long double b) {
  return is_integral(d) ? wrap(d, static_cast<__int128>(a) + static_cast<__int128>(b)) : a + b;
}
long double ref_sub(DType d, long double a, long double b) {
  return is_integral(d) ? wrap(d, static_cast<__int128>(a) - static_cast<__int128>(b)) : a - b;
}
long double ref_mul(DType d, long double a, long double b) {
  return is_integral(d) ? wrap(d, static_cast<__int128>(a) * static_cast<__int128>(b)) : a * b;
}
long double ref_div(DType d, long double a, long double b) {
  if (!is_integral(d)) return a / b;
  if (b == 0) return 0;  // documented: integer division by zero gives 0
  return wrap(d, static_cast<__int128>(a) / static_cast<__int128>(b));  // truncates toward zero
}

// For floats the exact result of a single operation, rounded once, equals IEEE arithmetic
// in the dtype; long double holds sums and products of two doubles' worth of bits closely
// enough for F32/F16/BF16, and F64 is compared with a tolerance.
Tensor binary_reference(const std::vector<Tensor>& in, ExactBinary fn) {
  const Shape out_shape = broadcast_shapes(in[0].shape(), in[1].shape());
  const auto a = reference::values(in[0]), b = reference::values(in[1]);
  std::vector<long double> out(static_cast<std::size_t>(shape_numel(out_shape)));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = fn(in[0].dtype(), a[reference::broadcast_source(static_cast<std::int64_t>(i), out_shape, in[0].shape())],
                b[reference::broadcast_source(static_cast<std::int64_t>(i), out_shape, in[1].shape())]);
  return reference::from_values(out, out_shape, in[0].dtype());
}

std::vector<Case> binary_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  for (const auto& [sa, sb] : binary_shape_pairs())
    cases.push_back({shape_str(sa) + " op " + shape_str(sb), {random(sa, dtype, rng), random(sb, dtype, rng)}});
  cases.push_back({"extremes", {extremes(dtype, 513, rng), extremes(dtype, 513, rng)}});
  return cases;
}

std::vector<ErrorCase> binary_errors(const std::string& name, Tensor (*fn)(const Tensor&, const Tensor&), DType dtype) {
  const DType other = dtype == DType::F32 ? DType::F64 : DType::F32;
  return {
      {"dtype mismatch", [=](Device d) { fn(zeros({3}, dtype, d), zeros({3}, other, d)); }, ErrorKind::DTypeMismatch,
       name + ": operand dtypes differ ([3] " + std::string(dtype_name(dtype))},
      {"no broadcast", [=](Device d) { fn(zeros({3, 4}, dtype, d), zeros({5}, dtype, d)); }, ErrorKind::ShapeMismatch,
       name + ": shapes [3, 4] and [5] do not broadcast"},
      {"unsupported Bool", [=](Device d) { fn(zeros({2}, DType::Bool, d), zeros({2}, DType::Bool, d)); },
       ErrorKind::Unsupported, name + ": dtype Bool is not supported"},
      {"out of the wrong dtype", [=](Device d) { add_out(zeros({2}, dtype, d), zeros({2}, dtype, d), zeros({2}, other, d)); },
       ErrorKind::DTypeMismatch, "add: out is [2] " + std::string(dtype_name(other))},
      {"out of the wrong shape", [=](Device d) { add_out(zeros({2}, dtype, d), zeros({2}, dtype, d), zeros({3}, dtype, d)); },
       ErrorKind::ShapeMismatch, "expected shape [2]"},
  };
}

Entry binary_entry(const std::string& name, Tensor (*fn)(const Tensor&, const Tensor&), ExactBinary ref) {
  Entry e;
  e.op = name;
  e.dtypes = kArithmeticDTypes;
  e.cases = binary_cases;
  e.run = [fn](const std::vector<Tensor>& in) { return fn(in[0], in[1]); };
  e.reference = [ref](const std::vector<Tensor>& in) { return binary_reference(in, ref); };
  // One correctly rounded operation: bit-exact except F64, where long double is only 64 bits.
  e.reference_tolerance = [](DType d) { return d == DType::F64 ? Tolerance{1e-15, 1e-300} : Tolerance{}; };
  // The GPU runs the same functors in the same precision: bit-exact too.
  e.backend_tolerance = exact;
  e.errors = [name, fn](DType d) { return binary_errors(name, fn, d); };
  return e;
}

FERRITE_CONFORMANCE(binary_entry("add", add, ref_add));
FERRITE_CONFORMANCE(binary_entry("sub", sub, ref_sub));
FERRITE_CONFORMANCE(binary_entry("mul", mul, ref_mul));
FERRITE_CONFORMANCE(binary_entry("div", div, ref_div));

Entry unary_entry(const std::string& name, Tensor (*fn)(const Tensor&), long double (*ref)(DType, long double)) {
  Entry e;
  e.op = name;
  e.dtypes = kArithmeticDTypes;
  e.cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (const Shape& s : unary_shapes()) cases.push_back({shape_str(s), {random(s, dtype, rng)}});
    cases.push_back({"extremes", {extremes(dtype, 1000, rng)}});
    return cases;
  };
  e.run = [fn](const std::vector<Tensor>& in) { return fn(in[0]); };
  e.reference = [ref](const std::vector<Tensor>& in) {
    auto v = reference::values(in[0]);
    for (auto& x : v) x = ref(in[0].dtype(), x);
    return reference::from_values(v, in[0].shape(), in[0].dtype());
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [name, fn](DType) {
    return std::vector<ErrorCase>{{"Bool input", [fn](Device d) { fn(zeros({4}, DType::Bool, d)); },
                                   ErrorKind::Unsupported, name + ": dtype Bool is not supported on"},
                                  {"undefined tensor", [fn](Device) { fn(Tensor()); }, ErrorKind::InvalidArgument,
                                   name + ": an operand is an undefined"}};
  };
  return e;
}

FERRITE_CONFORMANCE(unary_entry("neg", neg, [](DType d, long double x) {
  return is_integral(d) ? wrap(d, -static_cast<__int128>(x)) : -x;
}));
// x <= 0, not x < 0: relu(-0) is +0 (docs/families/elementwise.md); the extremes include -0.
FERRITE_CONFORMANCE(unary_entry("relu", relu, [](DType, long double x) { return x <= 0 ? 0.0L : x; }));

// maximum / minimum: NaN wins; +0 beats -0 for maximum, -0 beats +0 for minimum.
long double ref_minmax(bool is_max, long double a, long double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == 0 && b == 0) {
    const bool neg = is_max ? (std::signbit(a) && std::signbit(b)) : (std::signbit(a) || std::signbit(b));
    return neg ? -0.0L : 0.0L;
  }
  return is_max ? std::max(a, b) : std::min(a, b);
}

Entry minmax_entry(bool is_max) {
  const std::string name = is_max ? "maximum" : "minimum";
  Tensor (*fn)(const Tensor&, const Tensor&) = is_max ? maximum : minimum;
  Entry e;
  e.op = name;
  e.dtypes = kArithmeticDTypes;
  e.cases = [](DType dtype, Rng& rng) {
    auto cases = elementwise::binary_cases(dtype, rng);
    if (is_floating(dtype)) {  // signed zeros against each other, both orders
      const Tensor z = from_vector(std::vector<double>{0.0, -0.0, 0.0, -0.0}, {4}).to(dtype);
      const Tensor w = from_vector(std::vector<double>{-0.0, 0.0, 0.0, -0.0}, {4}).to(dtype);
      cases.push_back({"signed zeros", {z, w}});
    }
    return cases;
  };
  e.run = [fn](const std::vector<Tensor>& in) { return fn(in[0], in[1]); };
  e.reference = [is_max](const std::vector<Tensor>& in) {
    return elementwise::binary_reference(in[0], in[1], [is_max](long double a, long double b) { return ref_minmax(is_max, a, b); },
                                         in[0].dtype());
  };
  e.reference_tolerance = exact;  // picks one operand: no rounding at all
  e.backend_tolerance = exact;
  e.errors = [name, fn](DType d) { return elementwise::binary_errors(name, fn, d, DType::Bool); };
  return e;
}

FERRITE_CONFORMANCE(minmax_entry(true));
FERRITE_CONFORMANCE(minmax_entry(false));

// ---- mixed precision: F16/BF16 operands, F32 result ----

const std::vector<DType> kHalfDTypes = {DType::F16, DType::BF16};

Entry mixed_binary_entry(const std::string& name, Tensor (*fn)(const Tensor&, const Tensor&, DType), ExactBinary ref) {
  Entry e;
  e.op = name + "_to_F32";
  e.dtypes = kHalfDTypes;
  e.cases = elementwise::binary_cases;
  e.run = [fn](const std::vector<Tensor>& in) { return fn(in[0], in[1], DType::F32); };
  e.reference = [ref](const std::vector<Tensor>& in) {
    return elementwise::binary_reference(in[0], in[1], [ref](long double a, long double b) { return ref(DType::F32, a, b); },
                                         DType::F32);
  };
  // One float operation on exact half values, rounded once: bit-exact against the exact
  // result rounded to F32, and between the backends.
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [name, fn](DType d) {
    return std::vector<ErrorCase>{
        {"output F64", [=](Device dev) { fn(zeros({2}, d, dev), zeros({2}, d, dev), DType::F64); }, ErrorKind::Unsupported,
         name + ": output dtype F64 for " + std::string(dtype_name(d)) + " operands is not supported"},
        {"F32 operands to F16", [=](Device dev) { fn(zeros({2}, DType::F32, dev), zeros({2}, DType::F32, dev), DType::F16); },
         ErrorKind::Unsupported, name + ": output dtype F16 for F32 operands"},
    };
  };
  return e;
}

FERRITE_CONFORMANCE(mixed_binary_entry("add", add, ref_add));
FERRITE_CONFORMANCE(mixed_binary_entry("sub", sub, ref_sub));
FERRITE_CONFORMANCE(mixed_binary_entry("mul", mul, ref_mul));
FERRITE_CONFORMANCE(mixed_binary_entry("div", div, ref_div));

Entry mixed_unary_entry(const std::string& name, Tensor (*fn)(const Tensor&, DType), long double (*ref)(long double),
                        Tolerance tol) {
  Entry e;
  e.op = name + "_to_F32";
  e.dtypes = kHalfDTypes;
  e.cases = [](DType dtype, Rng& rng) { return elementwise::unary_cases(dtype, rng, -8, 8); };
  e.run = [fn](const std::vector<Tensor>& in) { return fn(in[0], DType::F32); };
  e.reference = [ref](const std::vector<Tensor>& in) { return elementwise::unary_reference(in[0], ref, DType::F32); };
  e.reference_tolerance = [tol](DType) { return tol; };
  e.backend_tolerance = [tol](DType) { return tol; };
  e.errors = [name, fn](DType d) {
    return std::vector<ErrorCase>{{"output I32", [=](Device dev) { fn(zeros({2}, d, dev), DType::I32); },
                                   ErrorKind::Unsupported, name + ": output dtype I32 for " + std::string(dtype_name(d))}};
  };
  return e;
}

FERRITE_CONFORMANCE(mixed_unary_entry("relu", relu, [](long double x) { return x <= 0 ? 0.0L : x; }, Tolerance{}));
FERRITE_CONFORMANCE(mixed_unary_entry("sigmoid", sigmoid, [](long double x) { return 1.0L / (1.0L + std::exp(-x)); },
                                      default_tolerance(DType::F32)));

}  // namespace
}  // namespace ferrite::conformance
