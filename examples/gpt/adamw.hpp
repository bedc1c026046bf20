// AdamW (Loshchilov & Hutter), the update of one parameter tensor, through ferrite's fused
// optimizer (ferrite::optim::adamw).
#pragma once

#include <cstdint>

#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

struct AdamWHyper {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double weight_decay = 0.0;  // decoupled: param *= 1 - lr * weight_decay
};

/// One step for `param` (written in place) with its gradient and moment buffers (m, v,
/// same shape and dtype, updated in place). `step` counts from 1 (bias correction).
/// The arithmetic is torch.optim.AdamW's update rule (docs/families/training.md).
void adamw_update(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v, std::int64_t step,
                  const AdamWHyper& hyper);

}  // namespace ferrite::gpt
