// Benchmark cases of scaled dot-product attention (ferrite/nn.hpp), twins of
// bench/torch_cases/attention.py. FLOPs are counted as PyTorch's flop counter does: 4·B·H·Sq·Sk·D
// for the forward (two products), 2.5× that for forward + backward counted as backward only
// (five products: 10·B·H·Sq·Sk·D), halved under causal.
// F16/BF16 run the shape B=8, H=16, S=4096, D=128 (cuDNN's fused SDPA takes them, see
// src/cuda/attention/), plus D = 64, D = 256 and S = 16384 (B=1, H=32) in BF16. F32 stays
// on the own kernels (forward and backward), far from the tensor-core rate: its shape is B=1,
// H=16, S=2048 (32x less work) so a full run fits the shared GPU time; the ratio against
// PyTorch is what the table reports.
#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

double attention_flops(double b, double h, double sq, double sk, double d, bool causal, double products) {
  return 2.0 * products * b * h * sq * sk * d / (causal ? 2.0 : 1.0);
}

std::string suffix_of(DType dtype) { return dtype == DType::BF16 ? "bf16" : dtype == DType::F16 ? "f16" : "f32"; }

// One self-attention problem: q [b, hq, s, d], k and v [b, hkv, s, d] (hkv = 0: hq, plain
// multi-head attention; fewer: grouped-query).
struct Problem {
  std::string name;
  DType dtype = DType::BF16;
  std::int64_t b = 1, hq = 1, hkv = 0, s = 1, d = 128;
  bool causal = false;
  unsigned seed = 0;
  bool forward_only = false;
  // Also `name`_nondet_bwd, the backward with AttentionOptions::deterministic = false (cuDNN's
  // atomic dq, as PyTorch's default), and `name`_det_bwd, ferrite's default (deterministic)
  // backward again, whose PyTorch twin runs under torch.use_deterministic_algorithms(True): the
  // like-for-like pair of deterministic backwards.
  bool nondeterministic_too = false;
};

// `name`_fwd and (unless forward_only) `name`_bwd of `pr`, and the backward's variants above.
// Grouped-query backwards, causal too, run on cuDNN (since session 14; before, the causal ones
// ran on the own kernels: src/cuda/attention/cuda_attention_ops.cpp says why and why no more).
void add_problem(const BenchContext& ctx, std::vector<BenchCase>& cases, const Problem& pr) {
  const std::int64_t b = pr.b, hq = pr.hq, hkv = pr.hkv > 0 ? pr.hkv : pr.hq, s = pr.s, d = pr.d;
  const std::string heads =
      hkv == hq ? " H=" + std::to_string(hq) : " Hq=" + std::to_string(hq) + " Hkv=" + std::to_string(hkv);
  const std::string shape = "B=" + std::to_string(b) + heads + " S=" + std::to_string(s) + " D=" + std::to_string(d);
  auto q = ctx.random({b, hq, s, d}, pr.dtype, pr.seed), k = ctx.random({b, hkv, s, d}, pr.dtype, pr.seed + 1);
  auto v = ctx.random({b, hkv, s, d}, pr.dtype, pr.seed + 2), go = ctx.random({b, hq, s, d}, pr.dtype, pr.seed + 3);
  const nn::AttentionOptions o{.causal = pr.causal};
  const double forward_flops = attention_flops(b, hq, s, s, d, pr.causal, 2);
  const double backward_flops = attention_flops(b, hq, s, s, d, pr.causal, 5);
  cases.push_back({pr.name + "_fwd", shape, 0, [=] { (void)nn::scaled_dot_product_attention(*q, *k, *v, o); }, false,
                   forward_flops});
  if (pr.forward_only) return;
  auto fwd = std::make_shared<nn::AttentionResult>(nn::scaled_dot_product_attention(*q, *k, *v, o));
  ctx.keep->push_back(fwd);
  auto backward = [=](const nn::AttentionOptions& options) {
    return [=] { (void)nn::scaled_dot_product_attention_backward(*go, *q, *k, *v, fwd->out, fwd->logsumexp, options); };
  };
  cases.push_back({pr.name + "_bwd", shape, 0, backward(o), false, backward_flops});
  if (!pr.nondeterministic_too) return;
  cases.push_back({pr.name + "_nondet_bwd", shape, 0, backward({.causal = pr.causal, .deterministic = false}), false,
                   backward_flops});
  cases.push_back({pr.name + "_det_bwd", shape, 0, backward(o), false, backward_flops});
}

