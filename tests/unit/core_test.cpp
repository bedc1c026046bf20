// Core types: dtypes, errors, tensors, the registry, broadcasting layouts, threads.
#include <gtest/gtest.h>

#include <limits>
#include <thread>

#include "conformance/conformance.hpp"
#include "core/elementwise_layout.hpp"
#include "cpu/cpu_backend.hpp"
#include "ferrite/ferrite.hpp"
#include "ferrite/testing.hpp"

namespace ferrite {
namespace {

using conformance::expect_error;

TEST(DType, TableIsConsistent) {
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(dtype_size(DType::C128), 16u);
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
  EXPECT_EQ(dtype_name(DType::F16), "F16");
  EXPECT_EQ(dtype_of<BFloat16>, DType::BF16);
  EXPECT_EQ(dtype_of<std::complex<float>>, DType::C64);
  EXPECT_TRUE(is_floating(DType::BF16));
  EXPECT_FALSE(is_floating(DType::C64));
  EXPECT_TRUE(is_complex(DType::C64));
  EXPECT_FALSE(is_numeric(DType::Bool));
}

TEST(Error, CheckThrowsItsKindWithTheMessage) {
  try {
    FERRITE_CHECK(1 + 1 == 3, ShapeMismatch, "op: ", 42, " things");
    FAIL() << "did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_STREQ(e.what(), "op: 42 things");
  }
  EXPECT_EQ(error_kind_name(ErrorKind::OutOfMemory), "OutOfMemory");
}

TEST(Tensor, FactoriesAndAccessors) {
  const Tensor t = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.size(-1), 3);
  EXPECT_EQ(t.description(), "[2, 3] F32 cpu");
  EXPECT_EQ(t.reshape({3, -1}).shape(), (Shape{3, 2}));
  EXPECT_EQ(t.reshape({6}).to_vector<float>()[5], 6.0f);
  EXPECT_EQ(full({}, 7, DType::I64).item<std::int64_t>(), 7);
  EXPECT_EQ(full({2}, std::int64_t(9007199254740993), DType::I64).to_vector<std::int64_t>()[1], 9007199254740993);
  EXPECT_EQ(arange(5).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(from_vector(std::vector<bool>{true, false}, {2}).to_vector<bool>(), (std::vector<bool>{true, false}));
  const Tensor c = t.clone();
  EXPECT_NE(c.data_ptr(), t.data_ptr());
  EXPECT_EQ(c.to_vector<float>(), t.to_vector<float>());
  EXPECT_EQ(t.to(DType::F32).data_ptr(), t.data_ptr());  // same dtype: shared
}

TEST(Tensor, BadInputThrowsTypedErrors) {
  const Tensor t = zeros({2, 3});
  EXPECT_EQ(expect_error([&] { (void)t.reshape({4, 2}); }, ErrorKind::ShapeMismatch,
                         "reshape: [2, 3] F32 cpu cannot become [4, 2]"), "");
  EXPECT_EQ(expect_error([&] { (void)t.size(2); }, ErrorKind::IndexOutOfRange, "size: dim 2 is out of range"), "");
  EXPECT_EQ(expect_error([&] { (void)t.item<float>(); }, ErrorKind::InvalidArgument, "item: tensor [2, 3] F32 cpu has 6"), "");
  EXPECT_EQ(expect_error([&] { (void)from_vector<float>({1, 2, 3}, {2, 2}); }, ErrorKind::ShapeMismatch,
                         "from_bytes: 12 bytes given but shape [2, 2] of F32 needs 16"), "");
  // An F16 buffer read as BF16 is converted by value, never reinterpreted (issue 12: it was
  // refused before); complex to real is still refused.
  const std::vector<BFloat16> converted = from_vector<float>({1.5f, -2}, {2}).to(DType::F16).to_vector<BFloat16>();
  EXPECT_EQ(static_cast<float>(converted[0]), 1.5f);
  EXPECT_EQ(static_cast<float>(converted[1]), -2.0f);
  EXPECT_EQ(expect_error([&] { (void)zeros({2}, DType::C64).to_vector<float>(); }, ErrorKind::DTypeMismatch,
                         "to_vector: asked for F32 elements but the tensor is [2] C64 cpu"), "");
  EXPECT_EQ(expect_error([&] { (void)add(zeros({2}, DType::F16), zeros({2}, DType::BF16)); }, ErrorKind::DTypeMismatch,
                         "add: operand dtypes differ ([2] F16 cpu, [2] BF16 cpu)"), "");
}

// Sizes whose arithmetic would wrap: each must be an error, never a wrapped (small) size.
// Before the byte check, 2^61 C128 elements asked the backend for 2^65 mod 2^64 = 0 bytes.
TEST(Tensor, SizesThatWouldOverflowAreErrors) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(expect_error([] { (void)zeros({std::int64_t(1) << 61}, DType::C128); }, ErrorKind::InvalidArgument,
                         "shape [2305843009213693952] of C128 needs more bytes than an int64 can count"), "");
  EXPECT_EQ(expect_error([&] { (void)empty({big}, DType::F16); }, ErrorKind::InvalidArgument,
                         "of F16 needs more bytes than an int64 can count"), "");
  EXPECT_EQ(expect_error([&] { (void)zeros({big, 2}); }, ErrorKind::InvalidArgument,
                         "has more elements than an int64 can count"), "");
  const Tensor t = zeros({3, 4});
  EXPECT_EQ(expect_error([&] { (void)repeat(t, {big, 1}); }, ErrorKind::InvalidArgument,
                         "repeat: reps [9223372036854775807, 1] of [3, 4] F32 cpu give a dim of more elements"), "");
  EXPECT_EQ(expect_error([&] { (void)split(t, {big, big, 2}, 1); }, ErrorKind::ShapeMismatch,
                         "split: sizes [9223372036854775807, 9223372036854775807, 2] add up to more than an int64"), "");
  EXPECT_EQ(expect_error([&] { (void)strided_copy(t, {2, 2}, {big, 1}, 0); }, ErrorKind::IndexOutOfRange,
                         "addresses elements 0..9223372036854775808, outside the 12 elements"), "");
  EXPECT_EQ(expect_error([&] { (void)layer_norm(t, {}, {}, std::numeric_limits<double>::quiet_NaN()); },
                         ErrorKind::InvalidArgument, "layer_norm: eps nan must be a number >= 0"), "");
  EXPECT_EQ(expect_error([&] { (void)t.reshape({std::int64_t(1) << 62, std::int64_t(1) << 62, 0}); },
                         ErrorKind::ShapeMismatch, "(more elements than an int64 can count)"), "");
  EXPECT_EQ(chunk(t, big, 1).size(), 4u);  // ceil(4 / n) without computing 4 + n - 1
  EXPECT_EQ(roll(t, std::numeric_limits<std::int64_t>::min(), 1).to_vector<float>(), t.to_vector<float>());
}

TEST(Registry, CpuAlwaysThereAndRegistrationIsIdempotent) {
  const auto names = registered_backends();
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  Backend& before = backend(Device::cpu());
  register_backend(std::make_shared<cpu::CpuBackend>());
  register_backend(std::make_shared<cpu::CpuBackend>());
  EXPECT_EQ(registered_backends().size(), names.size());
  EXPECT_EQ(before.name(), "cpu");  // a replaced backend stays alive for its holders
  EXPECT_EQ(add(full({3}, 1), full({3}, 2)).to_vector<float>(), (std::vector<float>{3, 3, 3}));
  EXPECT_TRUE(supports(Op::Add, DType::BF16));
  EXPECT_FALSE(supports(Op::Add, DType::Bool));
  EXPECT_FALSE(supports(Op::Add, DType::F32, Device::cuda(99)));
  const ErrorKind missing = cuda_device_count() > 0 ? ErrorKind::InvalidArgument : ErrorKind::Unsupported;
  EXPECT_EQ(expect_error([] { (void)zeros({1}, DType::F32, Device::cuda(99)); }, missing, "cuda:99"), "");
}

TEST(Broadcast, LayoutsMergeContiguousDims) {
  const Shape m{65536, 4096}, row{4096}, col{65536, 1};
  const ElementwiseLayout same = make_elementwise_layout(m, {&m, &m}, "t");
  EXPECT_TRUE(same.contiguous);
  EXPECT_EQ(same.rank, 1);
  const ElementwiseLayout rows = make_elementwise_layout(m, {&m, &row}, "t");
  EXPECT_FALSE(rows.contiguous);
  EXPECT_EQ(rows.rank, 2);
  EXPECT_EQ(rows.strides[1][0], 0);
  EXPECT_EQ(rows.strides[1][1], 1);
  const ElementwiseLayout cols = make_elementwise_layout(m, {&m, &col}, "t");
  EXPECT_EQ(cols.strides[1][1], 0);
  const Shape a{2, 1, 3}, b{2, 5, 3}, out = broadcast_shapes(a, b);
  EXPECT_EQ(out, (Shape{2, 5, 3}));
  EXPECT_EQ(make_elementwise_layout(out, {&a, &b}, "t").rank, 3);
  const Shape nine{1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
  const Shape nine_t{2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1};
  const Shape big = broadcast_shapes(nine, nine_t);
  EXPECT_EQ(expect_error([&] { (void)add(zeros(nine), zeros(nine_t)); }, ErrorKind::Unsupported,
                         "add: broadcasting " + shape_str(big)), "");
}

TEST(Threads, ManyHostThreadsUseTheCpuBackendAtOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 50; ++i) {
        const Tensor a = full({1000 + t}, static_cast<double>(t));
        const Tensor b = arange(0.0, 1000.0 + t, 1.0);
        const auto v = add(a, b).to_vector<float>();
        if (v.back() != static_cast<float>(t + 999 + t)) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(MemoryChecks, PoisonAndGuardsOnTheCpu) {
  testing::set_memory_checks(true);
  const std::int64_t before = testing::guard_violations();
  {
    const Tensor t = empty({5}, DType::I32);
    for (std::int32_t v : t.to_vector<std::int32_t>()) EXPECT_EQ(v, -1);  // 0xFFFFFFFF
    // Simulate an op that writes one element past the end.
    static_cast<std::uint8_t*>(t.mutable_data_ptr())[t.nbytes()] = 0;
  }
  EXPECT_EQ(testing::guard_violations(), before + 1);
  testing::set_memory_checks(false);
}

}  // namespace
}  // namespace ferrite
