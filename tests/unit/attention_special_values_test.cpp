// Scaled dot-product attention on the CPU with NaN among the scores: PyTorch's softmax makes the
// row NaN (its max and sum are NaN), and so must the online softmax here. The CPU kernel once
// skipped NaN scores in its running max (std::max keeps the first argument) and then took the
// row's NaN sum for a fully masked row: out 0 and logsumexp -inf, where PyTorch gives NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Inputs {
  Tensor q, k, v, grad;
};

Inputs inputs(DType dtype) {
  random::manual_seed(11);
  return {random::randn({1, 2, 3, 4}, DType::F64).to(dtype), random::randn({1, 2, 5, 4}, DType::F64).to(dtype),
          random::randn({1, 2, 5, 4}, DType::F64).to(dtype), random::randn({1, 2, 3, 4}, DType::F64).to(dtype)};
}

std::vector<double> values(const Tensor& t) { return t.to(DType::F64).contiguous().to_vector<double>(); }

// Elements [begin, end) of t's row-major values are all NaN.
void expect_nan(const Tensor& t, std::int64_t begin, std::int64_t end) {
  const std::vector<double> v = values(t);
  for (std::int64_t e = begin; e < end; ++e) EXPECT_TRUE(std::isnan(v[static_cast<std::size_t>(e)])) << "element " << e;
}

// Elements [begin, end) of a and b are equal (bit for bit as doubles; none NaN).
void expect_same(const Tensor& a, const Tensor& b, std::int64_t begin, std::int64_t end) {
  const std::vector<double> va = values(a), vb = values(b);
  for (std::int64_t e = begin; e < end; ++e)
    EXPECT_EQ(va[static_cast<std::size_t>(e)], vb[static_cast<std::size_t>(e)]) << "element " << e;
}

class AttentionNaN : public ::testing::TestWithParam<DType> {};

TEST_P(AttentionNaN, NaNQueryMakesItsRowNaNAndLeavesTheOthers) {
  const DType dtype = GetParam();
  const Inputs in = inputs(dtype);
  const Tensor q = in.q.clone();
  q.select(1, 0).select(1, 0).copy_(full({1, 4}, kNaN, dtype));  // head 0, query 0
  const auto clean = nn::scaled_dot_product_attention(in.q, in.k, in.v);
  const auto f = nn::scaled_dot_product_attention(q, in.k, in.v);
  expect_nan(f.out, 0, 4);  // [0, 0, 0, :]
  expect_nan(f.logsumexp, 0, 1);
  expect_same(f.out, clean.out, 4, f.out.numel());  // other rows: no NaN reaches them
  expect_same(f.logsumexp, clean.logsumexp, 1, f.logsumexp.numel());
  // Backward: the NaN row's probabilities are NaN, so dq of that row and every dk, dv of head
  // 0 are NaN (as PyTorch's autograd through softmax gives); head 1 is untouched.
  const auto g = nn::scaled_dot_product_attention_backward(in.grad, q, in.k, in.v, f.out, f.logsumexp);
  const auto g_clean = nn::scaled_dot_product_attention_backward(in.grad, in.q, in.k, in.v, clean.out, clean.logsumexp);
  expect_nan(g.dq, 0, 4);
  expect_same(g.dq, g_clean.dq, 4, g.dq.numel());
  expect_nan(g.dk, 0, 20);
  expect_nan(g.dv, 0, 20);
  expect_same(g.dk, g_clean.dk, 20, 40);
  expect_same(g.dv, g_clean.dv, 20, 40);
}

TEST_P(AttentionNaN, NaNKeyOrMaskMakesEveryRowThatSeesItNaN) {
  const DType dtype = GetParam();
  const Inputs in = inputs(dtype);
  const Tensor k = in.k.clone();
  k.select(1, 1).select(1, 4).copy_(full({1, 4}, kNaN, dtype));  // head 1, the last key
  const auto f = nn::scaled_dot_product_attention(in.q, k, in.v);
  const auto clean = nn::scaled_dot_product_attention(in.q, in.k, in.v);
  expect_same(f.out, clean.out, 0, 12);  // head 0
  expect_nan(f.out, 12, 24);             // head 1: every query sees the last key
  expect_nan(f.logsumexp, 3, 6);
  // Causal: the last key (index 4) is hidden from queries 0..2 (top-left aligned), so the NaN
  // score is masked away before the softmax, as PyTorch's masked_fill(-inf) does.
  const auto causal = nn::scaled_dot_product_attention(in.q, k, in.v, {.causal = true});
  const auto causal_clean = nn::scaled_dot_product_attention(in.q, in.k, in.v, {.causal = true});
  expect_same(causal.out, causal_clean.out, 0, 24);
  // An additive mask with a NaN: that row only.
  std::vector<double> m(15, 0.0);
  m[5 + 2] = kNaN;  // query 1, key 2
  const Tensor mask = from_vector(m, {3, 5}).to(dtype);
  const auto masked = nn::scaled_dot_product_attention(in.q, in.k, in.v, {.mask = mask});
  expect_nan(masked.out, 4, 8);   // head 0, query 1
  expect_nan(masked.out, 16, 20);  // head 1, query 1
  expect_same(masked.out, clean.out, 0, 4);
  expect_same(masked.out, clean.out, 8, 16);
}

TEST_P(AttentionNaN, FullyMaskedRowsStillGiveZeroAndMinusInfinity) {
  const DType dtype = GetParam();
  const Inputs in = inputs(dtype);
  std::vector<bool> m(15, true);
  for (std::size_t j = 0; j < 5; ++j) m[5 + j] = false;  // query 1 sees nothing
  const Tensor mask = from_vector(m, {3, 5});
  const auto f = nn::scaled_dot_product_attention(in.q, in.k, in.v, {.mask = mask});
  const std::vector<double> out = values(f.out), lse = values(f.logsumexp);
  for (std::size_t c = 4; c < 8; ++c) EXPECT_EQ(out[c], 0.0);
  EXPECT_EQ(lse[1], -std::numeric_limits<double>::infinity());
  const auto g = nn::scaled_dot_product_attention_backward(in.grad, in.q, in.k, in.v, f.out, f.logsumexp, {.mask = mask});
  const std::vector<double> dq = values(g.dq);
  for (std::size_t c = 4; c < 8; ++c) EXPECT_EQ(dq[c], 0.0);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AttentionNaN, ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16),
                         [](const ::testing::TestParamInfo<DType>& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace ferrite
