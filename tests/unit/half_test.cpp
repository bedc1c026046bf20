// Host Half / BFloat16: round to nearest even, checked exhaustively where that is cheap and
// against an independent long-double reference elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "conformance/reference.hpp"
#include "ferrite/half.hpp"

namespace ferrite {
namespace {

TEST(Half, EveryBitPatternRoundTripsThroughFloat) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const Half h = Half::from_bits(static_cast<std::uint16_t>(b));
    const float f = h;
    if (std::isnan(f)) continue;
    EXPECT_EQ(Half(f).bits, b) << std::hex << b;
  }
}

TEST(BFloat16, EveryBitPatternRoundTripsThroughFloat) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const float f = BFloat16::from_bits(static_cast<std::uint16_t>(b));
    if (std::isnan(f)) continue;
    EXPECT_EQ(BFloat16(f).bits, b) << std::hex << b;
  }
}

TEST(Half, RoundsToNearestEvenAtTiesAndSaturatesToInfinity) {
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).bits, Half(1.0f).bits);            // tie -> even (down)
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).bits, Half(1.0f + 2.0f / 1024).bits);  // tie -> even (up)
  EXPECT_EQ(Half(65519.0f).bits, 0x7BFF);
  EXPECT_EQ(Half(65520.0f).bits, 0x7C00);
  EXPECT_EQ(Half(-1e9f).bits, 0xFC00);
  EXPECT_EQ(Half(5.9604644775390625e-8f).bits, 0x0001);   // smallest subnormal
  EXPECT_EQ(Half(2.98023223876953125e-8f).bits, 0x0000);  // half of it: tie -> even (zero)
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::nanf("")))));
}

TEST(HalfAndBFloat16, FloatAndDoubleConversionsMatchAnIndependentReference) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    // Random magnitudes over the whole range, subnormals and overflow included.
    const double x = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                                std::uniform_int_distribution<int>(-30, 20)(rng));
    const double y = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                                std::uniform_int_distribution<int>(-140, 130)(rng));
    EXPECT_EQ(static_cast<float>(Half(x)), static_cast<float>(reference::round_to(DType::F16, x))) << x;
    EXPECT_EQ(static_cast<float>(Half(static_cast<float>(x))),
              static_cast<float>(reference::round_to(DType::F16, static_cast<float>(x))));
    EXPECT_EQ(static_cast<float>(BFloat16(y)), static_cast<float>(reference::round_to(DType::BF16, y))) << y;
  }
}

}  // namespace
}  // namespace ferrite
