// Cross-entropy through ferrite's fused op. The mean reduction divides by the rows counted
// (all of them: byte targets are never the ignore index), so the backward of a loss whose
// gradient is grad_scale is grad_scale * (softmax - onehot) / N, as the composed version was.
#include "examples/gpt/loss.hpp"

namespace ferrite::gpt {

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, LossCache& cache) {
  cache.logits = logits;
  cache.targets = targets;
  cache.saved = nn::cross_entropy_forward(logits, targets);
  if (logits.dtype() != DType::F16 && logits.dtype() != DType::BF16) return cache.saved.loss;
  // Half-precision logits (--precision bf16): the op's loss has their dtype (PyTorch's rule),
  // while autocast's recipe reports cross_entropy(logits.float()), an F32 loss. Each row's
  // loss is lse - logit[target], both exact in F32 (lse is the op's F32 log-sum-exp), so the
  // F32 loss is their mean over the rows counted.
  const Tensor picked = gather(logits, 1, targets.unsqueeze(1)).view({-1}).to(DType::F32);
  return sum(cache.saved.lse - picked) / cache.saved.count;
}

Tensor cross_entropy_backward(const LossCache& cache, double grad_scale) {
  const Tensor grad = full({}, grad_scale, DType::F32, cache.logits.device());
  return nn::cross_entropy_backward(grad, cache.logits, cache.targets, cache.saved);
}

}  // namespace ferrite::gpt
