// Causal multi-head self-attention, forward and backward: the one place the model touches
// attention, a thin layer over nn::scaled_dot_product_attention and its backward.
#pragma once

#include <cstdint>

#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

/// What the backward pass needs from the forward pass.
struct AttentionCache {
  Tensor q, k, v;    // [B, heads, T, head_dim] views of the qkv projection, in the dtype attention runs in
  Tensor out;        // [B, heads, T, head_dim], the same dtype
  Tensor logsumexp;  // [B, heads, T], F32 (F64 for F64 activations)
};

/// qkv: [B, T, 3 * C] (the c_attn projection, q then k then v, each split into heads of
/// C / n_head). Returns softmax(q kᵀ / sqrt(head_dim) + causal mask) v as [B, T, C] with the
/// heads side by side, in qkv's dtype: BF16 activations run BF16 attention (F32 softmax
/// statistics), as PyTorch's autocast runs SDPA on BF16 q, k and v.
Tensor causal_attention(const Tensor& qkv, std::int64_t n_head, AttentionCache& cache);

/// The gradient of qkv ([B, T, 3 * C]) from the gradient of the output ([B, T, C]), both in
/// the dtype attention ran in.
Tensor causal_attention_backward(const Tensor& grad, const AttentionCache& cache);

}  // namespace ferrite::gpt
