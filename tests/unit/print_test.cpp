// Printing (ferrite/print.hpp): exact strings of torch's repr for the same values, with
// ferrite's dtype names in the dtype= suffix.
#include <gtest/gtest.h>

#include <complex>
#include <limits>
#include <sstream>

#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Print, MatrixAsTorch) {
  std::ostringstream os;
  os << from_vector<float>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(os.str(), "tensor([[1., 2.],\n        [3., 4.]])");
}

TEST(Print, ZeroDimAndEmpty) {
  EXPECT_EQ(to_string(full({}, 1.5)), "tensor(1.5000)");
  EXPECT_EQ(to_string(full({}, 7, DType::I32)), "tensor(7, dtype=I32)");
  EXPECT_EQ(to_string(zeros({0})), "tensor([])");
  EXPECT_EQ(to_string(zeros({2, 0})), "tensor([], size=(2, 0))");
  EXPECT_EQ(to_string(zeros({0}, DType::I64)), "tensor([], dtype=I64)");
  EXPECT_EQ(to_string(Tensor()), "tensor(undefined)");
}

TEST(Print, FixedIntegerAndScientificNotation) {
  EXPECT_EQ(to_string(from_vector<float>({0.5f, 1.25f, -3}, {3})), "tensor([ 0.5000,  1.2500, -3.0000])");
  EXPECT_EQ(to_string(from_vector<float>({1e-5f, 1}, {2})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(to_string(from_vector<float>({1, 2000}, {2})), "tensor([1.0000e+00, 2.0000e+03])");
  EXPECT_EQ(to_string(from_vector<double>({1.5, 2}, {2})), "tensor([1.5000, 2.0000], dtype=F64)");
}

TEST(Print, NaNInfAndNegativeZero) {
  EXPECT_EQ(to_string(from_vector<float>({kNaN, kInf, -0.0f, 1.5f}, {4})), "tensor([   nan,    inf, -0.0000, 1.5000])");
  // (torch sizes the column from the nonzero finite values only, so -0.0000 overflows it.)
  EXPECT_EQ(to_string(from_vector<float>({kNaN, 1, -kInf}, {3})), "tensor([nan, 1., -inf])");
  EXPECT_EQ(to_string(from_vector<float>({-0.0f}, {1})), "tensor([-0.])");
}

TEST(Print, IntegersBoolHalfComplex) {
  EXPECT_EQ(to_string(from_vector<std::int32_t>({1, -20, 300}, {3})), "tensor([  1, -20, 300], dtype=I32)");
  EXPECT_EQ(to_string(from_vector(std::vector<bool>{true, false}, {2})), "tensor([ True, False], dtype=Bool)");
  // BF16 by value: 0.1 rounds to 0.10009765625.
  EXPECT_EQ(to_string(from_vector<float>({0.1f, 2.5f}, {2}).to(DType::BF16)), "tensor([0.1001, 2.5000], dtype=BF16)");
  EXPECT_EQ(to_string(from_vector<float>({65504, -1}, {2}).to(DType::F16)), "tensor([ 6.5504e+04, -1.0000e+00], dtype=F16)");
  EXPECT_EQ(to_string(from_vector<std::complex<float>>({{1, 2}, {3, -4.5f}}, {2})), "tensor([1.+2.0000j, 3.-4.5000j], dtype=C64)");
}

TEST(Print, ThreeDims) {
  EXPECT_EQ(to_string(arange(8).reshape({2, 2, 2})),
            "tensor([[[0, 1],\n"
            "         [2, 3]],\n"
            "\n"
            "        [[4, 5],\n"
            "         [6, 7]]], dtype=I64)");
}

TEST(Print, LongRowsWrapAt80Columns) {
  EXPECT_EQ(to_string(arange(0.0, 30.0)),
            "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
            "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
            "        28., 29.])");
}

TEST(Print, LargeTensorsAreSummarised) {
  EXPECT_EQ(to_string(arange(0.0, 2000.0)),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
            "        1.9990e+03])");
  EXPECT_EQ(to_string(arange(1001)), "tensor([   0,    1,    2,  ...,  998,  999, 1000], dtype=I64)");
  EXPECT_EQ(to_string(zeros({100, 100})),
            "tensor([[0., 0., 0.,  ..., 0., 0., 0.],\n"
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
            "        ...,\n"
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
            "        [0., 0., 0.,  ..., 0., 0., 0.]])");
  // 1000 elements exactly is not summarised (torch's threshold is "more than 1000").
  EXPECT_EQ(to_string(zeros({1000})).find("..."), std::string::npos);
  // The formatter sees only the printed elements: 500 in the hidden middle does not widen.
  Tensor x = zeros({2000});
  x = where(arange(2000) == 1000, full({}, 500.0), x);
  EXPECT_EQ(to_string(x), "tensor([0., 0., 0.,  ..., 0., 0., 0.])");
}

TEST(Print, SuffixWrapsPast80Columns) {
  // torch's _add_suffixes: the dtype goes to a new line, indented under "tensor(".
  EXPECT_EQ(to_string(full({10}, 10000, DType::I32)),
            "tensor([10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000],\n"
            "       dtype=I32)");
}

TEST(Print, SummarisedThreeDims) {
  std::string row = "[0., 0., 0.,  ..., 0., 0., 0.]";
  std::string block = "[" + row;
  for (int i = 0; i < 2; ++i) block += ",\n         " + row;
  block += ",\n         ...";
  for (int i = 0; i < 3; ++i) block += ",\n         " + row;
  block += "]";
  std::string expected = "tensor([" + block;
  for (int i = 0; i < 2; ++i) expected += ",\n\n        " + block;
  expected += ",\n\n        ...";
  for (int i = 0; i < 3; ++i) expected += ",\n\n        " + block;
  expected += "])";
  EXPECT_EQ(to_string(zeros({10, 10, 20})), expected);
}

TEST(Print, DTypeDeviceShape) {
  std::ostringstream os;
  os << DType::BF16 << " " << Device::cuda(1) << " " << Device::cpu() << " " << Shape{2, 3};
  EXPECT_EQ(os.str(), "BF16 cuda:1 cpu [2, 3]");
}

}  // namespace
}  // namespace ferrite
