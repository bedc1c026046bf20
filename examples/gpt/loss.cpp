// Cross-entropy composed from log_softmax, gather and a mean.
#include "examples/gpt/loss.hpp"

namespace ferrite::gpt {

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, LossCache& cache) {
  cache.log_probs = log_softmax(logits, -1);
  cache.targets = targets;
  const Tensor picked = gather(cache.log_probs, 1, targets.unsqueeze(1));  // [N, 1]
  return -mean(picked);
}

Tensor cross_entropy_backward(const LossCache& cache, double grad_scale) {
  const std::int64_t n = cache.log_probs.size(0), v = cache.log_probs.size(1);
  const Device device = cache.log_probs.device();
  // One-hot rows from a broadcast comparison (no scatter, no host loop).
  const Tensor onehot = eq(arange(v, DType::I64, device).unsqueeze(0), cache.targets.unsqueeze(1))
                            .to(cache.log_probs.dtype());
  return (exp(cache.log_probs) - onehot) * (grad_scale / static_cast<double>(n));
}

}  // namespace ferrite::gpt
