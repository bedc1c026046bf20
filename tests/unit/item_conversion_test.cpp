// item<T>() and to_vector<T>() with T another dtype's host type: converted on the host by
// the cast rules of to(dtype) (issue 12; before, anything but the exact host type threw).
#include <gtest/gtest.h>

#include <complex>
#include <limits>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

using conformance::expect_error;

TEST(ItemConversion, FloatingToOtherTypes) {
  const Tensor x = from_vector<float>({2.75f}, {});
  EXPECT_EQ(x.item<double>(), 2.75);
  EXPECT_EQ(x.item<std::int32_t>(), 2);  // truncates toward zero
  EXPECT_EQ(x.item<std::int64_t>(), 2);
  EXPECT_EQ(x.item<bool>(), true);
  EXPECT_EQ(static_cast<float>(x.item<BFloat16>()), 2.75f);
  EXPECT_EQ(x.item<std::complex<double>>(), std::complex<double>(2.75, 0));
  EXPECT_EQ(from_vector<float>({-2.75f}, {1}).item<std::int64_t>(), -2);
}

TEST(ItemConversion, CastRulesNotUndefinedBehaviour) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = from_vector<float>({nan, 1e20f, -1e20f, 0.f}, {4});
  // NaN -> 0, out of range saturates (the documented cast), never a UB static_cast.
  EXPECT_EQ(x.to_vector<std::int32_t>(), (std::vector<std::int32_t>{0, std::numeric_limits<std::int32_t>::max(),
                                                                    std::numeric_limits<std::int32_t>::min(), 0}));
  EXPECT_EQ(x.to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(x.to(DType::F64).to_vector<float>()[1], 1e20f);
}

TEST(ItemConversion, IntegersBoolAndHalves) {
  const Tensor i = from_vector<std::int64_t>({(std::int64_t(1) << 40) + 1, -3}, {2});
  EXPECT_EQ(i.to_vector<double>(), (std::vector<double>{1099511627777.0, -3.0}));
  EXPECT_EQ(i.to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, -3}));  // wraps, as to(I32)
  const Tensor b = from_vector(std::vector<bool>{true, false}, {2});
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 0}));
  EXPECT_EQ(b.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0}));
  const Tensor h = from_vector<float>({0.1f}, {1}).to(DType::BF16);
  EXPECT_EQ(h.item<float>(), 0.10009765625f);
  EXPECT_EQ(h.item<double>(), 0.10009765625);
  EXPECT_EQ(zeros({0}, DType::I32).to_vector<double>(), std::vector<double>{});
}

TEST(ItemConversion, Refusals) {
  EXPECT_EQ(expect_error([] { (void)Tensor().item<double>(); }, ErrorKind::InvalidArgument, "is undefined"), "");
  EXPECT_EQ(expect_error([] { (void)zeros({2}).item<double>(); }, ErrorKind::InvalidArgument,
                         "item: tensor [2] F32 cpu has 2 elements"),
            "");
  const Tensor c = from_vector<std::complex<float>>({{1, 2}}, {1});
  EXPECT_EQ(expect_error([&] { (void)c.item<double>(); }, ErrorKind::DTypeMismatch,
                         "to_vector: asked for F64 elements but the tensor is [1] C64 cpu; a complex value"),
            "");
  EXPECT_EQ(c.item<std::complex<double>>(), std::complex<double>(1, 2));
}

}  // namespace
}  // namespace ferrite
