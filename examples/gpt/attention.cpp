// Attention composed from ferrite ops: two batched matmuls around a masked softmax. Every
// [B, heads, T, T] intermediate is materialised, which a fused kernel avoids.
#include "examples/gpt/attention.hpp"

#include <cmath>
#include <limits>

namespace ferrite::gpt {

namespace {

// True above the diagonal (key position after the query position): the entries a token
// may not look at. Built on the device from two aranges.
Tensor future_mask(std::int64_t t, Device device) {
  const Tensor pos = arange(t, DType::I64, device);
  return gt(pos.unsqueeze(0), pos.unsqueeze(1));
}

}  // namespace

Tensor causal_attention(const Tensor& qkv, std::int64_t n_head, AttentionCache& cache, MatmulCompute compute) {
  cache.compute = compute;
  const std::int64_t b = qkv.size(0), t = qkv.size(1), c = qkv.size(2) / 3;
  const std::int64_t hd = c / n_head;
  // [B, T, 3, heads, hd] -> [3, B, heads, T, hd]: views, no copy yet.
  const Tensor heads = qkv.view({b, t, 3, n_head, hd}).permute({2, 0, 3, 1, 4});
  cache.q = heads.select(0, 0).contiguous();
  cache.k = heads.select(0, 1).contiguous();
  cache.v = heads.select(0, 2).contiguous();
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  const Tensor scores = matmul(cache.q, cache.k, {.transpose_b = true, .compute = compute}) * scale;  // [B, heads, T, T]
  const Tensor masked = masked_fill(scores, future_mask(t, qkv.device()), -std::numeric_limits<double>::infinity());
  cache.probs = softmax(masked, -1);
  const Tensor y = matmul(cache.probs, cache.v, {.compute = compute});  // [B, heads, T, hd]
  return y.permute({0, 2, 1, 3}).contiguous().view({b, t, c});
}

Tensor causal_attention_backward(const Tensor& grad, const AttentionCache& cache) {
  const std::int64_t b = cache.q.size(0), n_head = cache.q.size(1), t = cache.q.size(2), hd = cache.q.size(3);
  const Tensor dy = grad.view({b, t, n_head, hd}).permute({0, 2, 1, 3}).contiguous();  // [B, heads, T, hd]
  // y = P v:  dP = dy vᵀ,  dv = Pᵀ dy.
  const MatmulCompute compute = cache.compute;
  const Tensor dprobs = matmul(dy, cache.v, {.transpose_b = true, .compute = compute});
  const Tensor dv = matmul(cache.probs, dy, {.transpose_a = true, .compute = compute});
  // P = softmax(S): dS = P * (dP - rowsum(dP * P)); masked entries have P = 0, so dS = 0
  // there and the mask needs no backward of its own. S = scale * q kᵀ.
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  const Tensor dscores = softmax_backward(dprobs, cache.probs, -1) * scale;
  const Tensor dq = matmul(dscores, cache.k, {.compute = compute});                          // dS k
  const Tensor dk = matmul(dscores, cache.q, {.transpose_a = true, .compute = compute});  // dSᵀ q
  // [3, B, heads, T, hd] -> [B, T, 3, heads, hd], the layout of qkv.
  return stack({dq, dk, dv}, 0).permute({1, 3, 0, 2, 4}).contiguous().view({b, t, 3 * n_head * hd});
}

}  // namespace ferrite::gpt
