// Conformance entries of the fused optimizers (adam, adamw, sgd; three steps over a list
// of four tensors, one of them empty) and of the fused cross-entropy with its backward.
// References: PyTorch's documented update loops (torch.optim.Adam/AdamW/SGD, the
// for-each implementation's order of state updates) and cross-entropy's definition, in
// long double. CUDA must equal the CPU bit for bit for the optimizers (both run
// src/core/optimizer_math.hpp with once-rounded float operations).
#include <cmath>
#include <limits>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"
#include "ferrite/nn_training.hpp"
#include "ferrite/optim.hpp"
#include "ferrite/random.hpp"

namespace ferrite::conformance {
namespace {

using reference::round_to;
using LD = long double;
constexpr int kSteps = 3;
const std::vector<Shape> kListShapes = {{1}, {0}, {37}, {1003}};

// ints: {optimizer variant flags}; reals: hyper-parameters. Inputs: param_i, grad_i pairs.
enum Flags : std::int64_t { kAmsgrad = 1, kMaximize = 2, kMaster = 4, kFoundInfFalse = 8, kFoundInfTrue = 16,
                            kNesterov = 32 };

std::vector<Case> optim_cases(DType dtype, Rng& rng, const std::vector<std::pair<std::string, std::int64_t>>& variants) {
  std::vector<Case> cases;
  for (const auto& [label, flags] : variants) {
    if ((flags & kMaster) && dtype == DType::F32) continue;
    Case c{label, {}, {flags}, {}};
    for (const Shape& s : kListShapes) {
      c.inputs.push_back(random(s, dtype, rng, -2, 2));
      c.inputs.push_back(random(s, dtype, rng, -1, 1));
    }
    cases.push_back(c);
  }
  return cases;
}

Tolerance optim_tolerance(DType d) {
  switch (d) {
    case DType::F32: return {2e-5, 2e-6};
    case DType::F16: return {2e-3, 1e-5};
    default: return {1.6e-2, 1e-5};
  }
}

Tensor found_inf_for(std::int64_t flags, Device device) {
  if (flags & kFoundInfTrue) return full({1}, 1.0, DType::Bool, device);
  if (flags & kFoundInfFalse) return full({1}, 0.0, DType::F32, device);
  return {};
}

// ---- Adam / AdamW ----
constexpr double kLr = 0.01, kB1 = 0.9, kB2 = 0.99, kEps = 1e-6, kWd = 0.05;

std::vector<Tensor> run_adam(const Case& c, bool decoupled) {
  const std::int64_t flags = c.ints[0];
  const std::size_t n = c.inputs.size() / 2;
  const Device dev = c.inputs[0].device();
  optim::AdamTensors t;
  for (std::size_t i = 0; i < n; ++i) {
    t.params.push_back(c.inputs[2 * i].clone());
    t.grads.push_back(c.inputs[2 * i + 1]);
    t.exp_avgs.push_back(zeros(t.params[i].shape(), DType::F32, dev));
    t.exp_avg_sqs.push_back(zeros(t.params[i].shape(), DType::F32, dev));
    if (flags & kAmsgrad) t.max_exp_avg_sqs.push_back(zeros(t.params[i].shape(), DType::F32, dev));
    if (flags & kMaster) t.master_params.push_back(t.params[i].to(DType::F32));
  }
  optim::AdamOptions o{kLr, kB1, kB2, kEps, kWd, (flags & kAmsgrad) != 0, (flags & kMaximize) != 0};
  const Tensor found = found_inf_for(flags, dev);
  for (int step = 1; step <= kSteps; ++step)
    decoupled ? optim::adamw(t, step, o, found) : optim::adam(t, step, o, found);
  std::vector<Tensor> out;
  for (auto* list : {&t.params, &t.exp_avgs, &t.exp_avg_sqs, &t.max_exp_avg_sqs, &t.master_params})
    for (const Tensor& x : *list) out.push_back(x);
  return out;
}

std::vector<Tensor> reference_adam(const Case& c, bool decoupled) {
  const std::int64_t flags = c.ints[0];
  const bool amsgrad = flags & kAmsgrad, maximize = flags & kMaximize, master = flags & kMaster;
  const bool skip = flags & kFoundInfTrue;
  const std::size_t n = c.inputs.size() / 2;
  const DType dtype = c.inputs[0].dtype();
  std::vector<Tensor> ps, ms, vs, vmaxs, masters;
  for (std::size_t i = 0; i < n; ++i) {
    auto p = reference::values(c.inputs[2 * i]);
    const auto g0 = reference::values(c.inputs[2 * i + 1]);
    std::vector<LD> m(p.size(), 0), v(p.size(), 0), vmax(p.size(), 0);
    for (int step = 1; step <= kSteps && !skip; ++step) {
      const LD bc1 = 1 - std::pow(LD(kB1), step), bc2 = 1 - std::pow(LD(kB2), step);
      for (std::size_t j = 0; j < p.size(); ++j) {
        LD g = maximize ? -g0[j] : g0[j];
        if (decoupled)
          p[j] *= 1 - LD(kLr) * LD(kWd);
        else
          g += LD(kWd) * p[j];
        m[j] = LD(kB1) * m[j] + (1 - LD(kB1)) * g;
        v[j] = LD(kB2) * v[j] + (1 - LD(kB2)) * g * g;
        vmax[j] = std::max(vmax[j], v[j]);
        const LD denom = std::sqrt(amsgrad ? vmax[j] : v[j]) / std::sqrt(bc2) + LD(kEps);
        p[j] -= LD(kLr) / bc1 * m[j] / denom;
        if (!master) p[j] = round_to(dtype, p[j]);  // the param is stored in its dtype each step
      }
    }
    const Shape s = c.inputs[2 * i].shape();
    ps.push_back(reference::from_values(p, s, dtype));
    ms.push_back(reference::from_values(m, s, DType::F32));
    vs.push_back(reference::from_values(v, s, DType::F32));
    if (amsgrad) vmaxs.push_back(reference::from_values(vmax, s, DType::F32));
    if (master) masters.push_back(reference::from_values(skip ? reference::values(c.inputs[2 * i]) : p, s, DType::F32));
  }
  std::vector<Tensor> out;
  for (auto* list : {&ps, &ms, &vs, &vmaxs, &masters})
    for (const Tensor& x : *list) out.push_back(x);
  return out;
}

std::vector<ErrorCase> optim_errors(DType dtype) {
  std::vector<ErrorCase> e;
  e.push_back({"grad dtype", [dtype](Device d) {
                 optim::AdamTensors t{{zeros({2}, dtype, d)}, {zeros({2}, DType::F64, d)}, {zeros({2}, DType::F32, d)},
                                      {zeros({2}, DType::F32, d)}, {}, {}};
                 optim::adam(t, 1);
               }, ErrorKind::DTypeMismatch, "adam: grads[0]"});
  e.push_back({"state shape", [dtype](Device d) {
                 optim::AdamTensors t{{zeros({2}, dtype, d)}, {zeros({2}, dtype, d)}, {zeros({3}, DType::F32, d)},
                                      {zeros({2}, DType::F32, d)}, {}, {}};
                 optim::adamw(t, 1);
               }, ErrorKind::ShapeMismatch, "adamw: exp_avgs[0]"});
  e.push_back({"step 0", [dtype](Device d) {
                 optim::AdamTensors t{{zeros({2}, dtype, d)}, {zeros({2}, dtype, d)}, {zeros({2}, DType::F32, d)},
                                      {zeros({2}, DType::F32, d)}, {}, {}};
                 optim::adam(t, 0);
               }, ErrorKind::InvalidArgument, "step must be >= 1"});
  e.push_back({"amsgrad without max_exp_avg_sqs", [dtype](Device d) {
                 optim::AdamTensors t{{zeros({2}, dtype, d)}, {zeros({2}, dtype, d)}, {zeros({2}, DType::F32, d)},
                                      {zeros({2}, DType::F32, d)}, {}, {}};
                 optim::adam(t, 1, {.amsgrad = true});
               }, ErrorKind::InvalidArgument, "amsgrad needs"});
  e.push_back({"F64 params", [](Device d) {
                 optim::SgdTensors t{{zeros({2}, DType::F64, d)}, {zeros({2}, DType::F64, d)}, {}, {}};
                 optim::sgd(t, true);
               }, ErrorKind::Unsupported, "sgd: param dtype F64"});
  e.push_back({"found_inf shape", [dtype](Device d) {
                 optim::SgdTensors t{{zeros({2}, dtype, d)}, {zeros({2}, dtype, d)}, {}, {}};
                 optim::sgd(t, true, {}, zeros({2}, DType::F32, d));
               }, ErrorKind::InvalidArgument, "found_inf must be a 1-element"});
  e.push_back({"nesterov without momentum", [dtype](Device d) {
                 optim::SgdTensors t{{zeros({2}, dtype, d)}, {zeros({2}, dtype, d)}, {}, {}};
                 optim::sgd(t, true, {.nesterov = true});
               }, ErrorKind::InvalidArgument, "nesterov needs momentum"});
  return e;
}

const std::vector<std::pair<std::string, std::int64_t>> kAdamVariants = {
    {"plain", 0}, {"amsgrad", kAmsgrad}, {"maximize", kMaximize}, {"master weights", kMaster},
    {"found_inf false", kFoundInfFalse}, {"found_inf true", kFoundInfTrue | kAmsgrad}};

Entry adam_entry(bool decoupled) {
  Entry e;
  e.op = decoupled ? "adamw" : "adam";
  e.dtypes = {DType::F32, DType::BF16, DType::F16};
  e.cases = [](DType d, Rng& rng) { return optim_cases(d, rng, kAdamVariants); };
  e.run_outputs = [decoupled](const Case& c) { return run_adam(c, decoupled); };
  e.reference_outputs = [decoupled](const Case& c) { return reference_adam(c, decoupled); };
  e.reference_tolerance = optim_tolerance;
  e.backend_tolerance = exact;
  e.errors = optim_errors;
  return e;
}

// ---- SGD ----
constexpr double kMomentum = 0.9, kDampening = 0.1;

std::vector<Tensor> run_sgd(const Case& c) {
  const std::int64_t flags = c.ints[0];
  const std::size_t n = c.inputs.size() / 2;
  const Device dev = c.inputs[0].device();
  const bool nesterov = flags & kNesterov;
  optim::SgdTensors t;
  for (std::size_t i = 0; i < n; ++i) {
    t.params.push_back(c.inputs[2 * i].clone());
    t.grads.push_back(c.inputs[2 * i + 1]);
    t.momentum_buffers.push_back(zeros(t.params[i].shape(), DType::F32, dev));
    if (flags & kMaster) t.master_params.push_back(t.params[i].to(DType::F32));
  }
  optim::SgdOptions o{kLr, kMomentum, nesterov ? 0.0 : kDampening, kWd, nesterov, (flags & kMaximize) != 0};
  const Tensor found = found_inf_for(flags, dev);
  for (int step = 1; step <= kSteps; ++step) optim::sgd(t, step == 1, o, found);
  std::vector<Tensor> out;
  for (auto* list : {&t.params, &t.momentum_buffers, &t.master_params})
    for (const Tensor& x : *list) out.push_back(x);
  return out;
}

std::vector<Tensor> reference_sgd(const Case& c) {
  const std::int64_t flags = c.ints[0];
  const bool nesterov = flags & kNesterov, maximize = flags & kMaximize, master = flags & kMaster;
  const bool skip = flags & kFoundInfTrue;
  const LD damp = nesterov ? 0 : kDampening;
  const std::size_t n = c.inputs.size() / 2;
  const DType dtype = c.inputs[0].dtype();
  std::vector<Tensor> ps, bufs, masters;
  for (std::size_t i = 0; i < n; ++i) {
    auto p = reference::values(c.inputs[2 * i]);
    const auto g0 = reference::values(c.inputs[2 * i + 1]);
    std::vector<LD> buf(p.size(), 0);
    for (int step = 1; step <= kSteps && !skip; ++step)
      for (std::size_t j = 0; j < p.size(); ++j) {
        LD g = maximize ? -g0[j] : g0[j];
        g += LD(kWd) * p[j];
        buf[j] = step == 1 ? g : LD(kMomentum) * buf[j] + (1 - damp) * g;
        g = nesterov ? g + LD(kMomentum) * buf[j] : buf[j];
        p[j] -= LD(kLr) * g;
        if (!master) p[j] = round_to(dtype, p[j]);
      }
    const Shape s = c.inputs[2 * i].shape();
    ps.push_back(reference::from_values(p, s, dtype));
    bufs.push_back(reference::from_values(buf, s, DType::F32));
    if (master) masters.push_back(reference::from_values(skip ? reference::values(c.inputs[2 * i]) : p, s, DType::F32));
  }
  std::vector<Tensor> out;
  for (auto* list : {&ps, &bufs, &masters})
    for (const Tensor& x : *list) out.push_back(x);
  return out;
}

Entry sgd_entry() {
  Entry e;
  e.op = "sgd";
  e.dtypes = {DType::F32, DType::BF16, DType::F16};
  e.cases = [](DType d, Rng& rng) {
    return optim_cases(d, rng, {{"momentum", 0}, {"nesterov", kNesterov}, {"maximize", kMaximize},
                                {"master weights", kMaster}, {"found_inf true", kFoundInfTrue}});
  };
  e.run_outputs = run_sgd;
  e.reference_outputs = reference_sgd;
  e.reference_tolerance = optim_tolerance;
  e.backend_tolerance = exact;
  e.errors = optim_errors;
  return e;
}

// ---- cross-entropy ----
// ints: {ignore_index, reduction (0 none, 1 mean, 2 sum)}; reals: {label_smoothing}.
std::vector<Case> ce_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  struct Spec {
    std::string label;
    std::int64_t rows, classes;
    std::int64_t reduction;
    double smoothing;
    int ignored;  // 0 none, 1 some, 2 all
    bool nan_row;
  };
  const std::vector<Spec> specs = {
      {"empty batch", 0, 5, 1, 0, 0, false},      {"one class", 3, 1, 1, 0, 0, false},
      {"mean", 7, 13, 1, 0, 1, false},            {"sum smoothing", 9, 40, 2, 0.1, 1, false},
      {"none", 5, 33, 0, 0.2, 1, true},           {"mean NaN row", 6, 64, 1, 0, 0, true},
      {"all ignored mean", 4, 16, 1, 0, 2, false}, {"all ignored sum", 4, 16, 2, 0.3, 2, false},
      {"wide rows", 17, 1000, 1, 0.05, 1, false}, {"odd wide rows", 3, 50303, 1, 0, 0, false}};
  for (const Spec& s : specs) {
    Tensor logits = random({s.rows, s.classes}, dtype, rng, -6, 6);
    std::vector<std::int64_t> t(static_cast<std::size_t>(s.rows));
    for (std::size_t r = 0; r < t.size(); ++r) {
      t[r] = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.classes));
      if (s.ignored == 2 || (s.ignored == 1 && r % 3 == 1)) t[r] = -100;
    }
    if (s.nan_row && s.rows > 1) {
      std::vector<double> v = logits.to_vector<double>();
      v[static_cast<std::size_t>(s.classes) + 1] = std::numeric_limits<double>::quiet_NaN();
      logits = from_vector(v, logits.shape()).to(dtype);
    }
    cases.push_back({s.label, {logits, from_vector(t, {s.rows})}, {-100, s.reduction}, {s.smoothing}});
  }
  return cases;
}

