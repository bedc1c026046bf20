// Training ops of ferrite::nn (issue #17): dropout and the fused cross-entropy, each with its
// backward. Included by ferrite/ferrite.hpp; docs/families/training.md.
#pragma once

#include <cstdint>

#include "ferrite/random.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::nn {

struct DropoutResult {
  Tensor output;  ///< x * mask / (1 - p), x's dtype and shape
  Tensor mask;    ///< Bool, x's shape: true where the element was kept
};

/// Zeroes each element with probability p (0 <= p <= 1) and scales the rest by 1 / (1 - p),
/// as torch.nn.functional.dropout in training mode (p == 1 gives x * 0). Every float dtype.
/// The keep decision of element i is word i % 4 of the Philox group i / 4 at the
/// generator's (seed, offset) (docs/families/random.md), so it is the same on every device.
DropoutResult dropout(const Tensor& x, double p, random::Generator* generator = nullptr);
/// grad * mask / (1 - p).
Tensor dropout_backward(const Tensor& grad, const Tensor& mask, double p);

enum class Reduction : std::uint8_t { None, Mean, Sum };

struct CrossEntropyOptions {
  std::int64_t ignore_index = -100;
  double label_smoothing = 0;  ///< in [0, 1]
  Reduction reduction = Reduction::Mean;
};

/// What the forward keeps for the backward.
struct CrossEntropyForward {
  Tensor loss;   ///< logits' dtype: 0-d (Mean, Sum) or [N] (None)
  Tensor lse;    ///< F32 [N]: log-sum-exp of each row
  Tensor count;  ///< F32 0-d: rows whose target is not ignore_index
};

/// torch.nn.functional.cross_entropy with class-index targets: logits [N, C] (or [C] with a
/// 0-d target), any float dtype, accumulated in F32; targets I64. Mean divides by the
/// number of rows not ignored (NaN when all are, as PyTorch). A target outside [0, C) that
/// is not ignore_index gives NaN for its row (PyTorch raises a device-side assert).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options = {});
CrossEntropyForward cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                          const CrossEntropyOptions& options = {});
/// Gradient of the loss with respect to the logits (logits' dtype and shape); grad has
/// the loss's shape.
Tensor cross_entropy_backward(const Tensor& grad, const Tensor& logits, const Tensor& targets,
                              const CrossEntropyForward& saved, const CrossEntropyOptions& options = {});

}  // namespace ferrite::nn

namespace ferrite {
/// Streams ferrite enqueues work on for `device`: 1 (each device has one ferrite stream;
/// user streams are installed per thread with cuda::StreamGuard). InvalidArgument for a
/// device that does not exist. Section 20's stream_count.
int stream_count(Device device);
}  // namespace ferrite
