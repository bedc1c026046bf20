// Dropout on the attention weights (AttentionOptions::dropout_p) on the CPU backend: the
// backward against F64 central differences of the forward at the same draw (the conformance
// reference checks the same formula against nn::dropout's mask; these check the formula
// itself), how the generator advances, p = 1, repeatability and the kept fraction.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

std::vector<double> values(const Tensor& t) { return t.to(DType::F64).contiguous().to_vector<double>(); }

struct Problem {
  Tensor q, k, v, grad;
};

// Grouped-query (2 query heads on 1 key/value head), Sq != Sk, Dv != D: every index of the
// dropout decision differs between the sides.
Problem problem(std::uint64_t seed) {
  random::manual_seed(seed);
  return {random::randn({1, 2, 3, 3}, DType::F64), random::randn({1, 1, 5, 3}, DType::F64),
          random::randn({1, 1, 5, 2}, DType::F64), random::randn({1, 2, 3, 2}, DType::F64)};
}

// sum(out * grad) of the forward at the generator state `state`.
double loss(const Problem& p, const nn::AttentionOptions& base, random::RngState state) {
  random::Generator g(0, Device::cpu());
  g.set_state(state);
  nn::AttentionOptions o = base;
  o.generator = &g;
  const std::vector<double> out = values(nn::scaled_dot_product_attention(p.q, p.k, p.v, o).out);
  const std::vector<double> grad = values(p.grad);
  double s = 0;
  for (std::size_t e = 0; e < out.size(); ++e) s += out[e] * grad[e];
  return s;
}

// Each element of `x` (one of p's tensors) nudged by +-h: (loss(+h) - loss(-h)) / 2h against
// the backward's gradient `analytic`.
void expect_central_differences(const Problem& p, Tensor& x, const Tensor& analytic, const nn::AttentionOptions& o,
                                random::RngState state, const char* name) {
  const double h = 1e-6;
  const std::vector<double> a = values(analytic);
  std::vector<double> base = values(x);
  for (std::size_t e = 0; e < base.size(); ++e) {
    std::vector<double> moved = base;
    moved[e] = base[e] + h;
    x = from_vector(moved, x.shape());
    const double up = loss(p, o, state);
    moved[e] = base[e] - h;
    x = from_vector(moved, x.shape());
    const double down = loss(p, o, state);
    EXPECT_NEAR(a[e], (up - down) / (2 * h), 1e-7 + 1e-6 * std::abs(a[e])) << name << " element " << e;
  }
  x = from_vector(base, x.shape());
}

TEST(AttentionDropout, BackwardMatchesCentralDifferences) {
  for (const bool causal : {false, true}) {
    Problem p = problem(3);
    nn::AttentionOptions o{.causal = causal, .dropout_p = 0.4};
    random::Generator g(99, Device::cpu());
    o.generator = &g;
    const nn::AttentionResult f = nn::scaled_dot_product_attention(p.q, p.k, p.v, o);
    o.dropout_state = f.dropout_state;
    const nn::AttentionGrads grads =
        nn::scaled_dot_product_attention_backward(p.grad, p.q, p.k, p.v, f.out, f.logsumexp, o);
    // Some weights were dropped and some kept, or the test would not test dropout.
    const nn::AttentionResult plain = nn::scaled_dot_product_attention(p.q, p.k, p.v, {.causal = causal});
    EXPECT_NE(values(f.out), values(plain.out));
    expect_central_differences(p, p.q, grads.dq, o, f.dropout_state, "dq");
    expect_central_differences(p, p.k, grads.dk, o, f.dropout_state, "dk");
    expect_central_differences(p, p.v, grads.dv, o, f.dropout_state, "dv");
  }
}

