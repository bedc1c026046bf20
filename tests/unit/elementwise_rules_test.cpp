// The documented edge rules of the elementwise family (docs/families/elementwise.md), one
// readable example each, on the CPU backend. The conformance entries check the same rules
// on random and extreme inputs on every backend; these say what the rules are.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

template <class T>
Tensor vec(std::vector<T> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return from_vector(std::move(v), {n});
}

TEST(ElementwiseRules, IntegerDivisionFollowsPythonAndNeverTraps) {
  const Tensor a = vec<std::int32_t>({7, -7, 7, -7, 5, std::numeric_limits<std::int32_t>::min()});
  const Tensor b = vec<std::int32_t>({2, 2, -2, -2, 0, -1});
  EXPECT_EQ(floor_divide(a, b).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{3, -4, -4, 3, 0, std::numeric_limits<std::int32_t>::min()}));
  EXPECT_EQ(remainder(a, b).to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 1, -1, -1, 0, 0}));
}

TEST(ElementwiseRules, ShiftCountsOutOfRange) {
  const Tensor a = vec<std::int64_t>({-8, -8, 8, 1, 1});
  const Tensor n = vec<std::int64_t>({1, 64, 64, 63, -1});
  EXPECT_EQ(shift_right(a, n).to_vector<std::int64_t>(), (std::vector<std::int64_t>{-4, -1, 0, 0, 0}));
  EXPECT_EQ(shift_left(a, n).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-16, 0, 0, std::numeric_limits<std::int64_t>::min(), 0}));
}

TEST(ElementwiseRules, MaximumPrefersNaNAndPositiveZero) {
  const double nan = std::nan("");
  const auto mx = maximum(vec<double>({0.0, -0.0, nan, 1.0}), vec<double>({-0.0, 0.0, 1.0, nan})).to_vector<double>();
  EXPECT_FALSE(std::signbit(mx[0]));
  EXPECT_FALSE(std::signbit(mx[1]));
  EXPECT_TRUE(std::isnan(mx[2]) && std::isnan(mx[3]));
  const auto mn = minimum(vec<double>({0.0, -0.0}), vec<double>({-0.0, 0.0})).to_vector<double>();
  EXPECT_TRUE(std::signbit(mn[0]) && std::signbit(mn[1]));
}

TEST(ElementwiseRules, ActivationLimitsAtInfinity) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x = vec<double>({-inf, inf});
  for (const Tensor& y : {gelu(x), gelu(x, GeluApproximation::Tanh), silu(x), mish(x)}) {
    const auto v = y.to_vector<double>();
    EXPECT_EQ(v[0], 0.0);  // -0, the limit, rather than -Inf * 0 = NaN
    EXPECT_EQ(v[1], inf);
  }
  const Tensor g = vec<double>({2.0, 2.0});
  EXPECT_EQ(gelu_backward(g, x).to_vector<double>(), (std::vector<double>{0.0, 2.0}));
}

TEST(ElementwiseRules, PowShortcutsAndClampBounds) {
  const double nan = std::nan("");
  EXPECT_EQ(pow(vec<double>({nan}), 0.0).to_vector<double>()[0], 1.0);
  EXPECT_TRUE(std::isnan(pow(vec<double>({-std::numeric_limits<double>::infinity()}), 0.5).to_vector<double>()[0]));
  EXPECT_EQ(clamp(vec<float>({-5, 0, 5}), 2.0, -1.0).to_vector<float>(), (std::vector<float>{-1, -1, -1}));
  EXPECT_EQ(clamp(vec<float>({-5, 0, 5}), std::nullopt, 1.0).to_vector<float>(), (std::vector<float>{-5, 0, 1}));
  EXPECT_EQ(clamp_backward(vec<float>({1, 1, 1}), vec<float>({-1, 0, 1}), -1.0, 1.0).to_vector<float>(),
            (std::vector<float>{1, 1, 1}));  // both bounds inclusive
}

TEST(ElementwiseRules, MaskedFillKeepsInt64Exact) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 1;  // not a double
  const Tensor x = vec<std::int64_t>({1, 2, 3});
  const Tensor mask = vec<bool>({true, false, true});
  EXPECT_EQ(masked_fill(x, mask, big).to_vector<std::int64_t>(), (std::vector<std::int64_t>{big, 2, big}));
}

TEST(ElementwiseRules, MixedPrecisionRoundsOnceToF32) {
  // 1 + 2^-8 is exact in F32 but not in BF16: the BF16 sum would round it away.
  const Tensor one = vec<BFloat16>({BFloat16(1.0f)});
  const Tensor tiny = vec<BFloat16>({BFloat16(0.00390625f)});
  EXPECT_EQ(add(one, tiny, DType::F32).to_vector<float>()[0], 1.00390625f);
  EXPECT_EQ(static_cast<float>(add(one, tiny).to_vector<BFloat16>()[0]), 1.0f);
}

TEST(ElementwiseRules, HasInfNanReadsOneFlag) {
  EXPECT_FALSE(has_inf_nan(vec<float>({1, 2, 3})));
  EXPECT_TRUE(has_inf_nan(vec<float>({1, std::numeric_limits<float>::infinity(), 3})));
  EXPECT_TRUE(has_inf_nan(vec<Half>({Half(1.0f), Half(std::nanf(""))})));
  EXPECT_FALSE(has_inf_nan(zeros({0})));
}

}  // namespace
}  // namespace ferrite
