// Factories (ferrite/factories.hpp): ones, *_like, eye, linspace, logspace, tensor({...}),
// against torch's documented results and edge cases.
#include <gtest/gtest.h>

#include <complex>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

using conformance::expect_error;

TEST(Factories, OnesAndLike) {
  EXPECT_EQ(ones({2}, DType::I32).to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 1}));
  const Tensor x = from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  for (const Tensor& t : {empty_like(x), zeros_like(x), ones_like(x), full_like(x, 2.5)}) {
    EXPECT_EQ(t.shape(), x.shape());
    EXPECT_EQ(t.dtype(), DType::F64);
    EXPECT_EQ(t.device(), x.device());
  }
  EXPECT_EQ(zeros_like(x).to_vector<double>(), std::vector<double>(6, 0.0));
  EXPECT_EQ(ones_like(x).to_vector<double>(), std::vector<double>(6, 1.0));
  EXPECT_EQ(full_like(x, 2.5).to_vector<double>(), std::vector<double>(6, 2.5));
  EXPECT_EQ(ones_like(x, DType::Bool).to_vector<bool>(), std::vector<bool>(6, true));
  EXPECT_EQ(full_like(x, 7, DType::I64).to_vector<std::int64_t>(), std::vector<std::int64_t>(6, 7));
  EXPECT_EQ(empty_like(x, DType::BF16).dtype(), DType::BF16);
  EXPECT_EQ(expect_error([] { zeros_like(Tensor()); }, ErrorKind::InvalidArgument, "zeros_like"), "");
  EXPECT_EQ(expect_error([&] { full_like(x, 1e10, DType::I32); }, ErrorKind::InvalidArgument,
                         "full: value 10000000000 cannot be converted to type I32 without overflow"),
            "");
}

TEST(Factories, Eye) {
  EXPECT_EQ(eye(3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  const Tensor r = eye(2, 3, DType::I64);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(eye(3, 1, DType::Bool).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(eye(0).shape(), (Shape{0, 0}));
  EXPECT_EQ(eye(2, 0).shape(), (Shape{2, 0}));
  EXPECT_EQ(eye(1, -1, DType::BF16).dtype(), DType::BF16);
  EXPECT_EQ(expect_error([] { eye(-1); }, ErrorKind::InvalidArgument, "eye: n must be greater or equal to 0, got -1"),
            "");
}

TEST(Factories, Linspace) {
  EXPECT_EQ(linspace(0, 1, 5).to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1}));
  EXPECT_EQ(linspace(-10, 10, 5).to_vector<float>(), (std::vector<float>{-10, -5, 0, 5, 10}));
  // Integer dtypes: step in double, truncated (torch.linspace(0, 10, 4, dtype=torch.int64)).
  EXPECT_EQ(linspace(0, 10, 4, DType::I64).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 3, 6, 10}));
  EXPECT_EQ(linspace(10, 0, 4, DType::I32).to_vector<std::int32_t>(), (std::vector<std::int32_t>{10, 6, 3, 0}));
  // Edge cases: steps 0 and 1, start == end.
  EXPECT_EQ(linspace(0, 1, 0).shape(), Shape{0});
  EXPECT_EQ(linspace(2, 5, 1).to_vector<float>(), (std::vector<float>{2}));
  EXPECT_EQ(linspace(3, 3, 4).to_vector<float>(), (std::vector<float>{3, 3, 3, 3}));
  // Both ends exact: the second half counts down from end in the dtype's arithmetic.
  const std::vector<float> v = linspace(0, 1, 11).to_vector<float>();
  const float step = 1.0f / 10.0f;
  EXPECT_EQ(v[10], 1.0f);
  EXPECT_EQ(v[3], 0.0f + step * 3.0f);
  EXPECT_EQ(v[7], 1.0f - step * 3.0f);
  EXPECT_EQ(linspace(0, 1, 3, DType::BF16).to(DType::F32).to_vector<float>(), (std::vector<float>{0, 0.5f, 1}));
  EXPECT_EQ(linspace(0, 1, 3, DType::F64).to_vector<double>(), (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(expect_error([] { linspace(0, 1, -1); }, ErrorKind::InvalidArgument,
                         "linspace: number of steps must be non-negative, got -1"),
            "");
  EXPECT_EQ(expect_error([] { linspace(0, 1, 2, DType::Bool); }, ErrorKind::Unsupported, "linspace: dtype Bool"), "");
}

TEST(Factories, Logspace) {
  EXPECT_EQ(logspace(0, 2, 3).to_vector<float>(), (std::vector<float>{1, 10, 100}));
  EXPECT_EQ(logspace(0, 3, 4, 2, DType::I64).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(logspace(0, 3, 4, 10, DType::I32).to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 10, 100, 1000}));
  EXPECT_EQ(logspace(2, 2, 1).to_vector<float>(), (std::vector<float>{100}));
  EXPECT_EQ(logspace(0, 1, 0).numel(), 0);
  EXPECT_EQ(logspace(-1, 1, 3, 10, DType::F64).to_vector<double>(), (std::vector<double>{0.1, 1, 10}));
  EXPECT_EQ(expect_error([] { logspace(0, 40, 2, 10, DType::I32); }, ErrorKind::InvalidArgument,
                         "logspace: value 1e+40 cannot be converted to type I32 without overflow"),
            "");
}

