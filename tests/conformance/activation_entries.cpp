// Conformance entries of the activations and of every backward op:
//   forward  sigmoid, tanh, gelu (erf and tanh forms), silu, elu, mish: long double truth;
//   backward relu, abs, clamp, sigmoid, tanh, gelu (both), silu, elu, mish: the analytic
//            derivative in long double, and (F64) central finite differences of ferrite's
//            own CPU forward, so a backward that disagrees with its forward fails.
#include <cmath>
#include <limits>

#include "conformance/elementwise_testing.hpp"

namespace ferrite::conformance {
namespace {

using elementwise::kFloatDTypes;
using LD = long double;

constexpr LD kK = 0.797884560802865355879892119868763737L;  // sqrt(2/pi)
constexpr LD kC = 0.044715L;
constexpr LD kSat = 1e4L;  // documented saturation of gelu/silu/mish (activation_functors.hpp)

LD sigmoid_ref(LD x) { return 1.0L / (1.0L + std::exp(-x)); }
LD softplus_ref(LD x) { return x > 20 ? x : std::log1p(std::exp(x)); }
LD gelu_ref(LD x) { return x < -kSat ? -0.0L : 0.5L * x * std::erfc(-x / std::sqrt(2.0L)); }
LD gelu_tanh_ref(LD x) {
  if (x < -kSat) return -0.0L;
  return 0.5L * x * (1.0L + std::tanh(kK * (x + kC * x * x * x)));
}
LD silu_ref(LD x) { return x < -kSat ? -0.0L : x * sigmoid_ref(x); }
LD mish_ref(LD x) { return x < -kSat ? -0.0L : x * std::tanh(softplus_ref(x)); }
LD elu_ref(LD x, LD alpha) { return x > 0 ? x : alpha * std::expm1(x); }

// Derivatives (of the input) for the saturating ones: 1 above +1e4, 0 below -1e4.
LD saturated_derivative(LD x) { return x > 0 ? 1.0L : 0.0L; }
bool saturated(LD x) { return x > kSat || x < -kSat; }
LD gelu_d(LD x) {
  if (saturated(x)) return saturated_derivative(x);
  const LD cdf = 0.5L * std::erfc(-x / std::sqrt(2.0L));
  const LD pdf = std::exp(-0.5L * x * x) / std::sqrt(2.0L * 3.141592653589793238462643383279502884L);
  return cdf + x * pdf;
}
LD gelu_tanh_d(LD x) {
  if (saturated(x)) return saturated_derivative(x);
  const LD t = std::tanh(kK * (x + kC * x * x * x));
  return 0.5L * (1 + t) + 0.5L * x * (1 - t * t) * kK * (1 + 3 * kC * x * x);
}
LD silu_d(LD x) {
  if (saturated(x)) return saturated_derivative(x);
  const LD s = sigmoid_ref(x);
  return s * (1 + x * (1 - s));
}
LD mish_d(LD x) {
  if (saturated(x)) return saturated_derivative(x);
  const LD t = std::tanh(softplus_ref(x));
  return t + x * sigmoid_ref(x) * (1 - t * t);
}

// ---- forward ----

Entry activation_entry(const std::string& name, std::function<Tensor(const Tensor&, double)> fn,
                       std::function<LD(LD, LD)> ref, std::vector<double> params = {0}) {
  Entry e;
  e.op = name;
  e.dtypes = kFloatDTypes;
  e.cases = [params](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (double p : params)
      for (Case c : elementwise::unary_cases(dtype, rng, -8, 8)) {
        c.reals = {p};
        cases.push_back(std::move(c));
      }
    return cases;
  };
  e.run_outputs = [fn](const Case& c) { return std::vector<Tensor>{fn(c.inputs[0], c.reals[0])}; };
  e.reference_outputs = [ref](const Case& c) {
    const LD p = c.reals[0];
    return std::vector<Tensor>{elementwise::unary_reference(c.inputs[0], [&](LD x) { return ref(x, p); })};
  };
  e.errors = [name, fn](DType) {
    return std::vector<ErrorCase>{
        {"I64 input", [fn](Device d) { fn(zeros({4}, DType::I64, d), 1.0); }, ErrorKind::Unsupported,
         name + ": dtype I64 is not supported on"},
        {"undefined tensor", [fn](Device) { fn(Tensor(), 1.0); }, ErrorKind::InvalidArgument,
         name + ": an operand is an undefined"}};
  };
  return e;
}

FERRITE_CONFORMANCE(activation_entry("sigmoid", [](const Tensor& x, double) { return sigmoid(x); },
                                     [](LD x, LD) { return sigmoid_ref(x); }));
FERRITE_CONFORMANCE(activation_entry("tanh", [](const Tensor& x, double) { return tanh(x); },
                                     [](LD x, LD) { return std::tanh(x); }));
FERRITE_CONFORMANCE(activation_entry("gelu", [](const Tensor& x, double) { return gelu(x); },
                                     [](LD x, LD) { return gelu_ref(x); }));
FERRITE_CONFORMANCE(activation_entry("gelu(tanh)",
                                     [](const Tensor& x, double) { return gelu(x, GeluApproximation::Tanh); },
                                     [](LD x, LD) { return gelu_tanh_ref(x); }));
FERRITE_CONFORMANCE(activation_entry("silu", [](const Tensor& x, double) { return silu(x); },
                                     [](LD x, LD) { return silu_ref(x); }));
FERRITE_CONFORMANCE(activation_entry("elu", [](const Tensor& x, double a) { return elu(x, a); },
                                     [](LD x, LD a) { return elu_ref(x, a); }, {1.0, 0.5}));
FERRITE_CONFORMANCE(activation_entry("mish", [](const Tensor& x, double) { return mish(x); },
                                     [](LD x, LD) { return mish_ref(x); }));

// ---- backward ----

/// A backward op: (grad, forward tensor, parameters) -> input gradient.
using BackwardCall = std::function<Tensor(const Tensor& grad, const Tensor& x, const std::vector<double>& p)>;
/// The exact input gradient for one element: (grad, forward value, parameters).
using BackwardExact = std::function<LD(LD g, LD x, const std::vector<double>& p)>;
/// The forward op whose derivative the backward computes (for finite differences).
using ForwardCall = std::function<Tensor(const Tensor& x, const std::vector<double>& p)>;

struct BackwardSpec {
  std::string name;
  BackwardCall backward;
  BackwardExact exact;
  ForwardCall forward;
  /// Whether the backward takes the forward output (sigmoid, tanh) instead of the input.
  bool from_output = false;
  std::vector<std::vector<double>> params = {{}};
  /// Points where the derivative jumps, kept away from in the finite-difference check.
  std::function<std::vector<double>(const std::vector<double>&)> kinks = [](const std::vector<double>&) {
    return std::vector<double>{};
  };
};

/// Half dtypes compare x with bounds rounded to float (as the functors do).
LD bound_for(DType d, double b) { return d == DType::F64 ? LD(b) : LD(static_cast<float>(b)); }

std::vector<Case> backward_cases(const BackwardSpec& spec, DType dtype, Rng& rng) {
  std::vector<Case> cases;
  // sigmoid/tanh backward take outputs: values around [-1, 1] (any value is valid).
  const double range = spec.from_output ? 1.5 : 8;
  // Rows over several blocks of the GPU's strided kernel (128 threads x 8 items) and a ragged
  // last block: the row-strided pass's narrowed grad is a rank-2 view there, where the rank-2
  // views of unary_shapes() fit in one block.
  const Shape rows = {67, 129};
  for (const auto& p : spec.params) {
    for (const Shape& s : unary_shapes())
      cases.push_back({shape_str(s), {random(s, dtype, rng), random(s, dtype, rng, -range, range)}, {}, p});
    cases.push_back({"extremes", {random({1000}, dtype, rng), extremes(dtype, 1000, rng)}, {}, p});
    cases.push_back({shape_str(rows), {random(rows, dtype, rng), random(rows, dtype, rng, -range, range)}, {}, p});
  }
  return cases;
}

Entry backward_entry(const BackwardSpec& spec) {
  Entry e;
  e.op = spec.name;
  e.dtypes = kFloatDTypes;
  e.cases = [spec](DType dtype, Rng& rng) { return backward_cases(spec, dtype, rng); };
  e.run_outputs = [spec](const Case& c) {
    return std::vector<Tensor>{spec.backward(c.inputs[0], c.inputs[1], c.reals)};
  };
  e.reference_outputs = [spec](const Case& c) {
    const auto g = reference::values(c.inputs[0]), x = reference::values(c.inputs[1]);
    std::vector<LD> out(g.size());
    std::vector<double> p = c.reals;
    for (auto& b : p) b = static_cast<double>(bound_for(c.inputs[0].dtype(), b));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = spec.exact(g[i], x[i], p);
    return std::vector<Tensor>{reference::from_values(out, c.inputs[0].shape(), c.inputs[0].dtype())};
  };
  e.errors = [spec](DType d) {
    const std::vector<double> p = spec.params.front();
    const BackwardCall call = spec.backward;
    const DType other = d == DType::F32 ? DType::F64 : DType::F32;
    return std::vector<ErrorCase>{
        {"shape mismatch", [=](Device dev) { call(zeros({3}, d, dev), zeros({4}, d, dev), p); },
         ErrorKind::ShapeMismatch, spec.name + ": grad is [3] " + std::string(dtype_name(d))},
        {"dtype mismatch", [=](Device dev) { call(zeros({3}, d, dev), zeros({3}, other, dev), p); },
         ErrorKind::DTypeMismatch, spec.name + ": operand dtypes differ"},
        {"integer input", [=](Device dev) { call(zeros({3}, DType::I32, dev), zeros({3}, DType::I32, dev), p); },
         ErrorKind::Unsupported, spec.name + ": dtype I32 is not supported"},
    };
  };
  return e;
}

/// F64 only: the backward against central differences of ferrite's CPU forward,
/// g * (f(x + h) - f(x - h)) / 2h, at points at least 0.01 from any kink.
Entry finite_difference_entry(const BackwardSpec& spec) {
  Entry e;
  e.op = spec.name + "_vs_finite_differences";
  e.dtypes = {DType::F64};
  e.cases = [spec](DType, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& p : spec.params)
      for (const Shape& s : {Shape{}, Shape{7}, Shape{33, 17}, Shape{1025}}) {
        std::vector<double> x = random(s, DType::F64, rng, -6, 6).to_vector<double>();
        for (double& v : x)
          for (double k : spec.kinks(p))
            if (std::fabs(v - k) < 0.01) v = k + (v < k ? -0.01 : 0.01) * 2;
        cases.push_back({shape_str(s), {random(s, DType::F64, rng), from_vector(x, s)}, {}, p});
      }
    return cases;
  };
  // The backward sees what it would see in training: the forward input, or for sigmoid
  // and tanh the forward output computed from it.
  e.run_outputs = [spec](const Case& c) {
    const Tensor& x = c.inputs[1];
    return std::vector<Tensor>{spec.backward(c.inputs[0], spec.from_output ? spec.forward(x, c.reals) : x, c.reals)};
  };
  e.reference_outputs = [spec](const Case& c) {
    constexpr double h = 1e-5;
    const Tensor& x = c.inputs[1];
    std::vector<double> xs = x.to_vector<double>(), plus = xs, minus = xs;
    for (double& v : plus) v += h;
    for (double& v : minus) v -= h;
    const auto fp = spec.forward(from_vector(plus, x.shape()), c.reals).to_vector<double>();
    const auto fm = spec.forward(from_vector(minus, x.shape()), c.reals).to_vector<double>();
    const auto g = c.inputs[0].to_vector<double>();
    std::vector<double> out(xs.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = g[i] * (fp[i] - fm[i]) / (2 * h);
    return std::vector<Tensor>{from_vector(out, x.shape())};
  };
  // Truncation error ~h^2 |f'''| and rounding ~eps |f| / h: both far below these.
  e.reference_tolerance = [](DType) { return Tolerance{1e-6, 1e-8}; };
  return e;
}

std::vector<BackwardSpec> backward_specs() {
  auto none = [](const std::vector<double>&) { return std::vector<double>{}; };
  auto at_zero = [](const std::vector<double>&) { return std::vector<double>{0.0}; };
  return {
      {"relu_backward", [](const Tensor& g, const Tensor& x, const auto&) { return relu_backward(g, x); },
       [](LD g, LD x, const auto&) { return x <= 0 ? 0.0L : g; },
       [](const Tensor& x, const auto&) { return relu(x); }, false, {{}}, at_zero},
      {"abs_backward", [](const Tensor& g, const Tensor& x, const auto&) { return abs_backward(g, x); },
       [](LD g, LD x, const auto&) { return g * (std::isnan(x) ? x : LD((x > 0) - (x < 0))); },
       [](const Tensor& x, const auto&) { return abs(x); }, false, {{}}, at_zero},
      {"clamp_backward",
       [](const Tensor& g, const Tensor& x, const std::vector<double>& p) { return clamp_backward(g, x, p[0], p[1]); },
       [](LD g, LD x, const std::vector<double>& p) { return (x >= p[0] && x <= p[1]) ? g : 0.0L; },
       [](const Tensor& x, const std::vector<double>& p) { return clamp(x, p[0], p[1]); }, false,
       {{-1.5, 2.25}, {-3.0, 0.1}}, [](const std::vector<double>& p) { return p; }},
      {"sigmoid_backward", [](const Tensor& g, const Tensor& y, const auto&) { return sigmoid_backward(g, y); },
       [](LD g, LD y, const auto&) { return g * (1 - y) * y; },
       [](const Tensor& x, const auto&) { return sigmoid(x); }, true, {{}}, none},
      {"tanh_backward", [](const Tensor& g, const Tensor& y, const auto&) { return tanh_backward(g, y); },
       [](LD g, LD y, const auto&) { return g * (1 - y * y); },
       [](const Tensor& x, const auto&) { return tanh(x); }, true, {{}}, none},
      {"gelu_backward", [](const Tensor& g, const Tensor& x, const auto&) { return gelu_backward(g, x); },
       [](LD g, LD x, const auto&) { return g * gelu_d(x); }, [](const Tensor& x, const auto&) { return gelu(x); },
       false, {{}}, none},
      {"gelu_backward(tanh)",
       [](const Tensor& g, const Tensor& x, const auto&) { return gelu_backward(g, x, GeluApproximation::Tanh); },
       [](LD g, LD x, const auto&) { return g * gelu_tanh_d(x); },
       [](const Tensor& x, const auto&) { return gelu(x, GeluApproximation::Tanh); }, false, {{}}, none},
      {"silu_backward", [](const Tensor& g, const Tensor& x, const auto&) { return silu_backward(g, x); },
       [](LD g, LD x, const auto&) { return g * silu_d(x); }, [](const Tensor& x, const auto&) { return silu(x); },
       false, {{}}, none},
      {"elu_backward",
       [](const Tensor& g, const Tensor& x, const std::vector<double>& p) { return elu_backward(g, x, p[0]); },
       [](LD g, LD x, const std::vector<double>& p) { return x <= 0 ? g * LD(p[0]) * std::exp(x) : g; },
       [](const Tensor& x, const std::vector<double>& p) { return elu(x, p[0]); }, false, {{1.0}, {0.5}}, at_zero},
      {"mish_backward", [](const Tensor& g, const Tensor& x, const auto&) { return mish_backward(g, x); },
       [](LD g, LD x, const auto&) { return g * mish_d(x); }, [](const Tensor& x, const auto&) { return mish(x); },
       false, {{}}, none},
  };
}

bool register_backward_entries() {
  for (const BackwardSpec& spec : backward_specs()) {
    register_entry(backward_entry(spec));
    register_entry(finite_difference_entry(spec));
  }
  return true;
}
const bool backward_entries_registered = register_backward_entries();

}  // namespace
}  // namespace ferrite::conformance
