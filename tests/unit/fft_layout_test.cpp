// The memory layout of FFT results (src/frontend/fft.cpp, run_dense_step): as PyTorch lays
// them out, the transformed dims innermost and the batch dims outside in the input's memory
// order, returned as a view in the input's dim order; and inputs that are such views read in
// place. Values are checked bit for bit against the same transform of a contiguous copy (the
// CPU backend runs the same 1-D transforms on the same lines either way).
#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "ferrite/ferrite.hpp"

namespace {

using namespace ferrite;

Tensor complex_ramp(const Shape& shape) {
  std::vector<std::complex<float>> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = {static_cast<float>(i % 11) - 5.0f, static_cast<float>((i * 7) % 13) - 6.0f};
  return from_vector(v, shape);
}

Tensor real_ramp(const Shape& shape) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 5) % 9) - 4.0f;
  return from_vector(v, shape);
}

void expect_same_bits(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  EXPECT_EQ(actual.contiguous().to_bytes(), expected.contiguous().to_bytes());
}

TEST(FftLayout, TransformOverDimZeroIsTorchsNonContiguousResult) {
  const Tensor x = complex_ramp({5, 7});
  const Tensor y = fft::fft(x, std::nullopt, 0);
  // torch.fft.fft(x, dim=0).stride() == (1, 5): each signal contiguous.
  EXPECT_EQ(y.strides(), (Strides{1, 5}));
  expect_same_bits(y, fft::fft(x.t().contiguous(), std::nullopt, 1).t());
}

TEST(FftLayout, MiddleDimOfRankThree) {
  const Tensor x = complex_ramp({3, 4, 5});
  const Tensor y = fft::fft(x, std::nullopt, 1);
  EXPECT_EQ(y.strides(), (Strides{20, 1, 4}));  // memory order [0, 2, 1], as torch
  expect_same_bits(y, fft::fft(x.permute({0, 2, 1}).contiguous(), std::nullopt, 2).permute({0, 2, 1}));
}

TEST(FftLayout, PermutedResultIsReadInPlaceAndRoundTrips) {
  const Tensor x = complex_ramp({6, 8});
  const Tensor y = fft::fft(x, std::nullopt, 0);
  const Tensor back = fft::ifft(y, std::nullopt, 0);
  EXPECT_EQ(back.strides(), (Strides{1, 6}));
  // The same as the inverse of a contiguous copy of y.
  expect_same_bits(back, fft::ifft(y.contiguous(), std::nullopt, 0));
  const std::vector<std::complex<float>> got = back.contiguous().to_vector<std::complex<float>>();
  const std::vector<std::complex<float>> want = x.to_vector<std::complex<float>>();
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(std::abs(got[i] - want[i]), 0.0, 1e-5) << i;
}

TEST(FftLayout, TransformedDimsThatDoNotNestAreReadFromACopy) {
  // x.t() has strides {1, 8}: dim 0's stride is not a multiple of dim 1's, so a 2-D
  // transform over both cannot read it in place; the result is then contiguous.
  const Tensor x = complex_ramp({6, 8}).t();
  const Tensor y = fft::fft2(x);
  EXPECT_TRUE(y.is_contiguous());
  expect_same_bits(y, fft::fft2(x.contiguous()));
}

TEST(FftLayout, RealTransformOverDimZeroKeepsTheMovedLayout) {
  const Tensor x = real_ramp({6, 4});
  const Tensor y = fft::rfft(x, std::nullopt, 0);
  EXPECT_EQ(y.shape(), (Shape{4, 4}));
  EXPECT_EQ(y.strides(), (Strides{1, 4}));  // torch.fft.rfft(x, dim=0).stride() == (1, 4)
  expect_same_bits(y, fft::rfft(x.t().contiguous(), std::nullopt, 1).t());
  const Tensor back = fft::irfft(y, 6, 0);
  const std::vector<float> got = back.contiguous().to_vector<float>();
  const std::vector<float> want = x.to_vector<float>();
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST(FftLayout, SizeOneTransformedDimWithAnyStride) {
  // A size-1 dim's stride is arbitrary in a contiguous tensor: 0 after an expand, the
  // parent's row after a narrow. Read in place, the transform over it must not depend on it
  // (the layout handed to the backend uses the dense strides of the memory order).
  const Tensor row = complex_ramp({5});
  const Tensor expanded = row.expand({1, 5});  // strides {0, 1}
  ASSERT_TRUE(expanded.is_contiguous());
  expect_same_bits(fft::fft(expanded, std::nullopt, 0), fft::fft(expanded.contiguous().clone(), std::nullopt, 0));
  expect_same_bits(fft::fft2(expanded), fft::fft2(expanded.clone()));
  const Tensor narrowed = complex_ramp({4, 16}).narrow(0, 1, 1).narrow(1, 0, 8);  // [1, 8], strides {16, 1}
  expect_same_bits(fft::fft2(narrowed), fft::fft2(narrowed.clone()));
  expect_same_bits(fft::ifft(narrowed, std::nullopt, 0), fft::ifft(narrowed.clone(), std::nullopt, 0));
  const Tensor three = complex_ramp({3, 1, 4}).permute({2, 1, 0});  // [4, 1, 3], memory order [2, 0]
  expect_same_bits(fft::fftn(three, std::nullopt, fft::Dims{0, 1}), fft::fftn(three.contiguous(), std::nullopt, fft::Dims{0, 1}));
}

}  // namespace
