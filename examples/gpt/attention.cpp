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
  // [B, heads, T, hd] -> [B, T, heads * hd]. The backward reads the output through a view of
  // this copy (the same values), so the forward keeps it once, not also as [B, heads, T, hd]:
  // 2·B·T·C bytes less per layer (BF16), as PyTorch, whose SDPA writes that layout directly.
  const Tensor y = result.out.permute({0, 2, 1, 3}).contiguous().view({b, t, c});
  cache.out = y.view({b, t, n_head, hd}).permute({0, 2, 1, 3});
  return y;
}

Tensor causal_attention_backward(const Tensor& grad, const AttentionCache& cache) {
  const std::int64_t b = cache.q.size(0), n_head = cache.q.size(1), t = cache.q.size(2), hd = cache.q.size(3);
  // [B, T, heads, hd] -> [B, heads, T, hd]: a view, read in place where the forward's are.
  const Tensor dy = grad.view({b, t, n_head, hd}).permute({0, 2, 1, 3});
  nn::AttentionGrads g;
  {
    Phase phase("attention (bwd)");
    g = nn::scaled_dot_product_attention_backward(dy, cache.q, cache.k, cache.v, cache.out, cache.logsumexp,
                                                  {.causal = true});
  }
  Phase phase("attention copies (bwd)");
  // Into the layout of qkv, [B, T, 3, heads, hd]: each gradient is copied once through a
  // strided view of the result (stack then a contiguous permute moved the data twice).
  const Tensor dqkv = empty({b, t, 3, n_head, hd}, g.dq.dtype(), g.dq.device());
  const Tensor* parts[] = {&g.dq, &g.dk, &g.dv};
  for (std::int64_t i = 0; i < 3; ++i) dqkv.select(2, i).permute({0, 2, 1, 3}).copy_(*parts[i]);
  return dqkv.view({b, t, 3 * n_head * hd});
}

}  // namespace ferrite::gpt