TEST(Factories, TensorFromInitializerLists) {
  const Tensor f = tensor({1.f, 2.f, 3.f});
  EXPECT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(f.shape(), Shape{3});
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(tensor({1.0, 2.0}).dtype(), DType::F64);
  const Tensor m = tensor({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(m.dtype(), DType::I32);
  EXPECT_EQ(m.shape(), (Shape{2, 3}));
  EXPECT_EQ(m.to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(tensor({std::int64_t(1) << 40}).dtype(), DType::I64);
  EXPECT_EQ(tensor({true, false}).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(tensor({std::complex<float>(1, 2)}).dtype(), DType::C64);
  const Tensor s = tensor(2.5f);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<float>(), 2.5f);
  EXPECT_EQ(tensor(std::initializer_list<float>{}).shape(), Shape{0});
  EXPECT_EQ(expect_error([] { tensor({{1.f, 2.f}, {3.f}}); }, ErrorKind::ShapeMismatch,
                         "tensor: row 1 has 1 elements but row 0 has 2"),
            "");
}

TEST(Factories, ArangeInfersItsDtypeAsPyTorch) {
  EXPECT_EQ(arange(0, 5).dtype(), DType::I64);  // all integers
  EXPECT_EQ(arange(0, 5).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(2, 11, 3).to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 5, 8}));
  EXPECT_EQ(arange(5).dtype(), DType::I64);
  EXPECT_EQ(arange(0, 1, 0.25).dtype(), DType::F32);  // a floating argument
  EXPECT_EQ(arange(0.0, 2.0).dtype(), DType::F32);
  EXPECT_EQ(arange(0, 3, 1, DType::F64).dtype(), DType::F64);  // asked for
}

TEST(Factories, FromBlobWrapsMemoryWithoutACopy) {
  std::vector<float> memory = {1, 2, 3, 4, 5, 6};
  int deleted = 0;
  {
    const Tensor t = from_blob(memory.data(), {2, 3}, DType::F32, Device::cpu(), [&](void* p) {
      EXPECT_EQ(p, memory.data());
      ++deleted;
    });
    EXPECT_EQ(t.data_ptr(), memory.data());
    EXPECT_EQ(sum(t).item<float>(), 21);
    t.select(0, 1).fill_(0);  // writes land in the caller's memory
    EXPECT_EQ(memory, (std::vector<float>{1, 2, 3, 0, 0, 0}));
    const Tensor view = t.t();
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);  // once, when the last tensor sharing it went away
  // Strided: every other element, column-major.
  const Tensor cols = from_blob(memory.data(), {3, 2}, {1, 3}, DType::F32);
  EXPECT_EQ(cols.to_vector<float>(), (std::vector<float>{1, 0, 2, 0, 3, 0}));
  EXPECT_EQ(expect_error([&] { (void)from_blob(nullptr, {2}, DType::F32); }, ErrorKind::InvalidArgument,
                         "from_blob: null data pointer"),
            "");
  EXPECT_EQ(expect_error([&] { (void)from_blob(memory.data(), {2}, {1, 1}, DType::F32); }, ErrorKind::InvalidArgument,
                         "from_blob: shape [2] has 1 dims but strides [1, 1] has 2"),
            "");
  EXPECT_EQ(from_blob(nullptr, {0, 3}, DType::F32).numel(), 0);
}

}  // namespace
}  // namespace ferrite