// The GPT's attention (examples/gpt/attention.cpp) at gpt2-small's shape, B=16, H=12, T=1024,
// D=64, BF16 causal: q, k, v permuted views of one [B, T, 3, H, D] projection and grad_out a
// view of [B, T, H, D] (`name`_views_*, read in place by cuDNN), and the same values made
// contiguous once (`name`_dense_*): the pair shows what the views cost or save.
void add_projection_views(const BenchContext& ctx, std::vector<BenchCase>& cases, const std::string& name,
                          std::int64_t b, std::int64_t h, std::int64_t t, std::int64_t d, unsigned seed) {
  const std::string shape = "B=" + std::to_string(b) + " H=" + std::to_string(h) + " T=" + std::to_string(t) +
                            " D=" + std::to_string(d) + " causal";
  const auto qkv = ctx.random({b, t, 3, h, d}, DType::BF16, seed);
  const auto dy = ctx.random({b, t, h, d}, DType::BF16, seed + 1);
  const Tensor heads = qkv->permute({2, 0, 3, 1, 4});
  const nn::AttentionOptions o{.causal = true};
  for (const bool views : {true, false}) {
    auto view = [&](const Tensor& x) { return std::make_shared<Tensor>(views ? x : x.contiguous()); };
    auto q = view(heads.select(0, 0)), k = view(heads.select(0, 1)), v = view(heads.select(0, 2));
    auto go = view(dy->permute({0, 2, 1, 3}));
    ctx.keep->insert(ctx.keep->end(), {q, k, v, go});
    const std::string case_name = name + (views ? "_views" : "_dense");
    cases.push_back({case_name + "_fwd", shape, 0, [=] { (void)nn::scaled_dot_product_attention(*q, *k, *v, o); },
                     false, attention_flops(b, h, t, t, d, true, 2)});
    auto fwd = std::make_shared<nn::AttentionResult>(nn::scaled_dot_product_attention(*q, *k, *v, o));
    ctx.keep->push_back(fwd);
    cases.push_back({case_name + "_bwd", shape, 0,
                     [=] { (void)nn::scaled_dot_product_attention_backward(*go, *q, *k, *v, fwd->out, fwd->logsumexp, o); },
                     false, attention_flops(b, h, t, t, d, true, 5)});
  }
}

