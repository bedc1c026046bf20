// Conformance entries of the floating unary math ops: abs (every real dtype), exp, log,
// sqrt, pow, scale and clamp (float dtypes), against long double references.
#include <cmath>
#include <limits>

#include "conformance/elementwise_testing.hpp"

namespace ferrite::conformance {
namespace {

using elementwise::kFloatDTypes;

/// Errors every floating unary op shares: integer and Bool input, an undefined tensor.
std::vector<ErrorCase> float_unary_errors(const std::string& name, std::function<Tensor(const Tensor&)> fn) {
  return {
      {"I32 input", [fn](Device d) { fn(zeros({4}, DType::I32, d)); }, ErrorKind::Unsupported,
       name + ": dtype I32 is not supported on"},
      {"Bool input", [fn](Device d) { fn(zeros({4}, DType::Bool, d)); }, ErrorKind::Unsupported,
       name + ": dtype Bool is not supported on"},
      {"undefined tensor", [fn](Device) { fn(Tensor()); }, ErrorKind::InvalidArgument,
       name + ": an operand is an undefined"},
  };
}

/// A floating unary op whose parameter (if any) comes from Case::reals.
Entry float_unary_entry(const std::string& name, std::function<Tensor(const Tensor&, double)> fn,
                        std::function<long double(long double, long double)> ref, std::vector<double> params,
                        double lo = -4, double hi = 4) {
  Entry e;
  e.op = name;
  e.dtypes = kFloatDTypes;
  e.cases = [params, lo, hi](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (double p : params)
      for (Case c : elementwise::unary_cases(dtype, rng, lo, hi)) {
        c.label += " p=" + std::to_string(p);
        c.reals = {p};
        cases.push_back(std::move(c));
      }
    return cases;
  };
  e.run_outputs = [fn](const Case& c) { return std::vector<Tensor>{fn(c.inputs[0], c.reals[0])}; };
  e.reference_outputs = [ref](const Case& c) {
    const long double p = c.reals[0];
    return std::vector<Tensor>{elementwise::unary_reference(c.inputs[0], [&](long double x) { return ref(x, p); })};
  };
  e.errors = [name, fn](DType) {
    return float_unary_errors(name, [fn](const Tensor& x) { return fn(x, 1.0); });
  };
  return e;
}

FERRITE_CONFORMANCE(float_unary_entry(
    "exp", [](const Tensor& x, double) { return exp(x); }, [](long double x, long double) { return std::exp(x); }, {0},
    -12, 12));
FERRITE_CONFORMANCE(float_unary_entry(
    "log", [](const Tensor& x, double) { return log(x); }, [](long double x, long double) { return std::log(x); }, {0},
    -1, 50));
FERRITE_CONFORMANCE(float_unary_entry(
    "sqrt", [](const Tensor& x, double) { return sqrt(x); }, [](long double x, long double) { return std::sqrt(x); },
    {0}, -1, 50));
FERRITE_CONFORMANCE(float_unary_entry(
    "pow", [](const Tensor& x, double p) { return pow(x, p); },
    [](long double x, long double p) {
      if (p == 0) return 1.0L;                 // C and torch: pow(NaN, 0) = 1
      if (p == 0.5L) return std::sqrt(x);      // documented: x ** 0.5 is sqrt (sqrt(-Inf) = NaN)
      return std::pow(x, p);
    },
    {2.0, 0.5, -1.0, 3.0, 1.7, -0.5, 0.0}, 0.01, 6));
FERRITE_CONFORMANCE(float_unary_entry(
    "scale", [](const Tensor& x, double s) { return scale(x, s); },
    [](long double x, long double s) { return x * s; }, {2.5, -0.1, 0.0}));

// clamp: bounds in Case::reals (NaN = absent). Half dtypes compare with bounds rounded to
// float, so the reference rounds them the same way before clamping.
Entry clamp_entry() {
  Entry e;
  e.op = "clamp";
  e.dtypes = kFloatDTypes;
  const double none = std::numeric_limits<double>::quiet_NaN();
  e.cases = [none](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    const std::vector<std::pair<double, double>> bounds = {{-1.5, 2.25}, {0.1, none}, {none, -0.3}, {2.0, -1.0}};
    for (const auto& [lo, hi] : bounds)
      for (Case c : elementwise::unary_cases(dtype, rng)) {
        c.label += " [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
        c.reals = {lo, hi};
        cases.push_back(std::move(c));
      }
    return cases;
  };
  auto opt = [](double v) { return std::isnan(v) ? std::nullopt : std::optional<double>(v); };
  e.run_outputs = [opt](const Case& c) {
    return std::vector<Tensor>{clamp(c.inputs[0], opt(c.reals[0]), opt(c.reals[1]))};
  };
  e.reference_outputs = [](const Case& c) {
    const DType d = c.inputs[0].dtype();
    const auto wide = [d](double b) -> long double { return d == DType::F64 ? b : static_cast<float>(b); };
    const long double inf = std::numeric_limits<long double>::infinity();
    const long double lo = std::isnan(c.reals[0]) ? -inf : wide(c.reals[0]);
    const long double hi = std::isnan(c.reals[1]) ? inf : wide(c.reals[1]);
    return std::vector<Tensor>{elementwise::unary_reference(c.inputs[0], [&](long double x) {
      if (std::isnan(x)) return x;
      return std::min(std::max(x, lo), hi);
    })};
  };
  e.reference_tolerance = exact;  // picks x or a bound, rounded once
  e.backend_tolerance = exact;
  e.errors = [](DType d) {
    auto errors = float_unary_errors("clamp", [](const Tensor& x) { return clamp(x, -1.0, 1.0); });
    errors.push_back({"NaN bound", [d](Device dev) { clamp(zeros({2}, d, dev), std::nan(""), 1.0); },
                      ErrorKind::InvalidArgument, "clamp: a bound is NaN"});
    errors.push_back({"no bound", [d](Device dev) { clamp(zeros({2}, d, dev), std::nullopt, std::nullopt); },
                      ErrorKind::InvalidArgument, "clamp: at least one of lo and hi must be given"});
    return errors;
  };
  return e;
}
FERRITE_CONFORMANCE(clamp_entry());

// abs on every real dtype: exact; |MIN| wraps to MIN for integers, |-0| = +0.
Entry abs_entry() {
  Entry e;
  e.op = "abs";
  e.dtypes = elementwise::kRealDTypes;
  e.cases = [](DType dtype, Rng& rng) { return elementwise::unary_cases(dtype, rng); };
  e.run = [](const std::vector<Tensor>& in) { return abs(in[0]); };
  e.reference = [](const std::vector<Tensor>& in) {
    const DType d = in[0].dtype();
    return elementwise::unary_reference(in[0], [d](long double x) -> long double {
      if (d == DType::I32 && x == std::numeric_limits<std::int32_t>::min()) return x;
      if (d == DType::I64 && x == static_cast<long double>(std::numeric_limits<std::int64_t>::min())) return x;
      return std::fabs(x);
    });
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType) {
    return std::vector<ErrorCase>{{"Bool input", [](Device d) { abs(zeros({4}, DType::Bool, d)); },
                                   ErrorKind::Unsupported, "abs: dtype Bool is not supported on"},
                                  {"C64 input", [](Device d) { abs(zeros({4}, DType::C64, d)); },
                                   ErrorKind::Unsupported, "abs: dtype C64 is not supported on"}};
  };
  return e;
}
FERRITE_CONFORMANCE(abs_entry());

}  // namespace
}  // namespace ferrite::conformance
