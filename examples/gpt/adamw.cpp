// AdamW composed from elementwise ops (about ten passes over each tensor; a fused kernel
// makes one).
#include "examples/gpt/adamw.hpp"

#include <cmath>

namespace ferrite::gpt {

void adamw_update(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v, std::int64_t step,
                  const AdamWHyper& hyper) {
  if (hyper.weight_decay != 0) param.mul_(1.0 - hyper.lr * hyper.weight_decay);
  m.add_((grad - m) * (1.0 - hyper.beta1));         // m.lerp_(grad, 1 - beta1)
  v.mul_(hyper.beta2).add_(grad * grad * (1.0 - hyper.beta2));
  const double bias1 = 1.0 - std::pow(hyper.beta1, static_cast<double>(step));
  const double bias2 = 1.0 - std::pow(hyper.beta2, static_cast<double>(step));
  const Tensor denom = sqrt(v) / std::sqrt(bias2) + hyper.eps;
  param.sub_(m / denom * (hyper.lr / bias1));
}

}  // namespace ferrite::gpt
