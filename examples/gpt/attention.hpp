// Causal multi-head self-attention, forward and backward. The one place the model touches
// attention: a fused kernel (nn::scaled_dot_product_attention) replaces the bodies of these
// two functions and what AttentionCache holds, and nothing else changes.
#pragma once

#include <cstdint>

#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

/// What the backward pass needs from the forward pass.
struct AttentionCache {
  Tensor q, k, v;  // [B, heads, T, head_dim]
  Tensor probs;    // [B, heads, T, T], zero above the diagonal
  MatmulCompute compute = MatmulCompute::Default;
};

/// qkv: [B, T, 3 * C] (the c_attn projection, q then k then v, each split into heads of
/// C / n_head). Returns softmax(q kᵀ / sqrt(head_dim) + causal mask) v as [B, T, C] with the
/// heads side by side.
/// `compute` is the matmuls' precision (MatmulCompute::BF16: BF16 tensor cores, F32 results);
/// the backward pass uses the same.
Tensor causal_attention(const Tensor& qkv, std::int64_t n_head, AttentionCache& cache,
                        MatmulCompute compute = MatmulCompute::Default);

/// The gradient of qkv ([B, T, 3 * C]) from the gradient of the output ([B, T, C]).
Tensor causal_attention_backward(const Tensor& grad, const AttentionCache& cache);

}  // namespace ferrite::gpt
