// One optimizer update of one element, shared by the CPU backend and the CUDA kernels.
// Every operation is rounded once in float (no fma contraction: philox.hpp's mul/add), so
// both backends give the same bits. The rules are PyTorch's documented ones (torch.optim.Adam,
// AdamW, SGD); docs/families/training.md spells them out.
#pragma once

#include "core/philox.hpp"
#include "ferrite/backend_families/training_ops.hpp"

namespace ferrite::detail::optim {

using philox::add;
using philox::mul;
using philox::quot;
using philox::root;

/// OptimizerDesc's constants rounded to float once, on the host.
struct StepConsts {
  OptimizerKind kind;
  bool amsgrad, maximize, nesterov, first_step;
  float lr, beta1, one_minus_beta1, beta2, one_minus_beta2, eps, weight_decay;
  float neg_step_size, inv_bc2_sqrt, decay;  // decay: AdamW's 1 - lr * weight_decay
  float momentum, one_minus_dampening, neg_lr;
};

inline StepConsts step_consts(const OptimizerDesc& d) {
  StepConsts c{};
  c.kind = d.kind;
  c.amsgrad = d.amsgrad;
  c.maximize = d.maximize;
  c.nesterov = d.nesterov;
  c.first_step = d.first_step;
  c.lr = static_cast<float>(d.lr);
  c.beta1 = static_cast<float>(d.beta1);
  c.one_minus_beta1 = static_cast<float>(1 - d.beta1);
  c.beta2 = static_cast<float>(d.beta2);
  c.one_minus_beta2 = static_cast<float>(1 - d.beta2);
  c.eps = static_cast<float>(d.eps);
  c.weight_decay = static_cast<float>(d.weight_decay);
  c.neg_step_size = static_cast<float>(-d.step_size);
  c.inv_bc2_sqrt = static_cast<float>(d.inv_bc2_sqrt);
  c.decay = static_cast<float>(1 - d.lr * d.weight_decay);
  c.momentum = static_cast<float>(d.momentum);
  c.one_minus_dampening = static_cast<float>(1 - d.dampening);
  c.neg_lr = static_cast<float>(-d.lr);
  return c;
}

/// Adam / AdamW on one element. vmax is read and written only with amsgrad.
FERRITE_HOST_DEVICE void adam_element(const StepConsts& c, float& p, float g, float& m, float& v, float& vmax) {
  if (c.maximize) g = -g;
  if (c.kind == OptimizerKind::AdamW)
    p = mul(p, c.decay);
  else if (c.weight_decay != 0.f)
    g = add(g, mul(c.weight_decay, p));
  m = add(mul(c.beta1, m), mul(c.one_minus_beta1, g));
  v = add(mul(c.beta2, v), mul(c.one_minus_beta2, mul(g, g)));
  float second = v;
  if (c.amsgrad) {
    vmax = (vmax < v || v != v) ? v : vmax;  // torch.maximum: NaN propagates
    second = vmax;
  }
  const float denom = add(mul(root(second), c.inv_bc2_sqrt), c.eps);
  p = add(p, mul(c.neg_step_size, quot(m, denom)));
}

/// SGD with momentum, dampening, Nesterov and weight decay on one element. buf is used
/// only when momentum != 0.
FERRITE_HOST_DEVICE void sgd_element(const StepConsts& c, float& p, float g, float& buf) {
  if (c.maximize) g = -g;
  if (c.weight_decay != 0.f) g = add(g, mul(c.weight_decay, p));
  if (c.momentum != 0.f) {
    buf = c.first_step ? g : add(mul(c.momentum, buf), mul(c.one_minus_dampening, g));
    g = c.nesterov ? add(g, mul(c.momentum, buf)) : buf;
  }
  p = add(p, mul(c.neg_lr, g));
}

}  // namespace ferrite::detail::optim
