// The backend interface of the fused optimizers and the fused cross-entropy (issue #17).
// Buffers are validated and contiguous; optimizer steps write their Buffers in place.
#pragma once

#include <cstdint>
#include <vector>

#include "ferrite/buffer.hpp"

namespace ferrite {

enum class OptimizerKind : std::uint8_t { Adam, AdamW, Sgd };

/// One step's constants, precomputed on the host in double and used in float by both
/// backends with the same operation order (src/core/optimizer_math.hpp).
struct OptimizerDesc {
  OptimizerKind kind = OptimizerKind::Adam;
  bool amsgrad = false, maximize = false, nesterov = false;
  bool first_step = false;  ///< SGD: the momentum buffer starts as the gradient
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  double step_size = 0;      ///< Adam: lr / (1 - beta1^t)
  double inv_bc2_sqrt = 0;   ///< Adam: 1 / sqrt(1 - beta2^t)
  double momentum = 0, dampening = 0;
};

/// Tensor i of the list: param (F32/BF16/F16), grad (param's dtype), F32 state buffers
/// (Adam: exp_avg, exp_avg_sq, max_exp_avg_sq when amsgrad; SGD: momentum buffer when
/// momentum != 0), and an F32 master copy of the param (empty Buffer when absent: then the
/// param itself is updated; when present the master is updated and the param gets its
/// rounding).
struct OptimizerTensor {
  Buffer param, grad, state0, state1, state2, master;
};

/// Per-row results of cross-entropy's forward (all F32 [rows]): the loss (0 on ignored
/// rows), the log-sum-exp of the row's logits, and 1 or 0 for counted or ignored rows.
struct CrossEntropyDesc {
  std::int64_t rows = 0, classes = 0;
  std::int64_t ignore_index = -100;
  double label_smoothing = 0;
};

class TrainingOps {
 public:
  virtual ~TrainingOps() = default;
  /// One step over every tensor of `tensors` (one dtype), skipped entirely when `found_inf`
  /// (empty, or a 1-element Bool/F32 buffer) is nonzero.
  virtual void optimizer_step(const OptimizerDesc& desc, const std::vector<OptimizerTensor>& tensors,
                              const Buffer& found_inf) = 0;
  /// logits [rows, classes] (float dtype), targets I64 [rows]; outputs F32 [rows] each. A
  /// target outside [0, classes) that is not ignore_index gives a NaN loss for its row.
  virtual void cross_entropy_forward(const CrossEntropyDesc& desc, const Buffer& logits, const Buffer& targets,
                                     const Buffer& loss, const Buffer& lse, const Buffer& counted) = 0;
  /// grad_logits[r, j] = g_r * (exp(x[r, j] - lse[r]) - (1 - ls) [j == t_r] - ls / classes),
  /// 0 on ignored rows; g_r = grad[grad.numel() == 1 ? 0 : r] / divisor[0] (divisor empty: 1).
  virtual void cross_entropy_backward(const CrossEntropyDesc& desc, const Buffer& grad, const Buffer& divisor,
                                      const Buffer& logits, const Buffer& targets, const Buffer& lse,
                                      const Buffer& grad_logits) = 0;
};

}  // namespace ferrite