nn::CrossEntropyOptions ce_options(const Case& c) {
  return {c.ints[0], c.reals[0], static_cast<nn::Reduction>(c.ints[1] == 0 ? 0 : c.ints[1] == 1 ? 1 : 2)};
}

std::vector<Tensor> run_ce(const Case& c) {
  const Tensor& logits = c.inputs[0];
  const auto o = ce_options(c);
  const auto fwd = nn::cross_entropy_forward(logits, c.inputs[1], o);
  const Tensor grad = o.reduction == nn::Reduction::None
                          ? full({logits.shape()[0]}, 0.75, DType::F32, logits.device())
                          : full({}, 0.75, DType::F32, logits.device());
  return {fwd.loss, nn::cross_entropy_backward(grad, logits, c.inputs[1], fwd, o)};
}

std::vector<Tensor> reference_ce(const Case& c) {
  const Tensor& logits = c.inputs[0];
  const DType d = logits.dtype();
  const auto o = ce_options(c);
  const std::int64_t N = logits.shape()[0], C = logits.shape()[1];
  const auto x = reference::values(logits);
  const auto t = c.inputs[1].to_vector<std::int64_t>();
  const LD eps = o.label_smoothing;
  std::vector<LD> loss(static_cast<std::size_t>(N)), grad(x.size(), 0);
  LD total = 0, count = 0;
  for (std::int64_t r = 0; r < N; ++r) {
    if (t[r] == o.ignore_index) continue;
    count += 1;
    LD m = -INFINITY;
    bool nan = false;
    for (std::int64_t j = 0; j < C; ++j) nan |= std::isnan(x[r * C + j]), m = std::max(m, x[r * C + j]);
    LD s = 0, sx = 0;
    for (std::int64_t j = 0; j < C; ++j) s += std::exp(x[r * C + j] - m), sx += x[r * C + j];
    const LD lse = nan ? NAN : m + std::log(s);
    loss[r] = lse - (1 - eps) * x[r * C + t[r]] - eps / C * sx;
    total += loss[r];
  }
  // Ignored rows keep a zero gradient even when every row is ignored (count 0).
  const LD g = 0.75L / (o.reduction == nn::Reduction::Mean ? count : 1);
  for (std::int64_t r = 0; r < N; ++r) {
    if (t[r] == o.ignore_index) continue;
    LD m = -INFINITY, s = 0;
    bool nan = false;
    for (std::int64_t j = 0; j < C; ++j) nan |= std::isnan(x[r * C + j]), m = std::max(m, x[r * C + j]);
    for (std::int64_t j = 0; j < C; ++j) s += std::exp(x[r * C + j] - m);
    const LD lse = nan ? NAN : m + std::log(s);
    for (std::int64_t j = 0; j < C; ++j)
      grad[r * C + j] = g * (std::exp(x[r * C + j] - lse) - (j == t[r] ? 1 - eps : 0) - eps / C);
  }
  Tensor out;
  if (o.reduction == nn::Reduction::None)
    out = reference::from_values(loss, {N}, d);
  else
    out = reference::from_values({o.reduction == nn::Reduction::Mean ? total / count : total}, {}, d);
  return {out, reference::from_values(grad, logits.shape(), d)};
}

