// Fused multi-tensor optimizers (issue #17): one call updates a whole list of parameters in
// place, with PyTorch's documented update rules (torch.optim.Adam, AdamW, SGD; formulas in
// docs/families/training.md). Parameters F32, BF16 or F16 with F32 state (and F32 grads
// of the param's dtype); with `master_params` (F32 copies), the masters are updated and the
// params receive their rounding (mixed-precision training). On the GPU one kernel launch
// covers up to 256 tensors. `found_inf` (a 1-element Bool or F32 tensor on the params'
// device, e.g. from a grad scaler) skips the step on the device when nonzero, with no host
// read; the caller still advances its own step count (as torch's GradScaler does not).
#pragma once

#include <cstdint>
#include <vector>

#include "ferrite/tensor.hpp"

namespace ferrite::optim {

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false;
};

/// Lists of equal length; tensor i of each list has param i's shape. max_exp_avg_sqs is
/// needed only with amsgrad, master_params only for the master-weight variant.
struct AdamTensors {
  std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, master_params;
};

/// One Adam step with L2 weight decay (added to the gradient); `step` is the 1-based step
/// count used for bias correction.
void adam(const AdamTensors& tensors, std::int64_t step, const AdamOptions& options = {},
          const Tensor& found_inf = {});
/// One AdamW step (decoupled weight decay: p *= 1 - lr * weight_decay before the update).
/// AdamOptions' weight_decay defaults to 0; PyTorch's AdamW default is 1e-2.
void adamw(const AdamTensors& tensors, std::int64_t step, const AdamOptions& options = {},
           const Tensor& found_inf = {});

struct SgdOptions {
  double lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};

struct SgdTensors {
  std::vector<Tensor> params, grads, momentum_buffers, master_params;  // buffers: F32, when momentum != 0
};

/// One SGD step; `first_step` initialises the momentum buffers to the gradient (PyTorch
/// does so when a parameter has no buffer yet).
void sgd(const SgdTensors& tensors, bool first_step, const SgdOptions& options = {}, const Tensor& found_inf = {});

}  // namespace ferrite::optim
