// Front-end results that used to differ from PyTorch without a documented reason: chunk of
// an empty dim, index_select of a rank-0 tensor, arange with a step that walks away from its
// end, and the sign of relu(-0).
#include <gtest/gtest.h>

#include <cmath>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

using conformance::expect_error;

TEST(TorchParity, ChunkOfAnEmptyDimGivesTheRequestedNumberOfPieces) {
  // torch.chunk(torch.zeros(0, 4), 3, 0): three [0, 4] tensors.
  const auto pieces = chunk(zeros({0, 4}), 3, 0);
  ASSERT_EQ(pieces.size(), 3u);
  for (const Tensor& p : pieces) EXPECT_EQ(p.shape(), (Shape{0, 4}));
  EXPECT_EQ(chunk(zeros({4, 0}), 2, 1).size(), 2u);
  EXPECT_EQ(chunk(zeros({5, 4}), 3, 0).size(), 3u);  // 2, 2, 1
  EXPECT_EQ(chunk(zeros({4, 4}), 3, 0).size(), 2u);  // 2, 2: fewer than asked, as torch
}

TEST(TorchParity, IndexSelectOfRankZeroIsRankZero) {
  const Tensor x = full({}, 7.0);
  const Tensor y = index_select(x, 0, from_vector<std::int64_t>({0}, {1}));
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_EQ(y.item<float>(), 7.0f);
  EXPECT_EQ(index_select(x, -1, full({}, 0, DType::I32)).shape(), Shape{});
  EXPECT_EQ(expect_error([&] { (void)index_select(x, 0, from_vector<std::int64_t>({0, 0}, {2})); },
                         ErrorKind::IndexOutOfRange, "index_select: an index into rank-0 input [] F32 cpu must have exactly 1"),
            "");
  EXPECT_EQ(expect_error([&] { (void)index_select(x, 0, from_vector<std::int64_t>({1}, {1})); },
                         ErrorKind::IndexOutOfRange, "index_select: index 1 is out of range"), "");
}

TEST(TorchParity, ArangeRefusesAStepAwayFromTheEnd) {
  EXPECT_EQ(expect_error([] { (void)arange(1, 0, 1); }, ErrorKind::InvalidArgument,
                         "arange: start 1, end 0, step 1: upper bound and lower bound inconsistent with step sign"), "");
  EXPECT_EQ(expect_error([] { (void)arange(0, 1, -1); }, ErrorKind::InvalidArgument,
                         "upper bound and lower bound inconsistent with step sign"), "");
  EXPECT_EQ(arange(1, 1, 1).numel(), 0);  // an empty interval is fine either way
  EXPECT_EQ(arange(1, 1, -1).numel(), 0);
  EXPECT_EQ(arange(3, 0, -1).to_vector<float>(), (std::vector<float>{3, 2, 1}));
  EXPECT_EQ(arange(0).numel(), 0);
}

TEST(TorchParity, ReluOfNegativeZeroIsPositiveZero) {
  for (DType d : kFloatDTypes) {
    const Tensor y = relu(from_vector<float>({-0.0f, 0.0f, -1.0f, 2.0f, NAN}, {5}).to(d)).to(DType::F32);
    const auto v = y.to_vector<float>();
    EXPECT_FALSE(std::signbit(v[0])) << dtype_name(d);
    EXPECT_FALSE(std::signbit(v[1])) << dtype_name(d);
    EXPECT_FALSE(std::signbit(v[2])) << dtype_name(d);
    EXPECT_EQ(v[3], 2.0f);
    EXPECT_TRUE(std::isnan(v[4]));
  }
  // The mixed-precision form (F16/BF16 in, F32 out) shares the functor.
  EXPECT_FALSE(std::signbit(relu(from_vector<float>({-0.0f}, {1}).to(DType::BF16), DType::F32).item<float>()));
}

}  // namespace
}  // namespace ferrite
