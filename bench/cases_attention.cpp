// Benchmark cases of scaled dot-product attention (ferrite/nn.hpp), twins of
// bench/torch_cases/attention.py. FLOPs are counted as PyTorch's flop counter does: 4·B·H·Sq·Sk·D
// for the forward (two products), 2.5× that for forward + backward counted as backward only
// (five products: 10·B·H·Sq·Sk·D), halved under causal.
// The prefill shape is B=1, H=16, S=2048, D=128 rather than the B=8, S=4096 (32× less
// work): the own kernels are far from the tensor-core rate and a full-size run of every case
// would not fit the shared GPU time; the ratio against PyTorch is what the table reports.
#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

double attention_flops(double b, double h, double sq, double sk, double d, bool causal, double products) {
  return 2.0 * products * b * h * sq * sk * d / (causal ? 2.0 : 1.0);
}

void attention_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const bool full = ctx.full_size();
  const std::int64_t b = 1, h = full ? 16 : 2, s = full ? 2048 : 64, d = 128;
  const std::string shape = "B=" + std::to_string(b) + " H=" + std::to_string(h) + " S=" + std::to_string(s) +
                            " D=" + std::to_string(d);
  for (DType dtype : {DType::BF16, DType::F16, DType::F32}) {
    const std::string suffix = dtype == DType::BF16 ? "bf16" : dtype == DType::F16 ? "f16" : "f32";
    auto q = ctx.random({b, h, s, d}, dtype, 31), k = ctx.random({b, h, s, d}, dtype, 32);
    auto v = ctx.random({b, h, s, d}, dtype, 33), go = ctx.random({b, h, s, d}, dtype, 34);
    for (bool causal : {false, true}) {
      const std::string name = "sdpa_" + suffix + (causal ? "_causal" : "");
      const nn::AttentionOptions o{.causal = causal};
      cases.push_back({name + "_fwd", shape, 0, [=] { (void)nn::scaled_dot_product_attention(*q, *k, *v, o); }, false,
                       attention_flops(b, h, s, s, d, causal, 2)});
      if (dtype == DType::F32) continue;  // F32: forward only
      auto fwd = std::make_shared<nn::AttentionResult>(nn::scaled_dot_product_attention(*q, *k, *v, o));
      ctx.keep->push_back(fwd);
      cases.push_back({name + "_bwd", shape, 0,
                       [=] { (void)nn::scaled_dot_product_attention_backward(*go, *q, *k, *v, fwd->out, fwd->logsumexp, o); },
                       false, attention_flops(b, h, s, s, d, causal, 5)});
    }
  }
  // Decoding: one new query against a KV cache, grouped-query heads 32/8.
  const std::int64_t db = full ? 64 : 2, dk = full ? 8192 : 128;
  auto q = ctx.random({db, 32, 1, d}, DType::BF16, 35);
  auto k = ctx.random({db, 8, dk, d}, DType::BF16, 36), v = ctx.random({db, 8, dk, d}, DType::BF16, 37);
  cases.push_back({"sdpa_decode_bf16_gqa", "B=" + std::to_string(db) + " Hq=32 Hkv=8 Sq=1 Sk=" + std::to_string(dk), 0,
                   [=] { (void)nn::scaled_dot_product_attention(*q, *k, *v); }, false,
                   attention_flops(db, 32, 1, dk, d, false, 2)});
}

FERRITE_BENCH_CASES("attention", attention_cases);

}  // namespace
}  // namespace ferrite::bench
