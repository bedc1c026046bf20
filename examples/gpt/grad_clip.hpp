// Global-norm gradient clipping, as torch.nn.utils.clip_grad_norm_.
#pragma once

#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

/// sqrt of the sum of squares of every gradient: a 0-d tensor on their device (no host read).
Tensor global_norm(const std::vector<Tensor>& grads);

/// Scales every gradient in place by min(1, max_norm / (norm + 1e-6)), computed on the
/// device from `norm` (global_norm's result).
void clip_grads(const std::vector<Tensor>& grads, const Tensor& norm, double max_norm);

}  // namespace ferrite::gpt
