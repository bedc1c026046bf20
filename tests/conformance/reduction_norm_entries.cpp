// Conformance entries of layer_norm and rms_norm, forward and backward (the backward also
// against finite differences of the host norm, in F64).
#include <functional>

#include "conformance/reduction_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace reduction_support;

DType stat_dtype(DType d) { return d == DType::F64 ? DType::F64 : DType::F32; }

// Case layout: inputs {x, weight, bias, grad} (all defined: the harness moves every input to
// the device); ints {weight used, bias used}; reals {eps}.
struct NormCase {
  Shape shape;
  bool weight, bias;
  double eps;
};

std::vector<Case> norm_cases(DType d, Rng& rng, bool centred) {
  const std::vector<NormCase> shapes = {
      {{5, 7}, true, true, 1e-5},      {{3, 1}, true, true, 1e-5},       {{4, 1025}, true, false, 1e-5},
      {{3, 4096}, true, true, 1e-5},   {{2, 262144}, true, true, 1e-5},  {{300, 128}, true, true, 1e-5},
      {{64, 512}, false, false, 1e-3}, {{9, 1000}, true, true, 1e-5},   {{16, 2048}, false, true, 1e-5},
      {{8, 8192}, true, true, 1e-5},   {{4, 8193}, true, false, 1e-5},  {{2, 3, 64}, true, true, 0.1},
      {{0, 16}, true, true, 1e-5},     {{7}, true, true, 1e-5},          {{1, 1048576}, false, false, 1e-5},
      // Around the CUDA kernels' shape thresholds: the first shape past 256 and 512 columns
      // with 16-byte rows of every dtype (264, 520), a row too odd for vectors (257), the
      // first vector row past the backward's register limit (4104), one element.
      {{5, 264}, true, true, 1e-5},    {{5, 257}, true, true, 1e-5},    {{6, 520}, true, true, 1e-5},
      {{3, 4104}, true, true, 1e-5},   {{1, 1}, true, true, 1e-5},
      // Enough rows that the CUDA staged pipeline (F16/BF16 backward) goes round its ring of
      // stages several times: 256 blocks of 8 (136 columns) or 1 (2048) rows, 5 stages (15 and
      // 7 iterations). The forward's register kernel for two-byte rows takes both shapes too.
      {{30000, 136}, true, true, 1e-5}, {{1600, 2048}, true, false, 1e-5},
  };
  std::vector<Case> cases;
  auto add = [&](const std::string& label, const Tensor& x, const NormCase& n, Tensor grad = Tensor()) {
    const std::int64_t cols = x.shape().back();
    if (!grad.defined()) grad = random(x.shape(), d, rng);
    cases.push_back({label,
                     {x, random({cols}, d, rng, 0.5, 2), random({cols}, d, rng), grad},
                     {n.weight ? 1 : 0, n.bias && centred ? 1 : 0},
                     {n.eps}});
  };
  for (const NormCase& n : shapes)
    add(shape_str(n.shape) + (n.weight ? " weight" : "") + (n.bias && centred ? " bias" : ""), random(n.shape, d, rng), n);
  add("all equal [4, 1025]", all_equal({4, 1025}, d), {{4, 1025}, true, true, 1e-5});
  add("offset rows [6, 4096] (mean 100)", random({6, 4096}, d, rng, 96, 104), {{6, 4096}, true, true, 1e-5});
  // Rows with +-Inf, NaN or all-equal values, in x (the forward) and in grad (the backward).
  for (auto [rows, cols] : special_row_shapes()) {
    const NormCase n{{rows, cols}, true, true, 1e-5};
    add("special rows in x " + shape_str(n.shape), special_rows(rows, cols, d, rng), n);
    add("special rows in grad " + shape_str(n.shape), random(n.shape, d, rng), n, special_rows(rows, cols, d, rng));
  }
  return cases;
}

struct RefStats {
  std::vector<long double> mean, rstd;  // rounded to the statistics dtype, as stored
};

// Statistics of each row, exactly, then rounded to the dtype the backend stores them in.
RefStats ref_stats(const std::vector<long double>& x, std::int64_t rows, std::int64_t cols, bool centred, double eps, DType d) {
  RefStats s{std::vector<long double>(rows), std::vector<long double>(rows)};
  for (std::int64_t r = 0; r < rows; ++r) {
    long double mu = 0;
    if (centred) {
      for (std::int64_t c = 0; c < cols; ++c) mu += x[r * cols + c];
      mu /= cols;
    }
    long double var = 0;
    for (std::int64_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mu) * (x[r * cols + c] - mu);
    s.mean[r] = reference::round_to(stat_dtype(d), mu);
    s.rstd[r] = reference::round_to(stat_dtype(d), 1 / std::sqrt(var / cols + static_cast<long double>(eps)));
  }
  return s;
}

