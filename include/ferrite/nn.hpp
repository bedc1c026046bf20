// Neural-network ops (namespace ferrite::nn). Each op group has its own section or header
// (convolution, pooling and recurrent cells: nn_conv.hpp); validation happens in
// src/frontend/, backends receive checked Buffers.
#pragma once

#include "ferrite/nn_conv.hpp"

#include <optional>
#include <utility>

#include "ferrite/tensor.hpp"

namespace ferrite::nn {

// ---- scaled dot-product attention (issue #16, docs/families/nn.md) -------------------------

struct AttentionOptions {
  /// Key j is hidden from query i when j > i (top-left aligned when seq_q != seq_k, as PyTorch).
  bool causal = false;
  /// Multiplies q . k; default 1 / sqrt(head_dim).
  std::optional<double> scale = std::nullopt;
  /// Bool (true = attend) or additive (the inputs' dtype, added to the scaled scores; -inf
  /// hides), broadcastable to [B, Hq, Sq, Sk]. May be combined with `causal`.
  std::optional<Tensor> mask = std::nullopt;
};

struct AttentionResult {
  Tensor out;        ///< [B, Hq, Sq, Dv], the inputs' dtype
  Tensor logsumexp;  ///< [B, Hq, Sq], F32 (F64 for F64 inputs); -inf for fully masked rows
};

/// softmax(scale * q kᵀ + mask) v without ever forming the score matrix. q [B, Hq, Sq, D],
/// k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv]; grouped-query attention when Hkv divides Hq. Dtypes
/// F32, F64, F16, BF16 (half types accumulate in F32). Fully masked rows give 0 (not NaN).
AttentionResult scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const AttentionOptions& options = {});

struct AttentionGrads {
  Tensor dq, dk, dv;
};

/// Gradients of scaled_dot_product_attention from its saved out and logsumexp; dk and dv are
/// summed over the query heads that share them. Deterministic (repeats bit for bit). Fully
/// masked rows contribute nothing. The mask gets no gradient.
AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& out, const Tensor& logsumexp,
                                                     const AttentionOptions& options = {});

}  // namespace ferrite::nn
