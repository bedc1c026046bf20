// Gradient check of every hand-written backward pass against central finite differences in
// F64 on a tiny model: attention, and through the whole model each parameter (token/position
// embeddings, LayerNorms, attention and MLP projections, the tied head), differentiating a
// linear function of the logits. The loss is ferrite's fused cross-entropy, which
// accumulates in F32 (too coarse for F64 finite differences): its value and gradient,
// including the example's grad_scale / N scaling, are checked against the composed formula
// (log_softmax, gather, softmax - onehot) in F64 instead. Exits 1 when anything disagrees.
// Run as a test (examples/CMakeLists.txt).
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "examples/gpt/attention.hpp"
#include "examples/gpt/data.hpp"
#include "examples/gpt/loss.hpp"
#include "examples/gpt/model.hpp"

using namespace ferrite;
using namespace ferrite::gpt;

namespace {

// Central differences: truncation error ~ h², rounding noise ~ eps·|f| / h; 1e-5 balances them
// for these functions (worst 3e-7 against the 1e-5 limit; 1e-6 gave 6e-6).
constexpr double kStep = 1e-5;
int failures = 0;

Tensor random_f64(Shape shape, SplitMix64& rng, double scale = 1.0) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (double& v : values) v = (static_cast<double>(rng.next() >> 11) * 0x1.0p-53 * 2.0 - 1.0) * scale;
  return from_vector(values, std::move(shape));
}

// Compares analytic[i] with (f(x + h e_i) - f(x - h e_i)) / 2h at `count` positions of x.
void check(const char* what, const Tensor& x, const Tensor& analytic, const std::function<double()>& f,
           SplitMix64& rng, int count = 6) {
  const Tensor flat = x.view({-1});
  const std::vector<double> grad = analytic.contiguous().to_vector<double>();
  double worst = 0;
  for (int n = 0; n < count; ++n) {
    const std::int64_t i = static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(x.numel()));
    const Tensor element = flat.select(0, i);
    const double original = element.item<double>();
    element.fill_(original + kStep);
    const double up = f();
    element.fill_(original - kStep);
    const double down = f();
    element.fill_(original);
    const double numeric = (up - down) / (2 * kStep);
    const double a = grad[static_cast<std::size_t>(i)];
    const double error = std::abs(a - numeric) / std::max(1e-4, std::abs(a) + std::abs(numeric));
    worst = std::max(worst, error);
  }
  const bool ok = worst < 1e-5;
  if (!ok) ++failures;
  std::printf("%-28s %-4s worst relative error %.2e over %d elements\n", what, ok ? "ok" : "FAIL", worst, count);
}

double l2(const Tensor& x) { return std::sqrt(sum(x * x).item<double>()); }

// |actual - expected| <= tolerance * scale, for checks against a formula rather than a
// finite difference.
void compare(const char* what, double actual, double expected, double scale, double tolerance) {
  const double error = std::abs(actual - expected) / std::max(scale, 1e-300);
  const bool ok = error <= tolerance;
  if (!ok) ++failures;
  std::printf("%-28s %-4s relative error %.2e (limit %.0e)\n", what, ok ? "ok" : "FAIL", error, tolerance);
}

}  // namespace