// The optional operands of a case: weight and bias when its flags say they are used.
Tensor weight_of(const Case& c) { return c.ints[0] ? c.inputs[1] : Tensor(); }
Tensor bias_of(const Case& c) { return c.ints[1] ? c.inputs[2] : Tensor(); }

std::vector<long double> values_or(const Tensor& t, std::int64_t n, long double fill) {
  return t.defined() ? reference::values(t) : std::vector<long double>(static_cast<std::size_t>(n), fill);
}

// y from the given statistics (the documented behaviour: y uses the stored mean and rstd).
std::vector<long double> ref_norm_output(const std::vector<long double>& x, const RefStats& s, const std::vector<long double>& w,
                                         const std::vector<long double>& b, std::int64_t rows, std::int64_t cols) {
  std::vector<long double> y(x.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) y[r * cols + c] = (x[r * cols + c] - s.mean[r]) * s.rstd[r] * w[c] + b[c];
  return y;
}

Shape stat_shape(const Shape& s) { return Shape(s.begin(), s.end() - 1); }

std::vector<ErrorCase> norm_errors(const std::string& name, bool centred, DType d) {
  auto forward = [centred](const Tensor& x, const Tensor& w, const Tensor& b) {
    if (centred) layer_norm(x, w, b);
    else rms_norm(x, w);
  };
  const DType other = d == DType::F64 ? DType::F32 : DType::F64;
  std::vector<ErrorCase> errors = {
      {"weight of the wrong length", [=](Device dev) { forward(zeros({8, 512}, d, dev), zeros({511}, d, dev), Tensor()); },
       ErrorKind::ShapeMismatch, name + ": weight is [511] " + std::string(dtype_name(d))},
      {"weight of another dtype", [=](Device dev) { forward(zeros({8, 4}, d, dev), zeros({4}, other, dev), Tensor()); },
       ErrorKind::DTypeMismatch, name + ": weight is [4] " + std::string(dtype_name(other))},
      {"rank 0 input", [=](Device dev) { forward(zeros({}, d, dev), Tensor(), Tensor()); }, ErrorKind::InvalidArgument,
       name + ": input [] "},
      {"integer input", [=](Device dev) { forward(zeros({2, 3}, DType::I32, dev), Tensor(), Tensor()); },
       ErrorKind::Unsupported, name + ": dtype I32 is not supported"},
  };
  if (centred)
    errors.push_back({"bias of the wrong length", [=](Device dev) { layer_norm(zeros({8, 4}, d, dev), Tensor(), zeros({5}, d, dev)); },
                      ErrorKind::ShapeMismatch, "layer_norm: bias is [5]"});
  return errors;
}

Entry norm_forward_entry(bool centred) {
  const std::string name = centred ? "layer_norm" : "rms_norm";
  Entry e;
  e.op = name;
  e.dtypes = kFloatTypes;
  e.cases = [centred](DType d, Rng& rng) { return norm_cases(d, rng, centred); };
  e.run_outputs = [centred](const Case& c) {
    if (centred) {
      auto r = layer_norm(c.inputs[0], weight_of(c), bias_of(c), c.reals[0]);
      return std::vector<Tensor>{r.y, r.mean, r.rstd};
    }
    auto r = rms_norm(c.inputs[0], weight_of(c), c.reals[0]);
    return std::vector<Tensor>{r.y, r.rstd};
  };
  e.reference_outputs = [centred](const Case& c) {
    const Tensor& x = c.inputs[0];
    const std::int64_t cols = x.shape().back(), rows = x.numel() / cols;
    const auto xv = reference::values(x);
    const RefStats s = ref_stats(xv, rows, cols, centred, c.reals[0], x.dtype());
    const auto y = ref_norm_output(xv, s, values_or(weight_of(c), cols, 1), values_or(bias_of(c), cols, 0), rows, cols);
    std::vector<Tensor> out = {reference::from_values(y, x.shape(), x.dtype())};
    if (centred) out.push_back(reference::from_values(s.mean, stat_shape(x.shape()), stat_dtype(x.dtype())));
    out.push_back(reference::from_values(s.rstd, stat_shape(x.shape()), stat_dtype(x.dtype())));
    return out;
  };
  e.reference_tolerance = cpu_rounding;
  // y: float arithmetic on each element; the statistics: float sums over the row.
  e.output_backend_tolerance = [](DType d, std::size_t output) {
    if (output > 0) return accumulated(stat_dtype(d));
    return d == DType::F32 ? Tolerance{1e-5, 1e-5} : accumulated(d);
  };
  e.errors = [name, centred](DType d) { return norm_errors(name, centred, d); };
  return e;
}

