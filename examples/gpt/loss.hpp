// Cross-entropy of next-byte predictions, forward and backward. A fused cross_entropy op
// replaces these two bodies (and LossCache) and nothing else changes.
#pragma once

#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

struct LossCache {
  Tensor log_probs;  // [N, V]
  Tensor targets;    // [N] I64
};

/// mean over rows of -log_softmax(logits)[row, target]: a 0-d tensor on the logits' device.
/// logits [N, V] floating, targets [N] I64.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, LossCache& cache);

/// The gradient of the logits when the loss's own gradient is `grad_scale` (1 / the number of
/// accumulated micro-batches): (softmax(logits) - onehot(targets)) * grad_scale / N.
Tensor cross_entropy_backward(const LossCache& cache, double grad_scale);

}  // namespace ferrite::gpt
