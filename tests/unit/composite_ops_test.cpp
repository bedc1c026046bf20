// stack, mm, max/min with indices, and reductions over a list of dims, against torch's
// documented results.
#include <gtest/gtest.h>

#include <limits>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

using conformance::expect_error;

TEST(Stack, JoinsAlongANewDim) {
  const Tensor a = tensor({1.f, 2.f}), b = tensor({3.f, 4.f});
  const Tensor s0 = stack({a, b});
  EXPECT_EQ(s0.shape(), (Shape{2, 2}));
  EXPECT_EQ(s0.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  const Tensor s1 = stack({a, b}, 1);
  EXPECT_EQ(s1.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(stack({a, b}, -1).to_vector<float>(), s1.to_vector<float>());
  EXPECT_EQ(stack({full({}, 5, DType::I64)}).shape(), Shape{1});
  EXPECT_EQ(stack({zeros({0, 3}), zeros({0, 3})}, 1).shape(), (Shape{0, 2, 3}));
  EXPECT_EQ(expect_error([] { stack({}); }, ErrorKind::InvalidArgument, "stack: expects a non-empty list"), "");
  EXPECT_EQ(expect_error([&] { stack({a, zeros({3})}); }, ErrorKind::ShapeMismatch,
                         "stack: expects each tensor to be equal size, but got [2] F32 cpu at entry 0 and [3] F32 cpu at entry 1"),
            "");
  EXPECT_EQ(expect_error([&] { stack({a, b}, 2); }, ErrorKind::IndexOutOfRange, "stack: dim 2 is out of range [-2, 1]"), "");
  EXPECT_EQ(expect_error([&] { stack({a, a.to(DType::F64)}); }, ErrorKind::DTypeMismatch, "cat"), "");
}

TEST(Mm, TwoDimensionalOnly) {
  const Tensor a = tensor({{1.f, 2.f}, {3.f, 4.f}}), b = tensor({{5.f}, {6.f}});
  const Tensor c = mm(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 1}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{17, 39}));
  EXPECT_EQ(expect_error([&] { mm(a, tensor({1.f, 2.f})); }, ErrorKind::InvalidArgument,
                         "mm: operands must be matrices (2-D), got [2, 2] F32 cpu and [2] F32 cpu"),
            "");
}

TEST(MaxMinAlongDim, ValuesAndFirstIndices) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = tensor({{1.f, 5.f, 5.f}, {nan, 0.f, 9.f}, {-1.f, -2.f, -1.f}});
  const auto [values, indices] = max(x, 1);
  const auto v = values.to_vector<float>();
  EXPECT_EQ(v[0], 5.f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], -1.f);
  EXPECT_EQ(indices.dtype(), DType::I64);
  EXPECT_EQ(indices.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0, 0}));
  const auto [lo, at] = min(x, 0, true);
  EXPECT_EQ(lo.shape(), (Shape{1, 3}));
  EXPECT_EQ(at.shape(), (Shape{1, 3}));
  EXPECT_EQ(at.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 2, 2}));
  EXPECT_EQ(expect_error([] { max(zeros({2, 0}), 1); }, ErrorKind::InvalidArgument, "amax"), "");
}

TEST(ReduceDims, SumMeanOverSeveralDims) {
  const Tensor x = arange(24).reshape({2, 3, 4});  // I64
  const Tensor s = sum(x, {0, 2});
  EXPECT_EQ(s.shape(), Shape{3});
  // dim 1 = j: sum over i, k of 12 i + 4 j + k = 2*4*4j + 4*12 + 2*6 = 32 j + 60.
  EXPECT_EQ(s.to_vector<std::int64_t>(), (std::vector<std::int64_t>{60, 92, 124}));
  EXPECT_EQ(sum(x, {2, 0}, true).shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(sum(x, {-1, -3}).to_vector<std::int64_t>(), s.to_vector<std::int64_t>());
  EXPECT_EQ(sum(x, {1, 2}).to_vector<std::int64_t>(), (std::vector<std::int64_t>{66, 210}));  // trailing: no copy
  EXPECT_EQ(sum(x, std::vector<std::int64_t>{}).dim(), 0);                                   // [] reduces all
  EXPECT_EQ(sum(x, std::vector<std::int64_t>{}).item<std::int64_t>(), 276);
  const Tensor f = x.to(DType::F32);
  EXPECT_EQ(mean(f, {0, 1}).to_vector<float>(), (std::vector<float>{10, 11, 12, 13}));
  EXPECT_EQ(amax(f, {0, 2}).to_vector<float>(), (std::vector<float>{15, 19, 23}));
  EXPECT_EQ(amin(f, {0, 2}, true).to_vector<float>(), (std::vector<float>{0, 4, 8}));
  const Tensor b = x > 10;
  EXPECT_EQ(any(b, {0, 2}).to_vector<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(all(b, {1, 2}).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(sum(zeros({2, 0, 3}), {1}).to_vector<float>(), std::vector<float>(6, 0.f));
  EXPECT_EQ(sum(full({}, 2.5), {0}).item<float>(), 2.5f);
  EXPECT_EQ(expect_error([&] { sum(x, {1, -2}); }, ErrorKind::InvalidArgument,
                         "sum: dim 1 appears multiple times in the list of dims"),
            "");
  EXPECT_EQ(expect_error([&] { sum(x, {3}); }, ErrorKind::IndexOutOfRange, "sum: dim 3"), "");
}

}  // namespace
}  // namespace ferrite