FERRITE_CONFORMANCE(norm_forward_entry(true));
FERRITE_CONFORMANCE(norm_forward_entry(false));

// ---- backward: forward on the backend (its mean and rstd are reused), then backward ----

std::vector<Tensor> run_backward(const Case& c, bool centred) {
  const Tensor x = c.inputs[0], w = weight_of(c), b = bias_of(c), g = c.inputs[3];
  if (centred) {
    auto f = layer_norm(x, w, b, c.reals[0]);
    auto r = layer_norm_backward(g, x, f.mean, f.rstd, w);
    std::vector<Tensor> out = {r.dx, r.dbias};
    if (w.defined()) out.push_back(r.dweight);
    return out;
  }
  auto f = rms_norm(x, w, c.reals[0]);
  auto r = rms_norm_backward(g, x, f.rstd, w);
  std::vector<Tensor> out = {r.dx};
  if (w.defined()) out.push_back(r.dweight);
  return out;
}

Entry norm_backward_entry(bool centred) {
  const std::string name = centred ? "layer_norm_backward" : "rms_norm_backward";
  Entry e;
  e.op = name;
  e.dtypes = kFloatTypes;
  e.cases = [centred](DType d, Rng& rng) { return norm_cases(d, rng, centred); };
  e.run_outputs = [centred](const Case& c) { return run_backward(c, centred); };
  e.reference_outputs = [centred](const Case& c) {
    const Tensor& x = c.inputs[0];
    const std::int64_t cols = x.shape().back(), rows = x.numel() / cols;
    const auto xv = reference::values(x), g = reference::values(c.inputs[3]);
    const auto w = values_or(weight_of(c), cols, 1);
    const RefStats s = ref_stats(xv, rows, cols, centred, c.reals[0], x.dtype());
    std::vector<long double> dx(xv.size()), dw(cols, 0), db(cols, 0);
    for (std::int64_t r = 0; r < rows; ++r) {
      long double sum_gw = 0, sum_gw_xhat = 0;
      for (std::int64_t k = 0; k < cols; ++k) {
        const long double xhat = (xv[r * cols + k] - s.mean[r]) * s.rstd[r];
        sum_gw += g[r * cols + k] * w[k];
        sum_gw_xhat += g[r * cols + k] * w[k] * xhat;
        dw[k] += g[r * cols + k] * xhat;
        db[k] += g[r * cols + k];
      }
      for (std::int64_t k = 0; k < cols; ++k) {
        const long double xhat = (xv[r * cols + k] - s.mean[r]) * s.rstd[r];
        dx[r * cols + k] = s.rstd[r] * (g[r * cols + k] * w[k] - (centred ? sum_gw / cols : 0) - xhat * sum_gw_xhat / cols);
      }
    }
    std::vector<Tensor> out = {reference::from_values(dx, x.shape(), x.dtype())};
    if (centred) out.push_back(reference::from_values(db, {cols}, x.dtype()));
    if (c.ints[0]) out.push_back(reference::from_values(dw, {cols}, x.dtype()));
    return out;
  };
  e.reference_tolerance = [](DType d) { return d == DType::F64 ? Tolerance{1e-10, 1e-10} : cpu_rounding(d); };
  e.backend_tolerance = [](DType d) { return d == DType::F32 ? Tolerance{1e-4, 1e-4} : accumulated(d); };
  e.errors = [name, centred](DType d) {
    std::vector<ErrorCase> errors = {
        {"rstd of the wrong length",
         [d, centred](Device dev) {
           Tensor x = zeros({4, 8}, d, dev), s = zeros({3}, stat_dtype(d), dev);
           if (centred) layer_norm_backward(x, x, s, s);
           else rms_norm_backward(x, x, s);
         },
         ErrorKind::ShapeMismatch, "expected 4 elements, one per row"},
        {"rstd of the wrong dtype",
         [d, centred](Device dev) {
           Tensor x = zeros({4, 8}, d, dev), s = zeros({4}, DType::I64, dev);
           if (centred) layer_norm_backward(x, x, s, s);
           else rms_norm_backward(x, x, s);
         },
         ErrorKind::DTypeMismatch, "expected dtype " + std::string(dtype_name(stat_dtype(d)))},
        {"grad of another shape",
         [d, centred](Device dev) {
           Tensor x = zeros({4, 8}, d, dev), g = zeros({4, 9}, d, dev), s = zeros({4}, stat_dtype(d), dev);
           if (centred) layer_norm_backward(g, x, s, s);
           else rms_norm_backward(g, x, s);
         },
         ErrorKind::ShapeMismatch, name + ": grad is [4, 9]"},
        {"weight of the wrong length",
         [d, centred](Device dev) {
           Tensor x = zeros({4, 8}, d, dev), s = zeros({4}, stat_dtype(d), dev), w = zeros({7}, d, dev);
           if (centred) layer_norm_backward(x, x, s, s, w);
           else rms_norm_backward(x, x, s, w);
         },
         ErrorKind::ShapeMismatch, name + ": weight is [7]"},
    };
    return errors;
  };
  return e;
}

