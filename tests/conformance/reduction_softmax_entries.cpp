// Conformance entries of softmax and log_softmax, forward and backward (the backward also
// against finite differences of the host softmax, in F64).
#include <functional>

#include "conformance/reduction_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace reduction_support;

/// Host softmax or log-softmax of one column, exactly (long double).
std::vector<long double> ref_softmax_column(bool log_out, const std::vector<long double>& col) {
  long double m = -kInf;
  bool nan = false;
  for (long double v : col) {
    nan = nan || std::isnan(v);
    if (v > m) m = v;
  }
  long double s = 0;
  for (long double v : col) s += std::exp(v - m);
  std::vector<long double> out(col.size());
  for (std::size_t j = 0; j < col.size(); ++j) {
    // A row of -Inf only (m = -Inf) or with a NaN has no distribution: NaN, as PyTorch.
    if (nan || m == -kInf) {
      out[j] = std::numeric_limits<long double>::quiet_NaN();
      continue;
    }
    out[j] = log_out ? col[j] - m - std::log(s) : std::exp(col[j] - m) / s;
  }
  return out;
}

/// Applies a column function along `dim` of the values v of shape `shape`.
template <class F>
std::vector<long double> along_columns(const std::vector<long double>& v, const Shape& shape, std::int64_t dim, F&& f) {
  const Extents ex = extents_of(shape, dim);
  std::vector<long double> out(v.size());
  for (std::int64_t k = 0; k < ex.outer * ex.inner; ++k) {
    std::vector<long double> col(static_cast<std::size_t>(ex.dim));
    for (std::int64_t j = 0; j < ex.dim; ++j) col[j] = v[flat(ex, k, j)];
    const auto r = f(col, k);
    for (std::int64_t j = 0; j < ex.dim; ++j) out[flat(ex, k, j)] = r[j];
  }
  return out;
}

struct ShapeDim {
  Shape shape;
  std::int64_t dim;
};

std::vector<ShapeDim> softmax_shapes() {
  return {
      {{5, 7}, -1},      {{3, 1}, -1},      {{4, 1025}, -1},  {{3, 4096}, -1},  {{2, 262144}, -1},
      {{1, 1048576}, -1}, {{300, 128}, -1}, {{64, 512}, -1},  {{16, 2048}, -1}, {{9, 1000}, -1},
      {{8, 8192}, -1},   {{4, 8193}, -1},   {{7, 5, 3}, 1},   {{7, 5, 3}, 0},   {{2, 3, 64}, -1},
      {{}, 0},           {{0, 5}, -1},      {{33, 3}, -2},
  };
}

std::vector<Case> softmax_cases(DType d, Rng& rng) {
  std::vector<Case> cases;
  for (const auto& [s, dim] : softmax_shapes())
    cases.push_back({shape_str(s) + " dim " + std::to_string(dim), {random(s, d, rng)}, {dim}});
  cases.push_back({"all equal [4, 1025]", {all_equal({4, 1025}, d)}, {-1}});
  cases.push_back({"-Inf in rows [6, 1025]", {with_negative_infinity(random({6, 1025}, d, rng), rng)}, {-1}});
  cases.push_back({"-Inf in rows [64, 7]", {with_negative_infinity(random({64, 7}, d, rng), rng, 3)}, {-1}});
  cases.push_back({"large inputs [5, 300]", {random({5, 300}, d, rng, 200, 1000)}, {-1}});
  for (auto [rows, cols] : special_row_shapes())
    cases.push_back({"special rows " + shape_str({rows, cols}) + " dim -1", {special_rows(rows, cols, d, rng)}, {-1}});
  cases.push_back({"special rows [7, 18] dim 0", {special_rows(18, 7, d, rng, true)}, {0}});
  return cases;
}

