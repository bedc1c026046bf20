// AdamW through ferrite's fused optimizer (ferrite::optim::adamw, one launch over
// the list): PyTorch's update rule with decoupled weight decay and bias correction from `step`.
#include "examples/gpt/adamw.hpp"

namespace ferrite::gpt {

void adamw_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& ms,
                  const std::vector<Tensor>& vs, std::int64_t step, const AdamWHyper& hyper) {
  optim::AdamTensors tensors;
  tensors.params = params;
  tensors.grads = grads;
  tensors.exp_avgs = ms;
  tensors.exp_avg_sqs = vs;
  optim::adamw(tensors, step,
               {.lr = hyper.lr, .beta1 = hyper.beta1, .beta2 = hyper.beta2, .eps = hyper.eps,
                .weight_decay = hyper.weight_decay});
}

}  // namespace ferrite::gpt