FERRITE_CONFORMANCE(norm_backward_entry(true));
FERRITE_CONFORMANCE(norm_backward_entry(false));

// ---- mixed precision (LayerNormOptions / LayerNormBackwardOptions, the RMS norm's alike) ----
// Checked against the composed ops they replace: on the CPU bit for bit, on CUDA against the
// CPU within the tolerances of the dtypes involved.

// out_dtype: the entry's dtype is the output's (F16, BF16); x, weight and bias are F32 (the
// norm cases of F32, special rows included). ints[2] carries the output dtype to run_outputs.
Entry norm_out_dtype_entry(bool centred) {
  const std::string name = centred ? "layer_norm" : "rms_norm";
  Entry e;
  e.op = name + " (out_dtype)";
  e.dtypes = {DType::F16, DType::BF16};
  e.cases = [centred](DType d, Rng& rng) {
    std::vector<Case> cases = norm_cases(DType::F32, rng, centred);
    for (Case& c : cases) c.ints.push_back(static_cast<std::int64_t>(d));
    return cases;
  };
  e.run_outputs = [centred](const Case& c) {
    const DType out = static_cast<DType>(c.ints[2]);
    if (centred) {
      auto r = layer_norm(c.inputs[0], weight_of(c), bias_of(c), c.reals[0], LayerNormOptions{.out_dtype = out});
      return std::vector<Tensor>{r.y, r.mean, r.rstd};
    }
    auto r = rms_norm(c.inputs[0], weight_of(c), c.reals[0], RmsNormOptions{.out_dtype = out});
    return std::vector<Tensor>{r.y, r.rstd};
  };
  // The F32 norm, then its y cast: what the option saves a pass over memory for.
  e.reference_outputs = [centred](const Case& c) {
    const DType out = static_cast<DType>(c.ints[2]);
    if (centred) {
      auto r = layer_norm(c.inputs[0], weight_of(c), bias_of(c), c.reals[0]);
      return std::vector<Tensor>{r.y.to(out), r.mean, r.rstd};
    }
    auto r = rms_norm(c.inputs[0], weight_of(c), c.reals[0]);
    return std::vector<Tensor>{r.y.to(out), r.rstd};
  };
  e.reference_tolerance = exact;
  // y: the F32 y's tolerance, then one rounding to the output dtype; the statistics as F32's.
  e.output_backend_tolerance = [](DType d, std::size_t output) {
    return output > 0 ? accumulated(DType::F32) : accumulated(d);
  };
  e.errors = [name, centred](DType d) {
    auto forward = [centred](const Tensor& x, DType out) {
      if (centred) layer_norm(x, Tensor(), Tensor(), 1e-5, LayerNormOptions{.out_dtype = out});
      else rms_norm(x, Tensor(), 1e-6, RmsNormOptions{.out_dtype = out});
    };
    const std::string allowed = "allowed: the input's dtype, or F16/BF16 from an F32 input";
    return std::vector<ErrorCase>{
        {"half output of an F64 input", [=](Device dev) { forward(zeros({4, 8}, DType::F64, dev), d); },
         ErrorKind::Unsupported, name + ": out_dtype " + std::string(dtype_name(d)) + " requested for input [4, 8] F64"},
        {"F64 output of an F32 input", [=](Device dev) { forward(zeros({4, 8}, DType::F32, dev), DType::F64); },
         ErrorKind::Unsupported, allowed},
        {"F32 output of a half input", [=](Device dev) { forward(zeros({4, 8}, d, dev), DType::F32); },
         ErrorKind::Unsupported, name + ": out_dtype F32 requested for input [4, 8] " + std::string(dtype_name(d))},
        {"integer output", [=](Device dev) { forward(zeros({4, 8}, DType::F32, dev), DType::I32); },
         ErrorKind::Unsupported, allowed},
    };
  };
  return e;
}