std::vector<ErrorCase> softmax_errors(const std::string& name, std::function<void(Device, DType, Shape, std::int64_t)> call,
                                      DType d) {
  return {
      {"dim out of range", [=](Device dev) { call(dev, d, {3, 4}, 2); }, ErrorKind::IndexOutOfRange,
       name + ": dim 2 is out of range for input [3, 4]"},
      {"integer input", [=](Device dev) { call(dev, DType::I32, {3}, -1); }, ErrorKind::Unsupported,
       name + ": dtype I32 is not supported"},
  };
}

Entry softmax_entry(const std::string& name, Tensor (*fn)(const Tensor&, std::int64_t), bool log_out) {
  Entry e;
  e.op = name;
  e.dtypes = kFloatTypes;
  e.cases = softmax_cases;
  e.run_outputs = [fn](const Case& c) { return std::vector<Tensor>{fn(c.inputs[0], c.ints[0])}; };
  e.reference_outputs = [log_out](const Case& c) {
    const Tensor& x = c.inputs[0];
    auto out = along_columns(reference::values(x), x.shape(), c.ints[0],
                             [&](const std::vector<long double>& col, std::int64_t) { return ref_softmax_column(log_out, col); });
    return std::vector<Tensor>{reference::from_values(out, x.shape(), x.dtype())};
  };
  e.reference_tolerance = cpu_rounding;
  // exp and log in float are accurate to about 2 ulp; the row sum is accumulated in float.
  e.backend_tolerance = log_out ? std::function<Tolerance(DType)>([](DType d) {
    return d == DType::F32 ? Tolerance{1e-5, 1e-5} : accumulated(d);
  })
                                : std::function<Tolerance(DType)>(probabilities);
  e.errors = [name, fn](DType d) {
    return softmax_errors(name, [fn](Device dev, DType t, Shape s, std::int64_t dim) { fn(zeros(s, t, dev), dim); }, d);
  };
  return e;
}

Tensor softmax_last(const Tensor& x, std::int64_t dim) { return softmax(x, dim); }
Tensor log_softmax_last(const Tensor& x, std::int64_t dim) { return log_softmax(x, dim); }

FERRITE_CONFORMANCE(softmax_entry("softmax", softmax_last, false));
FERRITE_CONFORMANCE(softmax_entry("log_softmax", log_softmax_last, true));

// F32 results of F16/BF16 inputs (the seed's softmax_bf16_f32): computed in float, rounded once to F32.
Entry softmax_f32_result_entry(const std::string& name, Tensor (*fn)(const Tensor&, std::int64_t, DType), bool log_out) {
  Entry e = softmax_entry(name, log_out ? log_softmax_last : softmax_last, log_out);
  e.op = name + " (F32 result)";
  e.dtypes = {DType::F16, DType::BF16};
  e.run_outputs = [fn](const Case& c) { return std::vector<Tensor>{fn(c.inputs[0], c.ints[0], DType::F32)}; };
  e.reference_outputs = [log_out](const Case& c) {
    const Tensor& x = c.inputs[0];
    auto out = along_columns(reference::values(x), x.shape(), c.ints[0],
                             [&](const std::vector<long double>& col, std::int64_t) { return ref_softmax_column(log_out, col); });
    return std::vector<Tensor>{reference::from_values(out, x.shape(), DType::F32)};
  };
  e.reference_tolerance = [](DType) { return cpu_rounding(DType::F32); };
  e.backend_tolerance = [log_out](DType) { return log_out ? Tolerance{1e-5, 1e-5} : probabilities(DType::F32); };
  e.errors = [name, fn](DType d) {
    return std::vector<ErrorCase>{
        {"F64 result", [fn, d](Device dev) { fn(zeros({2, 3}, d, dev), -1, DType::F64); }, ErrorKind::Unsupported,
         name + ": dtype F64 requested for input [2, 3] " + std::string(dtype_name(d))},
        {"F32 result of an F64 input", [fn](Device dev) { fn(zeros({2, 3}, DType::F64, dev), -1, DType::F32); },
         ErrorKind::Unsupported, name + ": dtype F32 requested for input [2, 3] F64"}};
  };
  return e;
}

