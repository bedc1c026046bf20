// AdamW (Loshchilov & Hutter), the update of a list of parameter tensors, through ferrite's fused
// optimizer (ferrite::optim::adamw).
#pragma once

#include <cstdint>
#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

struct AdamWHyper {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double weight_decay = 0.0;  // decoupled: param *= 1 - lr * weight_decay
};

/// One step for every tensor of `params` (written in place) with its gradient and moment
/// buffers (m, v: same shapes and dtype, updated in place), in one fused launch over the list.
/// `step` counts from 1 (bias correction). The arithmetic is torch.optim.AdamW's update rule
/// (docs/families/training.md).
void adamw_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& ms,
                  const std::vector<Tensor>& vs, std::int64_t step, const AdamWHyper& hyper);

}  // namespace ferrite::gpt