FERRITE_CONFORMANCE(norm_out_dtype_entry(true));
FERRITE_CONFORMANCE(norm_out_dtype_entry(false));

// grad of another dtype and the residual. The entry's dtype is grad's: F16/BF16 (x F32;
// every other case also with a residual, the two fused as a BF16 training step uses them),
// or F32/F64 (x of that dtype, every case with a residual: the same-dtype calls without one
// are norm_backward_entry's). Inputs {x, weight, bias, grad, residual}; ints[2]: residual used.
Entry norm_mixed_backward_entry(bool centred) {
  const std::string name = centred ? "layer_norm_backward" : "rms_norm_backward";
  Entry e;
  e.op = name + " (half grad, residual)";
  e.dtypes = {DType::F32, DType::F64, DType::F16, DType::BF16};
  e.cases = [centred](DType d, Rng& rng) {
    const DType xd = is_half_precision(d) ? DType::F32 : d;
    std::vector<Case> cases = norm_cases(xd, rng, centred);
    std::vector<Case> out;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      Case c = cases[i];
      c.inputs[3] = c.inputs[3].to(d);
      const bool residual = !is_half_precision(d) || i % 2 == 1;
      c.inputs.push_back(random(c.inputs[0].shape(), xd, rng));
      c.ints.push_back(residual ? 1 : 0);
      if (residual) c.label += " residual";
      out.push_back(std::move(c));
    }
    // Non-finite and signed-zero values in the residual itself.
    for (auto [rows, cols] : special_row_shapes()) {
      const Shape s{rows, cols};
      out.push_back({"special rows in residual " + shape_str(s),
                     {random(s, xd, rng), random({cols}, xd, rng, 0.5, 2), random({cols}, xd, rng), random(s, d, rng),
                      special_rows(rows, cols, xd, rng)},
                     {1, centred ? 1 : 0, 1},
                     {1e-5}});
    }
    return out;
  };
  auto outputs = [centred](const Case& c, const Tensor& grad, const Tensor& residual) {
    const Tensor x = c.inputs[0], w = weight_of(c), b = bias_of(c);
    std::vector<Tensor> out;
    if (centred) {
      auto f = layer_norm(x, w, b, c.reals[0]);
      auto r = layer_norm_backward(grad, x, f.mean, f.rstd, w, LayerNormBackwardOptions{.residual = residual});
      out = {r.dx, r.dbias};
      if (w.defined()) out.push_back(r.dweight);
    } else {
      auto f = rms_norm(x, w, c.reals[0]);
      auto r = rms_norm_backward(grad, x, f.rstd, w, RmsNormBackwardOptions{.residual = residual});
      out = {r.dx};
      if (w.defined()) out.push_back(r.dweight);
    }
    return out;
  };
  e.run_outputs = [outputs](const Case& c) { return outputs(c, c.inputs[3], c.ints[2] ? c.inputs[4] : Tensor()); };
  // The composed ops: grad widened first, the residual added by a separate add.
  e.reference_outputs = [outputs](const Case& c) {
    std::vector<Tensor> out = outputs(c, c.inputs[3].to(c.inputs[0].dtype()), Tensor());
    if (c.ints[2]) out[0] = c.inputs[4] + out[0];
    return out;
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = [](DType d) {
    return d == DType::F64 ? accumulated(DType::F64) : Tolerance{1e-4, 1e-4};  // x is F32 or F64
  };
  e.errors = [name, centred](DType d) {
    const DType xd = is_half_precision(d) ? DType::F32 : d;
    auto backward = [centred](const Tensor& g, const Tensor& x, const Tensor& residual) {
      const Tensor s = zeros({x.shape()[0]}, x.dtype() == DType::F64 ? DType::F64 : DType::F32, x.device());
      if (centred) layer_norm_backward(g, x, s, s, Tensor(), LayerNormBackwardOptions{.residual = residual});
      else rms_norm_backward(g, x, s, Tensor(), RmsNormBackwardOptions{.residual = residual});
    };
    return std::vector<ErrorCase>{
        {"residual of the wrong shape",
         [=](Device dev) { backward(zeros({4, 8}, xd, dev), zeros({4, 8}, xd, dev), zeros({4, 9}, xd, dev)); },
         ErrorKind::ShapeMismatch, name + ": residual is [4, 9]"},
        // Broadcastable to the input but not its shape: the residual is added element for
        // element, never broadcast (PyTorch's residual + dx would broadcast; here it is refused).
        {"residual broadcastable, not equal",
         [=](Device dev) { backward(zeros({4, 8}, xd, dev), zeros({4, 8}, xd, dev), zeros({8}, xd, dev)); },
         ErrorKind::ShapeMismatch, name + ": residual is [8] " + std::string(dtype_name(xd))},
        {"residual rank 0",
         [=](Device dev) { backward(zeros({4, 8}, xd, dev), zeros({4, 8}, xd, dev), zeros({}, xd, dev)); },
         ErrorKind::ShapeMismatch, name + ": residual is [] "},
        {"residual of another dtype",
         [=](Device dev) {
           const DType other = xd == DType::F64 ? DType::F32 : DType::F64;
           backward(zeros({4, 8}, xd, dev), zeros({4, 8}, xd, dev), zeros({4, 8}, other, dev));
         },
         ErrorKind::DTypeMismatch, name + ": residual is [4, 8] "},
        {"half grad of an F64 input",
         [=](Device dev) { backward(zeros({4, 8}, DType::BF16, dev), zeros({4, 8}, DType::F64, dev), Tensor()); },
         ErrorKind::DTypeMismatch, name + ": grad is [4, 8] BF16"},
        {"F32 grad of a half input",
         [=](Device dev) { backward(zeros({4, 8}, DType::F32, dev), zeros({4, 8}, DType::F16, dev), Tensor()); },
         ErrorKind::DTypeMismatch, "allowed: the input's dtype, or F16/BF16 for an F32 input"},
        {"residual of a half input",
         [=](Device dev) {
           backward(zeros({4, 8}, DType::BF16, dev), zeros({4, 8}, DType::BF16, dev), zeros({4, 8}, DType::BF16, dev));
         },
         ErrorKind::Unsupported, "residual is added in the kernel for F32 and F64 inputs only"},
    };
  };
  return e;
}