FERRITE_CONFORMANCE(softmax_f32_result_entry("softmax", softmax, false));
FERRITE_CONFORMANCE(softmax_f32_result_entry("log_softmax", log_softmax, true));

// ---- backward: inputs are grad and the forward output y (made on the host, rounded to the dtype) ----

std::vector<long double> ref_softmax_backward_column(bool log_out, const std::vector<long double>& g,
                                                     const std::vector<long double>& y) {
  long double s = 0;
  for (std::size_t j = 0; j < g.size(); ++j) s += log_out ? g[j] : g[j] * y[j];
  std::vector<long double> dx(g.size());
  for (std::size_t j = 0; j < g.size(); ++j) dx[j] = log_out ? g[j] - std::exp(y[j]) * s : y[j] * (g[j] - s);
  return dx;
}

// `special`: only the cases of special rows (non-finite or constant values in grad or y), as
// an entry of their own: a constant grad row cancels (log_softmax: dx = c·(1 - n·p)), so the
// GPU's result is off by the rounding of sum(grad) and exp(y), a few ulps of |grad| (up to 4
// here) rather than of dx: absolute tolerances of 4e-6 (F32) and 1e-11 (F64; 2.2e-13 seen on
// an H200 at 9000 columns) instead of 1e-6 and 1e-13.
Entry softmax_backward_entry(const std::string& name, Tensor (*fn)(const Tensor&, const Tensor&, std::int64_t),
                             bool log_out, bool special = false) {
  Entry e;
  e.op = special ? name + " (special rows)" : name;
  e.dtypes = kFloatTypes;
  e.cases = [log_out, special](DType d, Rng& rng) {
    std::vector<Case> cases;
    auto y_of = [&](const Tensor& x, std::int64_t dim) {
      auto y = along_columns(reference::values(x), x.shape(), dim,
                             [&](const std::vector<long double>& col, std::int64_t) { return ref_softmax_column(log_out, col); });
      return reference::from_values(y, x.shape(), d);
    };
    for (Case c : softmax_cases(d, rng)) {
      if (c.label.rfind("-Inf", 0) == 0 || c.label.rfind("large", 0) == 0) continue;  // the forward's edge cases
      if ((c.label.rfind("special", 0) == 0) != special) continue;
      const Tensor x = c.inputs[0];
      if (special) {
        // Non-finite values in grad (y finite), then in y (the forward of rows with +-Inf or NaN).
        const bool along_dim0 = c.ints[0] == 0;
        const std::int64_t rows = x.shape()[along_dim0 ? 1 : 0], cols = x.shape()[along_dim0 ? 0 : 1];
        Case in_grad = c, in_y = c;
        in_grad.label += ", in grad";
        in_grad.inputs = {special_rows(rows, cols, d, rng, along_dim0), y_of(random(x.shape(), d, rng), c.ints[0])};
        in_y.label += ", in y";
        in_y.inputs = {random(x.shape(), d, rng), y_of(x, c.ints[0])};
        cases.push_back(in_grad);
        cases.push_back(in_y);
        continue;
      }
      c.inputs = {random(x.shape(), d, rng), y_of(x, c.ints[0])};
      cases.push_back(c);
    }
    return cases;
  };
  e.run_outputs = [fn](const Case& c) { return std::vector<Tensor>{fn(c.inputs[0], c.inputs[1], c.ints[0])}; };
  e.reference_outputs = [log_out](const Case& c) {
    const Tensor& y = c.inputs[1];
    const auto g = reference::values(c.inputs[0]), yv = reference::values(y);
    const Extents ex = extents_of(y.shape(), c.ints[0]);
    auto out = along_columns(g, y.shape(), c.ints[0], [&](const std::vector<long double>& gcol, std::int64_t k) {
      std::vector<long double> ycol(gcol.size());
      for (std::int64_t j = 0; j < ex.dim; ++j) ycol[j] = yv[flat(ex, k, j)];
      return ref_softmax_backward_column(log_out, gcol, ycol);
    });
    return std::vector<Tensor>{reference::from_values(out, y.shape(), y.dtype())};
  };
  e.reference_tolerance = [](DType d) { return d == DType::F32 ? Tolerance{1.3e-6, 1e-8} : cpu_rounding(d); };
  e.backend_tolerance = [special](DType d) {
    switch (d) {
      case DType::F32: return Tolerance{1e-5, special ? 4e-6 : 1e-6};
      case DType::F64: return Tolerance{1e-12, special ? 1e-11 : 1e-13};
      case DType::F16: return Tolerance{2e-3, 1e-5};
      default: return Tolerance{1.6e-2, 1e-4};
    }
  };
  e.errors = [name, fn](DType d) {
    auto errors = softmax_errors(
        name, [fn](Device dev, DType t, Shape s, std::int64_t dim) { fn(zeros(s, t, dev), zeros(s, t, dev), dim); }, d);
    errors.push_back({"shapes differ", [fn, d](Device dev) { fn(zeros({3, 4}, d, dev), zeros({3, 5}, d, dev), -1); },
                      ErrorKind::ShapeMismatch, name + ": grad is [3, 4]"});
    errors.push_back({"dtypes differ",
                      [fn, d](Device dev) {
                        fn(zeros({3}, d, dev), zeros({3}, d == DType::F64 ? DType::F32 : DType::F64, dev), -1);
                      },
                      ErrorKind::DTypeMismatch, name + ": operand dtypes differ"});
    return errors;
  };
  return e;
}

