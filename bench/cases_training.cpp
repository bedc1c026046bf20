// Benchmark cases of issue #17's training ops (targets in bench/torch_cases/training.py).
// Bytes: each input read once, each output written once; AdamW counts what PyTorch's
// fused AdamW moves (param, grad, exp_avg, exp_avg_sq read; param, exp_avg, exp_avg_sq
// written: 28 bytes per F32 parameter).
#include "bench/bench_case.hpp"
#include "ferrite/nn_training.hpp"
#include "ferrite/optim.hpp"
#include "ferrite/random.hpp"

namespace ferrite::bench {
namespace {

void training_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const bool full_size = ctx.full_size();
  const Device dev = ctx.device;

  // AdamW: 64M parameters in 100 tensors (sizes vary around 671k).
  const std::int64_t total = full_size ? (std::int64_t(1) << 26) : (std::int64_t(1) << 18);
  auto adam = std::make_shared<optim::AdamTensors>();
  std::int64_t left = total;
  for (int i = 0; i < 100; ++i) {
    const std::int64_t n = i == 99 ? left : total / 100 + (i % 2 == 0 ? total / 16384 : -total / 16384);
    left -= n;
    adam->params.push_back(*ctx.random({n}, DType::F32, 100 + i));
    adam->grads.push_back(*ctx.random({n}, DType::F32, 300 + i));
    adam->exp_avgs.push_back(zeros({n}, DType::F32, dev));
    adam->exp_avg_sqs.push_back(zeros({n}, DType::F32, dev));
  }
  ctx.keep->push_back(adam);
  const std::string total_text = "100 tensors, " + std::to_string(total) + " params";
  cases.push_back({"adamw_f32", total_text, 28.0 * static_cast<double>(total),
                   [=] { optim::adamw(*adam, 1, {.lr = 1e-3, .weight_decay = 1e-2}); }});

  // Dropout and the draws on [2^28].
  const std::int64_t n = full_size ? (std::int64_t(1) << 28) : (std::int64_t(1) << 20);
  const double nf = static_cast<double>(n);
  const std::string n_text = "[" + std::to_string(n) + "]";
  auto x = ctx.random({n}, DType::F32, 7);
  cases.push_back({"dropout_f32", n_text, 9 * nf, [=] { (void)nn::dropout(*x, 0.1); }});
  cases.push_back({"rand_f32", n_text, 4 * nf, [=] { (void)random::rand({n}, DType::F32, dev); }});
  cases.push_back({"randn_f32", n_text, 4 * nf, [=] { (void)random::randn({n}, DType::F32, dev); }});
  cases.push_back({"randn_bf16", n_text, 2 * nf, [=] { (void)random::randn({n}, DType::BF16, dev); }});

  // Cross-entropy forward + backward on [16384, 50304] BF16 logits: the logits read by
  // each pass, the gradient written.
  const std::int64_t rows = full_size ? 16384 : 64, classes = 50304;
  auto logits = ctx.hold(ctx.random({rows, classes}, DType::F32, 9)->to(DType::BF16));
  auto targets = ctx.hold(random::randint(0, classes, {rows}, DType::I64, dev));
  auto grad = ctx.hold(full({}, 1.0, DType::F32, dev));
  const double rc = static_cast<double>(rows) * static_cast<double>(classes);
  cases.push_back({"cross_entropy_bf16", "[" + std::to_string(rows) + ", 50304]", 6 * rc, [=] {
                     const auto fwd = nn::cross_entropy_forward(*logits, *targets);
                     (void)nn::cross_entropy_backward(*grad, *logits, *targets, fwd);
                   }});
}

FERRITE_BENCH_CASES("training", training_cases);

}  // namespace
}  // namespace ferrite::bench