// Masked problems: on cuDNN's SDPA with the mask as its bias (cuda_attention_ops.cpp, forward
// and backward since session 14); with FERRITE_ATTENTION_CUDNN_MASKS=off
// on the F16/BF16 tensor-core kernels (attention_half_mma_fwd.cu, attention_half_mma_bwd.cu;
// FERRITE_ATTENTION_HALF_FWD=simt: the general SIMT forward). `name`_keypad_fwd: a Bool
// key-padding mask [B, 1, 1, S], batch b attending to its first S - b S / 16 keys, and
// `name`_keypad_bwd its (deterministic) backward; `name`_addmask_fwd: an additive mask
// [1, 1, S, S] in the dtype (a relative-position bias, -0.01 |i - j|, shared by every batch and
// head). FLOPs as PyTorch counts them: the full 4·B·H·S²·D forward, 10·B·H·S²·D backward,
// whatever the mask hides.
void add_masked_forwards(const BenchContext& ctx, std::vector<BenchCase>& cases, const std::string& name,
                         std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d, unsigned seed) {
  const std::string shape = "B=" + std::to_string(b) + " H=" + std::to_string(h) + " S=" + std::to_string(s) +
                            " D=" + std::to_string(d);
  auto q = ctx.random({b, h, s, d}, DType::BF16, seed), k = ctx.random({b, h, s, d}, DType::BF16, seed + 1);
  auto v = ctx.random({b, h, s, d}, DType::BF16, seed + 2), go = ctx.random({b, h, s, d}, DType::BF16, seed + 3);
  std::vector<bool> keep(static_cast<std::size_t>(b * s));
  for (std::int64_t i = 0; i < b; ++i)
    for (std::int64_t j = 0; j < s; ++j) keep[static_cast<std::size_t>(i * s + j)] = j < s - i * s / 16;
  auto pad = ctx.hold(from_vector(keep, {b, 1, 1, s}).to(ctx.device));
  std::vector<float> bias(static_cast<std::size_t>(s * s));
  for (std::int64_t i = 0; i < s; ++i)
    for (std::int64_t j = 0; j < s; ++j)
      bias[static_cast<std::size_t>(i * s + j)] = -0.01f * static_cast<float>(i > j ? i - j : j - i);
  auto add = ctx.hold(from_vector(bias, {1, 1, s, s}).to(DType::BF16).to(ctx.device));
  cases.push_back({name + "_keypad_fwd", shape + " bool [B,1,1,S]", 0,
                   [=] { (void)nn::scaled_dot_product_attention(*q, *k, *v, {.mask = *pad}); }, false,
                   attention_flops(b, h, s, s, d, false, 2)});
  const nn::AttentionOptions padded{.mask = *pad};
  auto fwd = std::make_shared<nn::AttentionResult>(nn::scaled_dot_product_attention(*q, *k, *v, padded));
  ctx.keep->push_back(fwd);
  cases.push_back({name + "_keypad_bwd", shape + " bool [B,1,1,S]", 0,
                   [=] {
                     (void)nn::scaled_dot_product_attention_backward(*go, *q, *k, *v, fwd->out, fwd->logsumexp, padded);
                   },
                   false, attention_flops(b, h, s, s, d, false, 5)});
  cases.push_back({name + "_addmask_fwd", shape + " additive [1,1,S,S]", 0,
                   [=] { (void)nn::scaled_dot_product_attention(*q, *k, *v, {.mask = *add}); }, false,
                   attention_flops(b, h, s, s, d, false, 2)});
}

// Dropout on the weights (dropout_p 0.1, the default generator): cuDNN's SDPA does not take it
// (its dropout stream is not ferrite's), so F16/BF16 at D = 64 and 128 run the own tensor-core
// kernels (attention_half_mma_fwd.cu, attention_half_mma_bwd.cu, one Philox group a lane per four
// weights: attention_dropout_lanes.hpp). `name`_dropout_fwd draws anew each call;
// `name`_dropout_bwd replays one forward's draw. FLOPs as the undropped problem's.
void add_dropout(const BenchContext& ctx, std::vector<BenchCase>& cases, const std::string& name, std::int64_t b,
                 std::int64_t h, std::int64_t s, std::int64_t d, bool causal, unsigned seed) {
  const std::string shape = "B=" + std::to_string(b) + " H=" + std::to_string(h) + " S=" + std::to_string(s) +
                            " D=" + std::to_string(d) + (causal ? " causal" : "") + " dropout 0.1";
  auto q = ctx.random({b, h, s, d}, DType::BF16, seed), k = ctx.random({b, h, s, d}, DType::BF16, seed + 1);
  auto v = ctx.random({b, h, s, d}, DType::BF16, seed + 2), go = ctx.random({b, h, s, d}, DType::BF16, seed + 3);
  const nn::AttentionOptions o{.causal = causal, .dropout_p = 0.1};
  cases.push_back({name + "_fwd", shape, 0, [=] { (void)nn::scaled_dot_product_attention(*q, *k, *v, o); }, false,
                   attention_flops(b, h, s, s, d, causal, 2)});
  auto fwd = std::make_shared<nn::AttentionResult>(nn::scaled_dot_product_attention(*q, *k, *v, o));
  ctx.keep->push_back(fwd);
  nn::AttentionOptions replay = o;
  replay.dropout_state = fwd->dropout_state;
  cases.push_back({name + "_bwd", shape, 0,
                   [=] {
                     (void)nn::scaled_dot_product_attention_backward(*go, *q, *k, *v, fwd->out, fwd->logsumexp, replay);
                   },
                   false, attention_flops(b, h, s, s, d, causal, 5)});
}

