// Cross-entropy of next-byte predictions, forward and backward: a thin layer over ferrite's
// fused nn::cross_entropy_forward / cross_entropy_backward (one pass over the logits each
// way; the [N, V] log-probabilities and the one-hot matrix are never materialised).
#pragma once

#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

struct LossCache {
  Tensor logits;   // [N, V], what the backward pass reads
  Tensor targets;  // [N] I64
  nn::CrossEntropyForward saved;  // per-row log-sum-exp (F32) and the row count
};

/// mean over rows of -log_softmax(logits)[row, target]: a 0-d tensor on the logits' device,
/// of their dtype for F32/F64 logits and F32 for F16/BF16 logits (autocast's logits.float()). logits [N, V] floating, targets [N] I64. The fused op accumulates in F32
/// (also for F64 logits: then the loss has F32 precision; docs/families/training.md).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, LossCache& cache);

/// The gradient of the logits when the loss's own gradient is `grad_scale` (1 / the number of
/// accumulated micro-batches): (softmax(logits) - onehot(targets)) * grad_scale / N, in the
/// logits' dtype.
Tensor cross_entropy_backward(const LossCache& cache, double grad_scale);

}  // namespace ferrite::gpt
