// Gradient clipping without a host round trip: the scale factor stays a 0-d device tensor
// that broadcasts into each in-place multiply.
#include "examples/gpt/grad_clip.hpp"

namespace ferrite::gpt {

Tensor global_norm(const std::vector<Tensor>& grads) {
  Tensor total;
  for (const Tensor& g : grads) {
    const Tensor squares = sum(g * g);
    total = total.defined() ? total + squares : squares;
  }
  return sqrt(total);
}

void clip_grads(const std::vector<Tensor>& grads, const Tensor& norm, double max_norm) {
  const Tensor factor = clamp(max_norm / (norm + 1e-6), std::nullopt, 1.0);
  for (const Tensor& g : grads) g.mul_(factor);
}

}  // namespace ferrite::gpt
