// Front end of the fused optimizers: list validation, the step's constants (in double),
// and one TrainingOps::optimizer_step call per dtype of parameters.
#include "ferrite/optim.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "core/training_families.hpp"
#include "frontend/checks.hpp"
#include "frontend/strided.hpp"

namespace ferrite {

namespace optim {
namespace {

struct ListSpec {
  const char* name;
  const std::vector<Tensor>* list;
  bool f32;  // state and masters are F32; grads take the param's dtype
};

void check_found_inf(const char* op, const Tensor& found_inf, Device device) {
  if (!found_inf.defined()) return;
  FERRITE_CHECK(found_inf.numel() == 1 && (found_inf.dtype() == DType::Bool || found_inf.dtype() == DType::F32),
                InvalidArgument, op, ": found_inf must be a 1-element Bool or F32 tensor, got ", found_inf.description());
  FERRITE_CHECK(found_inf.device() == device, DeviceMismatch, op, ": found_inf is on ", found_inf.device().str(),
                ", the params on ", device.str());
}

// Validates the lists and runs the step. `specs[0]` is the params list.
void run_step(const char* op, OptimizerDesc desc, const std::vector<ListSpec>& specs, const Tensor& found_inf) {
  const std::vector<Tensor>& params = *specs[0].list;
  const std::size_t n = params.size();
  for (const ListSpec& s : specs)  // optional lists are empty (the callers check which are required)
    FERRITE_CHECK(s.list->empty() || s.list->size() == n, ShapeMismatch, op, ": ", s.name, " has ", s.list->size(),
                  " tensors, params has ", n);
  if (n == 0) return;
  const Device device = params[0].device();
  const DType dtype = params[0].dtype();
  FERRITE_CHECK(dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16, Unsupported, op,
                ": param dtype ", dtype_name(dtype), " is not supported (F32, BF16 or F16)");
  check_found_inf(op, found_inf, device);
  std::vector<OptimizerTensor> tensors(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Tensor& p = params[i];
    FERRITE_CHECK(p.defined(), InvalidArgument, op, ": params[", i, "] is undefined");
    for (const ListSpec& s : specs) {
      if (s.list->empty()) continue;
      const Tensor& t = (*s.list)[i];
      FERRITE_CHECK(t.defined(), InvalidArgument, op, ": ", s.name, "[", i, "] is undefined");
      FERRITE_CHECK(t.device() == device, DeviceMismatch, op, ": ", s.name, "[", i, "] ", t.description(),
                    " is not on ", device.str());
      const DType want = s.f32 ? DType::F32 : dtype;
      FERRITE_CHECK(t.dtype() == want, DTypeMismatch, op, ": ", s.name, "[", i, "] ", t.description(), " should be ",
                    dtype_name(want));
      FERRITE_CHECK(t.shape() == p.shape(), ShapeMismatch, op, ": ", s.name, "[", i, "] ", t.description(),
                    " does not match params[", i, "] ", p.description());
      // Lists written in place must be contiguous so that their buffer is their storage.
      FERRITE_CHECK(t.is_contiguous(), InvalidArgument, op, ": ", s.name, "[", i, "] ", t.description(),
                    " must be contiguous");
    }
  }
  // A tensor the step updates (read, then written): through a WriteWindow, so that a
  // contiguous view off the 16-byte grid (e.g. a parameter packed into a flat buffer without
  // padding) is updated too and not only its buffer()'s copy.
  std::vector<frontend::WriteWindow> windows;
  const auto written = [&](const Tensor& t) { return windows.emplace_back(op, t, true).tensor().buffer(); };
  for (std::size_t i = 0; i < n; ++i) {
    OptimizerTensor& o = tensors[i];
    o.param = written(params[i]);
    o.grad = (*specs[1].list)[i].buffer();  // read only
    // specs: params, grads, the state lists in order, master_params last.
    Buffer* state[] = {&o.state0, &o.state1, &o.state2};
    for (std::size_t k = 2; k + 1 < specs.size(); ++k)
      if (!specs[k].list->empty()) *state[k - 2] = written((*specs[k].list)[i]);
    if (!specs.back().list->empty()) o.master = written((*specs.back().list)[i]);
  }
  detail::training_ops(device).optimizer_step(desc, tensors, found_inf.defined() ? found_inf.buffer() : Buffer());
  for (const frontend::WriteWindow& window : windows) window.finish();
}

void adam_family(const char* op, OptimizerKind kind, const AdamTensors& t, std::int64_t step, const AdamOptions& o,
                 const Tensor& found_inf) {
  FERRITE_CHECK(step >= 1, InvalidArgument, op, ": step must be >= 1 (1-based), got ", step);
  FERRITE_CHECK(o.lr >= 0 && o.eps >= 0 && o.weight_decay >= 0 && o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 &&
                    o.beta2 < 1,
                InvalidArgument, op, ": invalid hyper-parameters (lr ", o.lr, ", betas (", o.beta1, ", ", o.beta2,
                "), eps ", o.eps, ", weight_decay ", o.weight_decay, ")");
  const std::size_t n = t.params.size();
  FERRITE_CHECK(t.grads.size() == n && t.exp_avgs.size() == n && t.exp_avg_sqs.size() == n, ShapeMismatch, op,
                ": params, grads, exp_avgs and exp_avg_sqs need equal lengths, got ", n, ", ", t.grads.size(), ", ",
                t.exp_avgs.size(), ", ", t.exp_avg_sqs.size());
  FERRITE_CHECK(!o.amsgrad || t.max_exp_avg_sqs.size() == n, InvalidArgument, op, ": amsgrad needs ", n,
                " max_exp_avg_sqs, got ", t.max_exp_avg_sqs.size());
  FERRITE_CHECK(t.master_params.empty() || t.master_params.size() == n, ShapeMismatch, op, ": master_params has ",
                t.master_params.size(), " tensors, params has ", n);
  OptimizerDesc d;
  d.kind = kind;
  d.amsgrad = o.amsgrad;
  d.maximize = o.maximize;
  d.lr = o.lr;
  d.beta1 = o.beta1;
  d.beta2 = o.beta2;
  d.eps = o.eps;
  d.weight_decay = o.weight_decay;
  const double bc1 = 1 - std::pow(o.beta1, static_cast<double>(step));
  const double bc2 = 1 - std::pow(o.beta2, static_cast<double>(step));
  d.step_size = o.lr / bc1;
  d.inv_bc2_sqrt = 1 / std::sqrt(bc2);
  static const std::vector<Tensor> none;
  run_step(op, d,
           {{"params", &t.params, false},
            {"grads", &t.grads, false},
            {"exp_avgs", &t.exp_avgs, true},
            {"exp_avg_sqs", &t.exp_avg_sqs, true},
            {"max_exp_avg_sqs", o.amsgrad ? &t.max_exp_avg_sqs : &none, true},
            {"master_params", &t.master_params, true}},
           found_inf);
}

}  // namespace

void adam(const AdamTensors& t, std::int64_t step, const AdamOptions& o, const Tensor& found_inf) {
  adam_family("adam", OptimizerKind::Adam, t, step, o, found_inf);
}
void adamw(const AdamTensors& t, std::int64_t step, const AdamOptions& o, const Tensor& found_inf) {
  adam_family("adamw", OptimizerKind::AdamW, t, step, o, found_inf);
}

void sgd(const SgdTensors& t, bool first_step, const SgdOptions& o, const Tensor& found_inf) {
  const char* op = "sgd";
  FERRITE_CHECK(o.lr >= 0 && o.momentum >= 0 && o.weight_decay >= 0, InvalidArgument, op,
                ": invalid hyper-parameters (lr ", o.lr, ", momentum ", o.momentum, ", weight_decay ", o.weight_decay,
                ")");
  FERRITE_CHECK(!o.nesterov || (o.momentum > 0 && o.dampening == 0), InvalidArgument, op,
                ": nesterov needs momentum > 0 and dampening 0");
  const std::size_t n = t.params.size();
  FERRITE_CHECK(t.grads.size() == n, ShapeMismatch, op, ": params has ", n, " tensors, grads ", t.grads.size());
  FERRITE_CHECK(o.momentum == 0 || t.momentum_buffers.size() == n, InvalidArgument, op, ": momentum needs ", n,
                " momentum_buffers, got ", t.momentum_buffers.size());
  FERRITE_CHECK(t.master_params.empty() || t.master_params.size() == n, ShapeMismatch, op, ": master_params has ",
                t.master_params.size(), " tensors, params has ", n);
  OptimizerDesc d;
  d.kind = OptimizerKind::Sgd;
  d.nesterov = o.nesterov;
  d.maximize = o.maximize;
  d.first_step = first_step;
  d.lr = o.lr;
  d.momentum = o.momentum;
  d.dampening = o.dampening;
  d.weight_decay = o.weight_decay;
  static const std::vector<Tensor> none;
  run_step(op, d,
           {{"params", &t.params, false},
            {"grads", &t.grads, false},
            {"momentum_buffers", o.momentum != 0 ? &t.momentum_buffers : &none, true},
            {"master_params", &t.master_params, true}},
           found_inf);
}

}  // namespace optim
}  // namespace ferrite
