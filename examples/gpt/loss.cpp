// Cross-entropy through ferrite's fused op. The mean reduction divides by the rows counted
// (all of them: byte targets are never the ignore index), so the backward of a loss whose
// gradient is grad_scale is grad_scale * (softmax - onehot) / N, as the composed version was.
#include "examples/gpt/loss.hpp"

namespace ferrite::gpt {

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, LossCache& cache) {
  cache.logits = logits;
  cache.targets = targets;
  cache.saved = nn::cross_entropy_forward(logits, targets);
  return cache.saved.loss;
}

Tensor cross_entropy_backward(const LossCache& cache, double grad_scale) {
  const Tensor grad = full({}, grad_scale, DType::F32, cache.logits.device());
  return nn::cross_entropy_backward(grad, cache.logits, cache.targets, cache.saved);
}

}  // namespace ferrite::gpt