FERRITE_CONFORMANCE(softmax_backward_entry("softmax_backward", softmax_backward, false));
FERRITE_CONFORMANCE(softmax_backward_entry("log_softmax_backward", log_softmax_backward, true));
FERRITE_CONFORMANCE(softmax_backward_entry("softmax_backward", softmax_backward, false, true));
FERRITE_CONFORMANCE(softmax_backward_entry("log_softmax_backward", log_softmax_backward, true, true));

// Forward on the backend, backward on the backend, against central differences of the host
// forward: checks that the backward really is the forward's gradient.
Entry softmax_fd_entry(const std::string& name, Tensor (*forward)(const Tensor&, std::int64_t),
                       Tensor (*backward)(const Tensor&, const Tensor&, std::int64_t), bool log_out) {
  Entry e;
  e.op = name + " (finite differences)";
  e.dtypes = {DType::F64};
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    for (auto [s, dim] : std::vector<ShapeDim>{{{3, 7}, -1}, {{4, 3, 2}, 1}, {{2, 33}, -1}, {{1, 1}, 0}})
      cases.push_back({shape_str(s), {random(s, d, rng), random(s, d, rng)}, {dim}});
    return cases;
  };
  e.run_outputs = [forward, backward](const Case& c) {
    return std::vector<Tensor>{backward(c.inputs[1], forward(c.inputs[0], c.ints[0]), c.ints[0])};
  };
  e.reference_outputs = [log_out](const Case& c) {
    const Tensor& x = c.inputs[0];
    auto f = [&](const std::vector<long double>& v) {
      return along_columns(v, x.shape(), c.ints[0],
                           [&](const std::vector<long double>& col, std::int64_t) { return ref_softmax_column(log_out, col); });
    };
    const auto dx = finite_difference_vjp(f, reference::values(x), reference::values(c.inputs[1]));
    return std::vector<Tensor>{reference::from_values(dx, x.shape(), x.dtype())};
  };
  e.reference_tolerance = [](DType) { return Tolerance{1e-7, 1e-8}; };
  e.backend_tolerance = [](DType) { return Tolerance{1e-12, 1e-13}; };
  return e;
}

FERRITE_CONFORMANCE(softmax_fd_entry("softmax_backward", softmax_last, softmax_backward, false));
FERRITE_CONFORMANCE(softmax_fd_entry("log_softmax_backward", log_softmax_last, log_softmax_backward, true));

}  // namespace
}  // namespace ferrite::conformance
