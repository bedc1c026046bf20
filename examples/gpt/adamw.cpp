// AdamW through ferrite's fused optimizer (ferrite::optim::adamw, one kernel over the
// tensor): PyTorch's update rule with decoupled weight decay and bias correction from `step`.
#include "examples/gpt/adamw.hpp"

namespace ferrite::gpt {

void adamw_update(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v, std::int64_t step,
                  const AdamWHyper& hyper) {
  optim::AdamTensors tensors;
  tensors.params = {param};
  tensors.grads = {grad};
  tensors.exp_avgs = {m};
  tensors.exp_avg_sqs = {v};
  optim::adamw(tensors, step,
               {.lr = hyper.lr, .beta1 = hyper.beta1, .beta2 = hyper.beta2, .eps = hyper.eps,
                .weight_decay = hyper.weight_decay});
}

}  // namespace ferrite::gpt