Tolerance ce_tolerance(DType d) {
  switch (d) {
    case DType::F32:
    case DType::F64: return {2e-5, 2e-6};  // the GPU accumulates in F32 for every dtype
    case DType::F16: return {2e-3, 1e-5};
    default: return {1.6e-2, 1e-5};
  }
}

Entry cross_entropy_entry() {
  Entry e;
  e.op = "cross_entropy";
  e.dtypes = {DType::F32, DType::F64, DType::F16, DType::BF16};
  e.cases = ce_cases;
  e.run_outputs = run_ce;
  e.reference_outputs = reference_ce;
  // F64 logits too: the per-row loss and log-sum-exp are kept in F32 (docs/families/training.md).
  e.reference_tolerance = ce_tolerance;
  e.backend_tolerance = ce_tolerance;
  e.errors = [](DType dtype) {
    std::vector<ErrorCase> v;
    v.push_back({"targets dtype", [dtype](Device d) { nn::cross_entropy(zeros({2, 3}, dtype, d), zeros({2}, DType::I32, d)); },
                 ErrorKind::DTypeMismatch, "targets must be I64"});
    v.push_back({"targets length", [dtype](Device d) { nn::cross_entropy(zeros({2, 3}, dtype, d), zeros({3}, DType::I64, d)); },
                 ErrorKind::ShapeMismatch, "expects logits [N, C]"});
    v.push_back({"integer logits", [](Device d) { nn::cross_entropy(zeros({2, 3}, DType::I32, d), zeros({2}, DType::I64, d)); },
                 ErrorKind::Unsupported, "cross_entropy: dtype I32"});
    v.push_back({"label_smoothing > 1", [dtype](Device d) {
                   nn::cross_entropy(zeros({2, 3}, dtype, d), zeros({2}, DType::I64, d), {.label_smoothing = 2});
                 }, ErrorKind::InvalidArgument, "label_smoothing must be in [0, 1]"});
    return v;
  };
  return e;
}

FERRITE_CONFORMANCE(adam_entry(false));
FERRITE_CONFORMANCE(adam_entry(true));
FERRITE_CONFORMANCE(sgd_entry());
FERRITE_CONFORMANCE(cross_entropy_entry());

}  // namespace
}  // namespace ferrite::conformance
