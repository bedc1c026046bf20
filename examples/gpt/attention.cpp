// Causal self-attention through ferrite's fused scaled-dot-product attention: the
// [B, heads, T, T] score matrix is never materialised (memory O(T), not O(T²)), and on the GPU
// the BF16 path runs cuDNN's flash attention where it applies.
#include "examples/gpt/attention.hpp"

#include "examples/gpt/phase_profile.hpp"

namespace ferrite::gpt {

Tensor causal_attention(const Tensor& qkv, std::int64_t n_head, AttentionCache& cache) {
  const std::int64_t b = qkv.size(0), t = qkv.size(1), c = qkv.size(2) / 3;
  const std::int64_t hd = c / n_head;
  // [B, T, 3, heads, hd] -> [3, B, heads, T, hd]: views of qkv, passed as they are. cuDNN's
  // attention (F16/BF16 on the GPU) reads them in place, as PyTorch's SDPA does; the other
  // routes copy them densely inside the call (so the cache keeps qkv alive, not copies).
  const Tensor heads = qkv.view({b, t, 3, n_head, hd}).permute({2, 0, 3, 1, 4});
  cache.q = heads.select(0, 0);
  cache.k = heads.select(0, 1);
  cache.v = heads.select(0, 2);
  nn::AttentionResult result;
  {
    Phase phase("attention");
    result = nn::scaled_dot_product_attention(cache.q, cache.k, cache.v, {.causal = true});
    cache.logsumexp = result.logsumexp;
  }
  Phase phase("attention copies");
  // [B, heads, T, hd] -> [B, T, heads * hd]. Where cuDNN runs, the output already lies in q's
  // layout, [B, T, heads, hd] in memory (as PyTorch's SDPA writes it), and contiguous() is
  // the tensor itself; elsewhere one copy. The backward reads the output through a view of y
  // (the same values), so the forward keeps it once.
  const Tensor y = result.out.permute({0, 2, 1, 3}).contiguous().view({b, t, c});
  cache.out = y.view({b, t, n_head, hd}).permute({0, 2, 1, 3});
  return y;
}

Tensor causal_attention_backward(const Tensor& grad, const AttentionCache& cache) {
  const std::int64_t b = cache.q.size(0), n_head = cache.q.size(1), t = cache.q.size(2), hd = cache.q.size(3);
  // [B, T, heads, hd] -> [B, heads, T, hd]: a view, read in place where the forward's are.
  const Tensor dy = grad.view({b, t, n_head, hd}).permute({0, 2, 1, 3});
  // The gradients go straight into the layout of qkv, [B, T, 3, heads, hd], as the three
  // slices the forward read q, k, v from: cuDNN writes them in place; the other routes write
  // dense gradients and copy each once.
  const Tensor dqkv = empty({b, t, 3, n_head, hd}, dy.dtype(), dy.device());
  const Tensor heads = dqkv.permute({2, 0, 3, 1, 4});  // [3, B, heads, T, hd]
  const nn::AttentionGrads into{heads.select(0, 0), heads.select(0, 1), heads.select(0, 2)};
  Phase phase("attention (bwd)");
  nn::scaled_dot_product_attention_backward_out(into, dy, cache.q, cache.k, cache.v, cache.out, cache.logsumexp,
                                                {.causal = true});
  return dqkv.view({b, t, 3 * n_head * hd});
}

}  // namespace ferrite::gpt