void attention_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const bool full = ctx.full_size();
  for (DType dtype : {DType::BF16, DType::F16, DType::F32}) {
    const bool half = dtype != DType::F32;
    const std::int64_t b = full && half ? 8 : 1, h = full ? 16 : 2, s = full ? (half ? 4096 : 2048) : 64;
    for (bool causal : {false, true})
      add_problem(ctx, cases,
                  {.name = "sdpa_" + suffix_of(dtype) + (causal ? "_causal" : ""), .dtype = dtype, .b = b, .hq = h,
                   .s = s, .causal = causal, .seed = 31, .nondeterministic_too = half});
  }
  const std::int64_t b = full ? 8 : 1, h = full ? 16 : 2, s = full ? 4096 : 64;
  add_problem(ctx, cases, {.name = "sdpa_bf16_d64", .b = b, .hq = h, .s = s, .d = 64, .seed = 41,
                           .nondeterministic_too = true});
  add_problem(ctx, cases, {.name = "sdpa_bf16_d256", .b = b, .hq = h, .s = s, .d = 256, .seed = 45,
                           .nondeterministic_too = true});
  // At S = 16384 cuDNN's deterministic backward would keep an S x S dP for all 32 heads (16 GiB):
  // it runs in blocks of heads whose dP fits the work-area bound (cudnn_sdpa.cpp, work_area_bound;
  // 8 blocks of 4 heads at 2.5x the operands), so this row times the blocked backward.
  add_problem(ctx, cases, {.name = "sdpa_bf16_s16k_causal", .b = 1, .hq = full ? 32 : 2, .s = full ? 16384 : 64,
                           .causal = true, .seed = 49});
  add_problem(ctx, cases, {.name = "sdpa_bf16_gqa_causal", .b = full ? 4 : 1, .hq = full ? 32 : 4,
                           .hkv = full ? 8 : 1, .s = full ? 4096 : 64, .causal = true, .seed = 57});
  add_projection_views(ctx, cases, "sdpa_bf16_gpt2_qkv", full ? 16 : 1, full ? 12 : 2, full ? 1024 : 64, 64, 53);
  add_masked_forwards(ctx, cases, "sdpa_bf16", full ? 8 : 1, full ? 16 : 2, full ? 4096 : 64, 128, 61);
  add_dropout(ctx, cases, "sdpa_bf16_dropout", full ? 8 : 1, full ? 16 : 2, full ? 4096 : 64, 128, false, 65);
  add_dropout(ctx, cases, "sdpa_bf16_causal_dropout", full ? 8 : 1, full ? 16 : 2, full ? 4096 : 64, 128, true, 69);
  // Decoding: one new query against a KV cache, grouped-query heads 32/8.
  const std::int64_t db = full ? 64 : 2, dk = full ? 8192 : 128, d = 128;
  auto q = ctx.random({db, 32, 1, d}, DType::BF16, 35);
  auto k = ctx.random({db, 8, dk, d}, DType::BF16, 36), v = ctx.random({db, 8, dk, d}, DType::BF16, 37);
  cases.push_back({"sdpa_decode_bf16_gqa", "B=" + std::to_string(db) + " Hq=32 Hkv=8 Sq=1 Sk=" + std::to_string(dk), 0,
                   [=] { (void)nn::scaled_dot_product_attention(*q, *k, *v); }, false,
                   attention_flops(db, 32, 1, dk, d, false, 2)});
}

FERRITE_BENCH_CASES("attention", attention_cases);

}  // namespace
}  // namespace ferrite::bench