FERRITE_CONFORMANCE(norm_mixed_backward_entry(true));
FERRITE_CONFORMANCE(norm_mixed_backward_entry(false));

// dx_cast (LayerNormBackwardOptions / RmsNormBackwardOptions): the entry's dtype is dx_cast's
// (F16, BF16); x is F32. Cases cycle over grad F32 or of the entry's dtype, with and without
// a residual (case i: half grad when i % 2 == 1, residual when i % 4 >= 2: the GPT step's half
// grad + residual + BF16 dx_cast is every fourth case), plus special rows in the residual,
// residuals past F16's range (dx_cast overflows to Inf where dx does not) and signed zeros.
// Inputs {x, weight, bias, grad, residual}; ints[2]: residual used; ints[3]: dx_cast dtype.
// Outputs {dx_cast, 1 if dx_cast's bytes are dx.to(dtype)'s of the same call, dx, dbias (layer
// norm), dweight}: the flag checks the bit-for-bit rule on every backend (CUDA's dx_cast
// against CUDA's own dx), the other outputs against the call without dx_cast on the CPU and
// against the CPU on CUDA.
Entry norm_dx_cast_entry(bool centred) {
  const std::string name = centred ? "layer_norm_backward" : "rms_norm_backward";
  Entry e;
  e.op = name + " (dx_cast)";
  e.dtypes = {DType::F16, DType::BF16};
  e.cases = [centred](DType d, Rng& rng) {
    std::vector<Case> cases = norm_cases(DType::F32, rng, centred);
    std::vector<Case> out;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      Case c = cases[i];
      const bool half_grad = i % 2 == 1, residual = i % 4 >= 2;
      if (half_grad) c.inputs[3] = c.inputs[3].to(d);
      c.inputs.push_back(random(c.inputs[0].shape(), DType::F32, rng));
      c.ints.push_back(residual ? 1 : 0);
      c.ints.push_back(static_cast<std::int64_t>(d));
      c.label += half_grad ? " half grad" : " F32 grad";
      if (residual) c.label += " residual";
      out.push_back(std::move(c));
    }
    auto add = [&](const std::string& label, const Shape& s, const Tensor& grad, const Tensor& residual) {
      const std::int64_t cols = s.back();
      out.push_back({label + " " + shape_str(s),
                     {random(s, DType::F32, rng), random({cols}, DType::F32, rng, 0.5, 2),
                      random({cols}, DType::F32, rng), grad, residual},
                     {1, centred ? 1 : 0, 1, static_cast<std::int64_t>(d)},
                     {1e-5}});
    };
    for (auto [rows, cols] : special_row_shapes()) {
      const Shape s{rows, cols};
      add("special rows in residual, half grad", s, random(s, d, rng), special_rows(rows, cols, DType::F32, rng));
      // |residual| in [6e4, 7e4]: past F16's largest finite value (65504) in part, so F16
      // dx_cast rounds some elements to Inf (the rounding of .to(F16) at overflow).
      add("residual beyond F16's range", s, random(s, d, rng), random(s, DType::F32, rng, 6e4, 7e4));
      // A zero gradient with a residual of -0: dx = 0 + -0; and no residual: dx of a -0 grad.
      add("zero grad, residual -0", s, full(s, -0.0, d), full(s, -0.0, DType::F32));
      out.push_back({"grad -0, no residual " + shape_str(s),
                     {random(s, DType::F32, rng), random({cols}, DType::F32, rng, 0.5, 2),
                      random({cols}, DType::F32, rng), full(s, -0.0, DType::F32), random(s, DType::F32, rng)},
                     {1, centred ? 1 : 0, 0, static_cast<std::int64_t>(d)},
                     {1e-5}});
    }
    return out;
  };
  // dx_cast given or not, the outputs of one call; dx_cast's place holds dx.to(dtype) when not.
  auto outputs = [centred](const Case& c, bool cast) {
    const Tensor x = c.inputs[0], w = weight_of(c), grad = c.inputs[3];
    const Tensor residual = c.ints[2] ? c.inputs[4] : Tensor();
    const DType d = static_cast<DType>(c.ints[3]);
    const std::optional<DType> dx_cast = cast ? std::optional<DType>(d) : std::nullopt;
    std::vector<Tensor> rest;
    Tensor dx, dx_cast_out;
    if (centred) {
      auto f = layer_norm(x, w, bias_of(c), c.reals[0]);
      auto r = layer_norm_backward(grad, x, f.mean, f.rstd, w,
                                   LayerNormBackwardOptions{.residual = residual, .dx_cast = dx_cast});
      dx = r.dx, dx_cast_out = r.dx_cast;
      rest = {r.dbias};
      if (w.defined()) rest.push_back(r.dweight);
    } else {
      auto f = rms_norm(x, w, c.reals[0]);
      auto r = rms_norm_backward(grad, x, f.rstd, w, RmsNormBackwardOptions{.residual = residual, .dx_cast = dx_cast});
      dx = r.dx, dx_cast_out = r.dx_cast;
      if (w.defined()) rest.push_back(r.dweight);
    }
    if (!cast) dx_cast_out = dx.to(d);
    const bool same_bits = dx_cast_out.defined() && dx_cast_out.dtype() == d && dx_cast_out.shape() == dx.shape() &&
                           dx_cast_out.to(Device::cpu()).to_bytes() == dx.to(d).to(Device::cpu()).to_bytes();
    std::vector<Tensor> out = {dx_cast_out, full({}, same_bits ? 1 : 0, DType::I32, dx.device()), dx};
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  };
  e.run_outputs = [outputs](const Case& c) { return outputs(c, true); };
  // The call without dx_cast, its dx then cast: the pass over dx the option saves.
  e.reference_outputs = [outputs](const Case& c) { return outputs(c, false); };
  e.reference_tolerance = exact;
  // dx_cast: the F32 dx's difference from the CPU's, then one rounding to the half dtype (a
  // value near a rounding boundary may land an ulp away); the flag exactly; the F32 outputs
  // as the mixed backward's.
  e.output_backend_tolerance = [](DType d, std::size_t output) {
    if (output == 0) return accumulated(d);
    if (output == 1) return Tolerance{};
    return Tolerance{1e-4, 1e-4};
  };
  e.errors = [name, centred](DType d) {
    auto backward = [centred](const Tensor& x, DType dx_cast) {
      const Tensor s = zeros({x.shape()[0]}, x.dtype() == DType::F64 ? DType::F64 : DType::F32, x.device());
      if (centred) layer_norm_backward(x, x, s, s, Tensor(), LayerNormBackwardOptions{.dx_cast = dx_cast});
      else rms_norm_backward(x, x, s, Tensor(), RmsNormBackwardOptions{.dx_cast = dx_cast});
    };
    const std::string dn(dtype_name(d));
    return std::vector<ErrorCase>{
        // The message names the op and both dtypes (the input's description includes its
        // device, so the fragments stop before it), then what is allowed.
        {"dx_cast of an F64 input", [=](Device dev) { backward(zeros({4, 8}, DType::F64, dev), d); },
         ErrorKind::Unsupported, name + ": dx_cast " + dn + " requested for input [4, 8] F64"},
        {"dx_cast of a half input", [=](Device dev) { backward(zeros({4, 8}, d, dev), d); }, ErrorKind::Unsupported,
         name + ": dx_cast " + dn + " requested for input [4, 8] " + dn},
        {"allowed inputs named", [=](Device dev) { backward(zeros({4, 8}, d, dev), d); }, ErrorKind::Unsupported,
         "; allowed for an F32 input only (F16 or BF16)"},
        {"dx_cast F32", [=](Device dev) { backward(zeros({4, 8}, DType::F32, dev), DType::F32); },
         ErrorKind::Unsupported, name + ": dx_cast F32 requested for input [4, 8] F32"},
        {"dx_cast F64", [=](Device dev) { backward(zeros({4, 8}, DType::F32, dev), DType::F64); },
         ErrorKind::Unsupported, "; allowed: F16 or BF16 (for an F32 input)"},
        {"dx_cast I32", [=](Device dev) { backward(zeros({4, 8}, DType::F32, dev), DType::I32); },
         ErrorKind::Unsupported, name + ": dx_cast I32 requested"},
    };
  };
  return e;
}

