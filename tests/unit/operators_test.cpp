// The C++ operators (ferrite/operators.hpp): values, the Scalar-takes-the-tensor's-dtype rule,
// the refusals where PyTorch would promote, and compound assignment.
#include <gtest/gtest.h>

#include <limits>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

using conformance::expect_error;

TEST(Operators, ArithmeticWithTensorsAndScalars) {
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  const Tensor b = from_vector<float>({10, 20}, {2});
  EXPECT_EQ((a + b).to_vector<float>(), (std::vector<float>{11, 22, 13, 24}));
  EXPECT_EQ((a - b).to_vector<float>(), (std::vector<float>{-9, -18, -7, -16}));
  EXPECT_EQ((a * b).to_vector<float>(), (std::vector<float>{10, 40, 30, 80}));
  EXPECT_EQ((b / a).to_vector<float>(), (std::vector<float>{10, 10, 10 / 3.0f, 5}));
  EXPECT_EQ((a + 1).to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ((1 - a).to_vector<float>(), (std::vector<float>{0, -1, -2, -3}));
  EXPECT_EQ((a * 0.5).to_vector<float>(), (std::vector<float>{0.5f, 1, 1.5f, 2}));
  EXPECT_EQ((2.0f / a).to_vector<float>(), (std::vector<float>{2, 1, 2 / 3.0f, 0.5f}));
  EXPECT_EQ((-a).to_vector<float>(), (std::vector<float>{-1, -2, -3, -4}));
  EXPECT_EQ((a + 1).shape(), (Shape{2, 2}));
  EXPECT_EQ((a + 1).dtype(), DType::F32);
}

TEST(Operators, ScalarTakesTheTensorsDType) {
  const Tensor i = from_vector<std::int32_t>({-7, 7, 5}, {3});
  const Tensor sum = i + 1;
  EXPECT_EQ(sum.dtype(), DType::I32);
  EXPECT_EQ(sum.to_vector<std::int32_t>(), (std::vector<std::int32_t>{-6, 8, 6}));
  // % is remainder: the sign of the divisor, as Python and torch.
  EXPECT_EQ((i % 3).to_vector<std::int32_t>(), (std::vector<std::int32_t>{2, 1, 2}));
  EXPECT_EQ((i % -3).to_vector<std::int32_t>(), (std::vector<std::int32_t>{-1, -2, -1}));
  EXPECT_EQ((10 % i).to_vector<std::int32_t>(), (std::vector<std::int32_t>{-4, 3, 0}));
  // A bool scalar is a 0/1 of the tensor's dtype (PyTorch: bool is below int).
  EXPECT_EQ((i + true).to_vector<std::int32_t>(), (std::vector<std::int32_t>{-6, 8, 6}));
  // bf16 * 0.5 stays BF16 (the scalar rounds to BF16 once; 0.5 is exact).
  const Tensor h = from_vector<float>({3, 5}, {2}).to(DType::BF16);
  const Tensor half = h * 0.5;
  EXPECT_EQ(half.dtype(), DType::BF16);
  EXPECT_EQ(half.to(DType::F32).to_vector<float>(), (std::vector<float>{1.5f, 2.5f}));
  // An I64 scalar beyond 2^53 stays exact.
  const std::int64_t big = (std::int64_t(1) << 62) + 1;
  EXPECT_EQ((zeros({1}, DType::I64) + big).item<std::int64_t>(), big);
}

TEST(Operators, RefusesWhatPyTorchWouldPromote) {
  const Tensor i = from_vector<std::int32_t>({1, 2}, {2});
  EXPECT_EQ(expect_error([&] { (void)(i + 1.5); }, ErrorKind::DTypeMismatch,
                         "operator+: floating-point scalar 1.5 with the integer tensor [2] I32 cpu"),
            "");
  EXPECT_EQ(expect_error([&] { (void)(i < 1.5); }, ErrorKind::DTypeMismatch, "operator<: floating-point scalar"), "");
  const Tensor mask = from_vector(std::vector<bool>{true, false}, {2});
  EXPECT_EQ(expect_error([&] { (void)(mask + 1); }, ErrorKind::DTypeMismatch,
                         "operator+: scalar 1 with the Bool tensor [2] Bool cpu"),
            "");
  // Two tensors of different dtypes: the named op's DTypeMismatch, never a promotion.
  EXPECT_EQ(expect_error([&] { (void)(i + zeros({2}, DType::I64)); }, ErrorKind::DTypeMismatch, "add: operand dtypes differ"),
            "");
  // An integer scalar outside the dtype is full()'s overflow error.
  EXPECT_EQ(expect_error([&] { (void)(i * (std::int64_t(1) << 40)); }, ErrorKind::InvalidArgument,
                         "operator*: value 1099511627776 cannot be converted to type I32 without overflow"),
            "");
  // PyTorch's / divides integers exactly into floats; ferrite's div truncates, so / refuses.
  EXPECT_EQ(expect_error([&] { (void)(i / 2); }, ErrorKind::DTypeMismatch,
                         "operator/: operands [2] I32 cpu and [] I32 cpu are not floating; PyTorch's / would divide "
                         "exactly"),
            "");
  EXPECT_EQ(expect_error([&] { (void)(i / i); }, ErrorKind::DTypeMismatch, "floor_divide(x, y) to floor"), "");
  Tensor j = i;
  EXPECT_EQ(expect_error([&] { j /= 2; }, ErrorKind::DTypeMismatch, "operator/: operands [2] I32 cpu and [] I32 cpu"), "");
  EXPECT_EQ(expect_error([&] { (void)(2 / i); }, ErrorKind::DTypeMismatch, "operator/: operands [] I32 cpu and [2] I32 cpu"),
            "");
  EXPECT_EQ(expect_error([&] { (void)(Tensor() + 1); }, ErrorKind::InvalidArgument, "operator+"), "");
  EXPECT_EQ(expect_error([&] { (void)(Tensor() + i); }, ErrorKind::InvalidArgument, "add"), "");
}

TEST(Operators, ComparisonsGiveBool) {
  const Tensor a = from_vector<float>({1, 2, std::numeric_limits<float>::quiet_NaN()}, {3});
  const Tensor b = from_vector<float>({1, 3, 0}, {3});
  EXPECT_EQ((a == b).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ((a != b).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ((a < 2).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ((a <= 2).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ((2 > a).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ((a >= 1.5).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ((1 == a).dtype(), DType::Bool);
  const Tensor i = from_vector<std::int64_t>({-1, 0, 1}, {3});
  EXPECT_EQ((i > 0).to_vector<bool>(), (std::vector<bool>{false, false, true}));
}

TEST(Operators, Bitwise) {
  const Tensor a = from_vector<std::int32_t>({0b1100, 0b1010, -1}, {3});
  EXPECT_EQ((a & 0b0110).to_vector<std::int32_t>(), (std::vector<std::int32_t>{0b0100, 0b0010, 0b0110}));
  EXPECT_EQ((0b0110 | a).to_vector<std::int32_t>(), (std::vector<std::int32_t>{0b1110, 0b1110, -1}));
  EXPECT_EQ((a ^ a).to_vector<std::int32_t>(), (std::vector<std::int32_t>{0, 0, 0}));
  EXPECT_EQ((~a).to_vector<std::int32_t>(), (std::vector<std::int32_t>{~0b1100, ~0b1010, 0}));
  const Tensor m = from_vector(std::vector<bool>{true, false}, {2});
  EXPECT_EQ((m & true).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ((m ^ true).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ((~m).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ((m.reshape({2, 1}) | m).to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(expect_error([] { (void)(zeros({2}) & zeros({2})); }, ErrorKind::Unsupported, "bitwise_and: dtype F32"), "");
}

TEST(Operators, CompoundAssignmentWritesInPlace) {
  Tensor x = from_vector<float>({1, 2}, {2});
  const Tensor before = x;
  x += 1;
  x *= from_vector<float>({2, 3}, {2});
  x -= 0.5;
  x /= 2;
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1.75f, 4.25f}));
  // As LibTorch: the writes land in x's storage, so every handle sharing it sees them.
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{1.75f, 4.25f}));
  // Through a view made on the spot: only row 1 changes.
  Tensor grid = from_vector<float>({1, 2, 3, 4}, {2, 2});
  grid.select(0, 1) *= 10;
  grid.select(1, 0) += 0.5;
  EXPECT_EQ(grid.to_vector<float>(), (std::vector<float>{1.5f, 2, 30.5f, 40}));
  Tensor i = from_vector<std::int64_t>({5}, {1});
  i += 2;
  EXPECT_EQ(i.dtype(), DType::I64);
  EXPECT_EQ(i.item<std::int64_t>(), 7);
  // As PyTorch: the result must keep x's shape; x cannot grow by broadcasting.
  Tensor small = zeros({3});
  EXPECT_EQ(expect_error([&] { small += zeros({2, 3}); }, ErrorKind::ShapeMismatch,
                         "add: out is [3] F32 cpu, expected shape [2, 3]"),
            "");
  EXPECT_EQ(small.shape(), Shape{3});  // unchanged after the error
  EXPECT_EQ(small.to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(expect_error([&] { i /= 2; }, ErrorKind::DTypeMismatch, "operator/: operands"), "");
  EXPECT_EQ(expect_error([&] { i += 0.5; }, ErrorKind::DTypeMismatch, "operator+=: floating-point scalar 0.5"), "");
}

}  // namespace
}  // namespace ferrite