int main() {
  SplitMix64 rng{7};
  const ModelConfig config{.vocab = 256, .context = 6, .n_layer = 2, .n_head = 2, .n_embd = 8};
  const std::int64_t b = 2, t = 5;  // t < context: the position table's unused rows get no gradient

  // ---- loss alone: the fused op against the composed formula in F64 ----
  {
    const Tensor logits = random_f64({b * t, config.vocab}, rng, 3.0);
    std::vector<std::int64_t> target_values(static_cast<std::size_t>(b * t));
    for (auto& v : target_values) v = static_cast<std::int64_t>(rng.next() % 256);
    const Tensor targets = from_vector(target_values, {b * t});
    LossCache cache;
    const double loss = cross_entropy(logits, targets, cache).item<double>();
    const Tensor grad = cross_entropy_backward(cache, 0.5);
    const Tensor log_probs = log_softmax(logits, -1);
    const double expected = -mean(gather(log_probs, 1, targets.unsqueeze(1))).item<double>();
    const Tensor onehot = eq(arange(config.vocab, DType::I64).unsqueeze(0), targets.unsqueeze(1)).to(DType::F64);
    const Tensor expected_grad = (exp(log_probs) - onehot) * (0.5 / static_cast<double>(b * t));
    // F32 accumulation: a few units of F32 rounding, relative to the loss and the largest
    // gradient element.
    compare("cross_entropy (value)", loss, expected, std::abs(expected), 1e-6);
    compare("cross_entropy (gradient)", amax(abs(grad - expected_grad).view({-1}), {0}).item<double>(), 0.0,
            amax(abs(expected_grad).view({-1}), {0}).item<double>(), 1e-6);
  }

  // ---- attention alone: f(qkv) = sum(attention(qkv) * r) ----
  {
    const Tensor qkv = random_f64({b, t, 3 * config.n_embd}, rng);
    const Tensor r = random_f64({b, t, config.n_embd}, rng);
    AttentionCache cache;
    causal_attention(qkv, config.n_head, cache);
    const Tensor grad = causal_attention_backward(r, cache);
    check("causal_attention", qkv, grad, [&] {
      AttentionCache c;
      return sum(causal_attention(qkv, config.n_head, c) * r).item<double>();
    }, rng, 24);
  }

  // ---- the whole model, every parameter ----
  Weights weights = init_weights(config, 3, DType::F64, Device::cpu());
  // Generic values (non-zero biases, gains away from 1, larger weights) so no term vanishes.
  for (auto& [name, tensor] : weights.named()) tensor->add_(random_f64(tensor->shape(), rng, 0.3));
  std::vector<std::int64_t> idx_values(static_cast<std::size_t>(b * t));
  for (auto& v : idx_values) v = static_cast<std::int64_t>(rng.next() % 256);
  idx_values[1] = idx_values[0];  // a repeated token: the embedding gradient adds both rows
  const Tensor idx = from_vector(idx_values, {b, t});
  // f = sum(logits * r): its gradient with respect to the logits is r. r is the loss's
  // gradient at these weights for random targets (fixed from here on), so f and its
  // gradients have the loss's scale: with r of order 1, rounding in f (a sum of B * T * vocab
  // terms) would swamp the parameters' smallest gradients in the finite differences.
  std::vector<std::int64_t> target_values(idx_values.size());
  for (auto& v : target_values) v = static_cast<std::int64_t>(rng.next() % 256);
  ForwardCache cache;
  LossCache loss_cache;
  cross_entropy(forward(weights, config, idx, &cache), from_vector(target_values, {b * t}), loss_cache);
  const Tensor r = cross_entropy_backward(loss_cache, 1.0);
  Weights grads = zeros_like(weights);
  backward_from_logits(weights, config, cache, r, grads);
  const auto f = [&] { return sum(forward(weights, config, idx, nullptr) * r).item<double>(); };
  auto named_w = weights.named();
  auto named_g = grads.named();
  for (std::size_t i = 0; i < named_w.size(); ++i) {
    // The embedding tables are mostly untouched rows: check the rows the batch uses too.
    if (named_w[i].first == "wte.weight") {
      const Tensor used = named_w[i].second->select(0, idx_values[0]);
      check("wte.weight (used row)", used, named_g[i].second->select(0, idx_values[0]), f, rng, 8);
    }
    if (named_w[i].first == "wpe.weight") {
      check("wpe.weight (rows < T)", named_w[i].second->narrow(0, 0, t), named_g[i].second->narrow(0, 0, t), f,
            rng, 8);
    }
    check(named_w[i].first.c_str(), *named_w[i].second, *named_g[i].second, f, rng, 6);
  }
  // ---- dropout (--dropout): the same masks in every evaluation ----
  // The generator is reset to one state before each forward pass, so the masks (and f) are
  // fixed functions of the weights; a mask applied to the wrong gradient, or not at all,
  // shows in every parameter upstream of it.
  {
    random::Generator generator(7, Device::cpu());
    const random::RngState start = generator.state();
    auto forward_dropped = [&](ForwardCache& c) {
      generator.set_state(start);
      c.dropout = 0.25;
      c.dropout_generator = &generator;
      return forward(weights, config, idx, &c);
    };
    ForwardCache dcache;
    forward_dropped(dcache);
    Weights dgrads = zeros_like(weights);
    backward_from_logits(weights, config, dcache, r, dgrads);
    const auto fd = [&] {
      ForwardCache c;
      return sum(forward_dropped(c) * r).item<double>();
    };
    auto dnamed_g = dgrads.named();
    for (std::size_t i = 0; i < named_w.size(); ++i) {
      const std::string& name = named_w[i].first;
      if (name == "wpe.weight" || name == "h.0.attn.c_attn.weight" || name == "h.1.mlp.c_proj.bias" ||
          name == "h.0.ln_2.weight")
        check(("dropout: " + name).c_str(), *named_w[i].second, *dnamed_g[i].second, fd, rng, 6);
    }
  }
  // ---- the BF16 path (--precision bf16) against the exact one ----
  // Same weights (F32 master copies) and r: BF16 activations and BF16 weight-gradient
  // products carry about 3 significant digits, and through two blocks of these random
  // weights the gradients land within about 2e-2 of the F64 ones in norm (1e-2 typical). A
  // gradient term lost or taken from the wrong tensor on the BF16 path is an error of order
  // 1 here, which the F64 finite differences above cannot see.
  {
    Weights w32 = weights;
    for (auto& [name, tensor] : w32.named()) *tensor = tensor->to(DType::F32);
    ForwardCache c16;
    const Tensor logits16 = forward(w32, config, idx, &c16, MatmulCompute::BF16);
    Weights g16 = zeros_like(w32);
    backward_from_logits(w32, config, c16, r.to(DType::F32), g16);
    auto g16_named = g16.named();
    double worst = 0;
    std::string worst_name;
    for (std::size_t i = 0; i < named_g.size(); ++i) {
      const Tensor exact = *named_g[i].second;
      const double error = l2(g16_named[i].second->to(DType::F64) - exact) / std::max(l2(exact), 1e-300);
      if (error > worst) worst = error, worst_name = named_g[i].first;
    }
    compare(("bf16 gradients (" + worst_name + ")").c_str(), worst, 0.0, 1.0, 5e-2);
    const Tensor logits64 = forward(weights, config, idx, nullptr);
    compare("bf16 logits", l2(logits16.to(DType::F64) - logits64), 0.0, l2(logits64), 1e-2);
  }
  std::printf("%s: %d failure%s\n", failures ? "FAILED" : "passed", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