FERRITE_CONFORMANCE(norm_dx_cast_entry(true));
FERRITE_CONFORMANCE(norm_dx_cast_entry(false));

// Backend forward and backward against central differences of the host norm (with exact
// statistics), for dx, dbias and dweight, in F64.
Entry norm_fd_entry(bool centred) {
  Entry e = norm_backward_entry(centred);
  e.op += " (finite differences)";
  e.dtypes = {DType::F64};
  e.cases = [centred](DType d, Rng& rng) {
    std::vector<Case> cases;
    for (auto [s, w, b] : std::vector<std::tuple<Shape, bool, bool>>{{{3, 7}, true, true}, {{2, 2, 5}, true, false}, {{4, 6}, false, true}}) {
      const std::int64_t cols = s.back();
      cases.push_back({shape_str(s),
                       {random(s, d, rng), random({cols}, d, rng, 0.5, 2), random({cols}, d, rng), random(s, d, rng)},
                       {w ? 1 : 0, b && centred ? 1 : 0},
                       {1e-5}});
    }
    return cases;
  };
  e.reference_outputs = [centred](const Case& c) {
    const Tensor& x = c.inputs[0];
    const std::int64_t cols = x.shape().back(), rows = x.numel() / cols;
    const auto xv = reference::values(x), g = reference::values(c.inputs[3]);
    const auto w = values_or(weight_of(c), cols, 1), b = values_or(bias_of(c), cols, 0);
    // The host forward with exact statistics, as a function of x, of the weight or of the bias.
    auto forward = [&](const std::vector<long double>& xx, const std::vector<long double>& ww, const std::vector<long double>& bb) {
      std::vector<long double> y(xx.size());
      for (std::int64_t r = 0; r < rows; ++r) {
        long double mu = 0, var = 0;
        if (centred) {
          for (std::int64_t k = 0; k < cols; ++k) mu += xx[r * cols + k];
          mu /= cols;
        }
        for (std::int64_t k = 0; k < cols; ++k) var += (xx[r * cols + k] - mu) * (xx[r * cols + k] - mu);
        const long double rs = 1 / std::sqrt(var / cols + static_cast<long double>(c.reals[0]));
        for (std::int64_t k = 0; k < cols; ++k) y[r * cols + k] = (xx[r * cols + k] - mu) * rs * ww[k] + bb[k];
      }
      return y;
    };
    const auto dx = finite_difference_vjp([&](const std::vector<long double>& v) { return forward(v, w, b); }, xv, g);
    const auto dw = finite_difference_vjp([&](const std::vector<long double>& v) { return forward(xv, v, b); }, w, g);
    const auto db = finite_difference_vjp([&](const std::vector<long double>& v) { return forward(xv, w, v); }, b, g);
    std::vector<Tensor> out = {reference::from_values(dx, x.shape(), x.dtype())};
    if (centred) out.push_back(reference::from_values(db, {cols}, x.dtype()));
    if (c.ints[0]) out.push_back(reference::from_values(dw, {cols}, x.dtype()));
    return out;
  };
  e.reference_tolerance = [](DType) { return Tolerance{1e-6, 1e-7}; };
  e.errors = {};
  return e;
}

FERRITE_CONFORMANCE(norm_fd_entry(true));
FERRITE_CONFORMANCE(norm_fd_entry(false));

}  // namespace
}  // namespace ferrite::conformance