TEST(AttentionDropout, DrawsOneCallOnlyWhenDropping) {
  const Problem p = problem(4);
  random::Generator g(5, Device::cpu());
  const random::RngState start = g.state();
  const nn::AttentionResult none = nn::scaled_dot_product_attention(p.q, p.k, p.v, {.generator = &g});
  EXPECT_EQ(g.state(), start) << "dropout_p = 0 must not advance the generator";
  EXPECT_EQ(none.dropout_state, random::RngState{});
  const nn::AttentionResult dropped =
      nn::scaled_dot_product_attention(p.q, p.k, p.v, {.dropout_p = 0.5, .generator = &g});
  EXPECT_EQ(dropped.dropout_state, start);
  EXPECT_EQ(g.state().seed, start.seed);
  EXPECT_EQ(g.state().offset, start.offset + 1);
  // The logsumexp is the softmax's, before dropout.
  EXPECT_EQ(values(dropped.logsumexp), values(none.logsumexp));
}

TEST(AttentionDropout, SameDrawRepeatsAndAnotherDiffers) {
  const Problem p = problem(6);
  random::Generator g(8, Device::cpu());
  const random::RngState start = g.state();
  const auto a = nn::scaled_dot_product_attention(p.q, p.k, p.v, {.dropout_p = 0.5, .generator = &g});
  const auto b = nn::scaled_dot_product_attention(p.q, p.k, p.v, {.dropout_p = 0.5, .generator = &g});
  g.set_state(start);
  const auto again = nn::scaled_dot_product_attention(p.q, p.k, p.v, {.dropout_p = 0.5, .generator = &g});
  EXPECT_EQ(values(again.out), values(a.out));
  EXPECT_NE(values(b.out), values(a.out));
}

TEST(AttentionDropout, EveryWeightDroppedAtOne) {
  const Problem p = problem(7);
  random::Generator g(1, Device::cpu());
  nn::AttentionOptions o{.dropout_p = 1.0, .generator = &g};
  const nn::AttentionResult f = nn::scaled_dot_product_attention(p.q, p.k, p.v, o);
  for (const double x : values(f.out)) EXPECT_EQ(x, 0.0);
  o.dropout_state = f.dropout_state;
  const nn::AttentionGrads grads = nn::scaled_dot_product_attention_backward(p.grad, p.q, p.k, p.v, f.out, f.logsumexp, o);
  for (const Tensor* t : {&grads.dq, &grads.dk, &grads.dv})
    for (const double x : values(*t)) EXPECT_EQ(x, 0.0);
}

// A NaN score makes its row's out NaN with dropout too (a dropped NaN weight is NaN * 0 = NaN,
// as torch's dropout gives), and leaves the other rows finite.
TEST(AttentionDropout, NaNRowStaysNaN) {
  Problem p = problem(9);
  std::vector<double> q = values(p.q);
  q[0] = std::nan("");  // row 0 of head 0
  p.q = from_vector(q, p.q.shape());
  random::Generator g(3, Device::cpu());
  const std::vector<double> out =
      values(nn::scaled_dot_product_attention(p.q, p.k, p.v, {.dropout_p = 0.5, .generator = &g}).out);
  const std::int64_t dv = p.v.size(3);
  for (std::int64_t e = 0; e < static_cast<std::int64_t>(out.size()); ++e) {
    if (e < dv) EXPECT_TRUE(std::isnan(out[static_cast<std::size_t>(e)])) << "element " << e;
    else EXPECT_FALSE(std::isnan(out[static_cast<std::size_t>(e)])) << "element " << e;
  }
}

// With q = 0 every weight of a row is 1/Sk, and with v = 1 out is the mean of the row's dropout
// factors: 1 in expectation, 1/(1-p) times the kept fraction.
TEST(AttentionDropout, KeepsOneMinusPOfTheWeights) {
  const std::int64_t sk = 20000;
  const double p = 0.3;
  const Tensor q = zeros({1, 1, 2, 8}, DType::F64), k = random::randn({1, 1, sk, 8}, DType::F64);
  const Tensor v = ones({1, 1, sk, 1}, DType::F64);
  random::Generator g(12, Device::cpu());
  const std::vector<double> out = values(nn::scaled_dot_product_attention(q, k, v, {.dropout_p = p, .generator = &g}).out);
  // The mean of sk factors of variance p / (1 - p): standard deviation about 0.0046 here.
  for (const double x : out) EXPECT_NEAR(x, 1.0, 0.03);
  EXPECT_NE(out[0], out[1]) << "the two rows drew the same factors";
}

}  // namespace
}  // namespace ferrite
