// The Philox generator against Random123's known-answer vectors, the generator state API,
// and the statistics of the draws on 10^7 samples (mean, variance, Kolmogorov-Smirnov),
// dropout's kept fraction, on the CPU backend (the conformance suite checks that CUDA
// gives the same bits).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/philox.hpp"
#include "core/random_elements.hpp"
#include "ferrite/ferrite.hpp"
#include "ferrite/nn_training.hpp"
#include "ferrite/optim.hpp"
#include "ferrite/random.hpp"

namespace ferrite {
namespace {

using detail::philox::philox4x32_10;

TEST(Philox, KnownAnswerVectors) {
  // Random123 kat_vectors, philox4x32 10: counter[4] key[2] -> output[4].
  auto a = philox4x32_10(0, 0, 0, 0, 0, 0);
  EXPECT_EQ(a.w[0], 0x6627e8d5u);
  EXPECT_EQ(a.w[1], 0xe169c58du);
  EXPECT_EQ(a.w[2], 0xbc57ac4cu);
  EXPECT_EQ(a.w[3], 0x9b00dbd8u);
  auto b = philox4x32_10(~0u, ~0u, ~0u, ~0u, ~0u, ~0u);
  EXPECT_EQ(b.w[0], 0x408f276du);
  EXPECT_EQ(b.w[1], 0x41c83b0eu);
  EXPECT_EQ(b.w[2], 0xa20bc7c6u);
  EXPECT_EQ(b.w[3], 0x6d5451fdu);
  auto c = philox4x32_10(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u);
  EXPECT_EQ(c.w[0], 0xd16cfe09u);
  EXPECT_EQ(c.w[1], 0x94fdccebu);
  EXPECT_EQ(c.w[2], 0x5001e420u);
  EXPECT_EQ(c.w[3], 0x24126ea1u);
}

TEST(Philox, LogAndSincosMatchLibm) {
  for (double u : {1.0, 0.5, 1e-7, 0.999, 0.123456, 0x1p-53}) {
    EXPECT_NEAR(detail::philox::log_positive(u), std::log(u), 4e-16 * std::max(1.0, std::fabs(std::log(u))));
    EXPECT_NEAR(detail::philox::log_positive(static_cast<float>(u)), std::log(static_cast<float>(u)),
                3e-7 * std::max(1.0, std::fabs(std::log(u))));
  }
  for (int k = 0; k < 1000; ++k) {
    const double u = k / 1000.0;
    double s, c;
    detail::philox::sincos_turns(u, s, c);
    EXPECT_NEAR(s, std::sin(2 * M_PI * u), 1e-15);
    EXPECT_NEAR(c, std::cos(2 * M_PI * u), 1e-15);
    float sf, cf;
    detail::philox::sincos_turns(static_cast<float>(u), sf, cf);
    EXPECT_NEAR(sf, std::sin(2 * M_PI * static_cast<float>(u)), 4e-7);
    EXPECT_NEAR(cf, std::cos(2 * M_PI * static_cast<float>(u)), 4e-7);
  }
}

// The kernels' fast paths against the reference functions, to the bit. Box-Muller's float
// inputs have 24 random bits, so every possible input is checked.
std::uint32_t float_bits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

TEST(Philox, FastBoxMullerPiecesAreExhaustivelyIdentical) {
  using namespace detail::philox;
  std::int64_t log_diff = 0, sin_diff = 0, cos_diff = 0;
  for (std::uint32_t k = 0; k < (1u << 24); ++k) {
    const std::uint32_t w = (k << 8) | (k & 0xFFu);  // low bits are ignored: vary them anyway
    log_diff += float_bits(log_open0_word(w)) != float_bits(log_positive(uniform24_open0(w)));
    float s0, c0, s1, c1;
    sincos_turns(uniform24(w), s0, c0);
    sincos_word(w, s1, c1);
    sin_diff += float_bits(s0) != float_bits(s1);
    cos_diff += float_bits(c0) != float_bits(c1);
  }
  EXPECT_EQ(log_diff, 0);
  EXPECT_EQ(sin_diff, 0);
  EXPECT_EQ(cos_diff, 0);
}

TEST(Philox, LanesMatchGroupWords) {
  using namespace detail::philox;
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int t = 0; t < 20000; ++t) {
    const std::uint64_t seed = next(), offset = t % 3 ? next() : (t & 0xFF), group = next() >> (t % 40);
    const PhiloxLanes lanes(seed, offset, static_cast<std::uint32_t>(group >> 32));
    const Words a = lanes(static_cast<std::uint32_t>(group)), b = group_words(seed, offset, group);
    for (int e = 0; e < 4; ++e) ASSERT_EQ(a.w[e], b.w[e]) << seed << " " << offset << " " << group;
  }
}

template <class T, detail::philox::FastDraw K>
void expect_fast_group_matches(double a, double b) {
  using namespace detail::philox;
  RandomDesc d;
  d.kind = (K == FastDraw::kUnitUniform || K == FastDraw::kUniform) ? RandomKind::Uniform : RandomKind::Normal;
  d.seed = 0x0123456789ABCDEFull;
  d.offset = 77;
  d.a = a;
  d.b = b;
  const DrawParams<T> p = draw_params<T>(d);
  FastDraw kind{};
  ASSERT_TRUE(fast_draw_of(p, kind));
  ASSERT_EQ(kind, K);
  for (std::uint64_t g = 0; g < 200000; ++g) {
    T x[4], y[4];
    fast_group<T, K>(p, group_words(p.seed, p.offset, g), x);
    draw_group<T>(p, g, 4, nullptr, y);
    ASSERT_EQ(std::memcmp(x, y, sizeof x), 0) << g;
  }
  // u1 = 1 gives r = -0 and z = -0: the unit form's z + 0 and a + b z agree on +0.
  std::uint32_t w0 = 0xFFFFFF00u;
  float z0, z1, r0, r1;
  box_muller_words(w0, 0x12345600u, z0, z1);
  box_muller(uniform24_open0(w0), uniform24(0x12345600u), r0, r1);
  EXPECT_EQ(float_bits(z0), float_bits(r0));
  EXPECT_EQ(float_bits(z1), float_bits(r1));
}

TEST(Philox, FastGroupsMatchDrawGroup) {
  using detail::philox::FastDraw;
  expect_fast_group_matches<float, FastDraw::kUnitUniform>(0, 1);
  expect_fast_group_matches<float, FastDraw::kUniform>(-2, 5);
  expect_fast_group_matches<float, FastDraw::kUnitNormal>(0, 1);
  expect_fast_group_matches<float, FastDraw::kNormal>(1.5, 0.25);
  expect_fast_group_matches<Half, FastDraw::kUnitUniform>(0, 1);
  expect_fast_group_matches<Half, FastDraw::kNormal>(-1, 3);
  expect_fast_group_matches<BFloat16, FastDraw::kUnitNormal>(0, 1);
  expect_fast_group_matches<BFloat16, FastDraw::kUniform>(3, 0.5);
  // a = -0 is not the unit form: -0 + z keeps a -0 that z + 0 would turn into +0.
  RandomDesc d;
  d.kind = RandomKind::Normal;
  d.a = -0.0;
  d.b = 1;
  detail::philox::FastDraw kind{};
  ASSERT_TRUE(detail::philox::fast_draw_of(detail::philox::draw_params<float>(d), kind));
  EXPECT_EQ(kind, FastDraw::kNormal);
}

TEST(Random, StateSaveRestoreRepeats) {
  random::manual_seed(Device::cpu(), 1234);
  EXPECT_EQ(random::get_state(Device::cpu()), (random::RngState{1234, 0}));
  const random::RngState saved = random::get_state(Device::cpu());
  const Tensor a = random::randn({1000}, DType::F32);
  EXPECT_EQ(random::get_state(Device::cpu()).offset, 1u);  // one offset per call
  const Tensor b = random::randn({1000}, DType::F32);
  EXPECT_NE(a.to_bytes(), b.to_bytes());
  random::set_state(Device::cpu(), saved);
  EXPECT_EQ(random::randn({1000}, DType::F32).to_bytes(), a.to_bytes());
  EXPECT_EQ(random::randn({1000}, DType::F32).to_bytes(), b.to_bytes());
  random::Generator g(1234);
  EXPECT_EQ(random::randn({1000}, DType::F32, Device::cpu(), &g).to_bytes(), a.to_bytes());
  // A failed call takes no offset.
  const auto before = g.state();
  EXPECT_THROW(random::randn({4}, DType::I32, Device::cpu(), &g), Error);
  EXPECT_EQ(g.state(), before);
  EXPECT_EQ(stream_count(Device::cpu()), 1);
}

// Kolmogorov-Smirnov statistic of sorted samples against a CDF.
template <class Cdf>
double ks_statistic(std::vector<double> x, Cdf cdf) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - i / n, (i + 1) / n - f});
  }
  return d;
}

constexpr std::int64_t kSamples = 10'000'000;
// At n = 10^7 the KS statistic exceeds 1.95 / sqrt(n) with probability 0.001.
const double kKsBound = 1.95 / std::sqrt(static_cast<double>(kSamples));

TEST(RandomStatistics, UniformF32AndF64) {
  for (DType dtype : {DType::F32, DType::F64}) {
    random::Generator g(99);
    const std::vector<double> x = random::rand({kSamples}, dtype, Device::cpu(), &g).to_vector<double>();
    double mean = 0, var = 0;
    for (double v : x) {
      ASSERT_TRUE(v >= 0 && v < 1);
      mean += v;
    }
    mean /= kSamples;
    for (double v : x) var += (v - mean) * (v - mean);
    var /= kSamples - 1;
    // sd of the mean: sqrt(1/12 / n) = 9.1e-5; of the variance: ~ sqrt(1/180 / n) = 2.4e-5.
    EXPECT_NEAR(mean, 0.5, 5 * 9.2e-5) << dtype_name(dtype);
    EXPECT_NEAR(var, 1.0 / 12, 5 * 2.4e-5) << dtype_name(dtype);
    EXPECT_LT(ks_statistic(x, [](double v) { return v; }), kKsBound) << dtype_name(dtype);
  }
}

TEST(RandomStatistics, NormalF32AndF64) {
  for (DType dtype : {DType::F32, DType::F64}) {
    random::Generator g(7);
    const std::vector<double> x = random::randn({kSamples}, dtype, Device::cpu(), &g).to_vector<double>();
    double mean = 0, var = 0;
    for (double v : x) mean += v;
    mean /= kSamples;
    for (double v : x) var += (v - mean) * (v - mean);
    var /= kSamples - 1;
    // sd of the mean 3.2e-4; of the variance sqrt(2 / n) = 4.5e-4.
    EXPECT_NEAR(mean, 0.0, 5 * 3.2e-4) << dtype_name(dtype);
    EXPECT_NEAR(var, 1.0, 5 * 4.5e-4) << dtype_name(dtype);
    EXPECT_LT(ks_statistic(x, [](double v) { return 0.5 * std::erfc(-v / std::sqrt(2.0)); }), kKsBound)
        << dtype_name(dtype);
  }
}

TEST(RandomStatistics, RandintAndBernoulli) {
  random::Generator g(5);
  const std::vector<std::int64_t> k = random::randint(-3, 4, {kSamples}, DType::I64, Device::cpu(), &g).to_vector<std::int64_t>();
  std::vector<double> counts(7, 0);
  for (auto v : k) {
    ASSERT_TRUE(v >= -3 && v < 4);
    counts[static_cast<std::size_t>(v + 3)] += 1;
  }
  for (double c : counts) EXPECT_NEAR(c / kSamples, 1.0 / 7, 5 * std::sqrt(1.0 / 7 * 6 / 7 / kSamples));
  const double p = 0.3;
  const std::vector<float> b = random::bernoulli({kSamples}, p, DType::F32, Device::cpu(), &g).to_vector<float>();
  double ones = 0;
  for (float v : b) ones += v;
  EXPECT_NEAR(ones / kSamples, p, 4 * std::sqrt(p * (1 - p) / kSamples));
}

TEST(RandomStatistics, DropoutKeptFraction) {
  random::Generator g(11);
  for (double p : {0.1, 0.5, 0.9}) {
    const Tensor x = ones({kSamples}, DType::F32);
    const auto r = nn::dropout(x, p, &g);
    const std::vector<float> m = r.mask.to_vector<float>();
    double kept = 0;
    for (float v : m) kept += v;
    const double q = 1 - p;
    EXPECT_NEAR(kept / kSamples, q, 4 * std::sqrt(p * q / kSamples)) << "p = " << p;
    const std::vector<float> out = r.output.to_vector<float>();
    for (std::size_t i = 0; i < out.size(); i += 9973)
      ASSERT_EQ(out[i], m[i] ? static_cast<float>(1 / q) : 0.f);
  }
}

// normal_ and uniform_ into a contiguous view off the 16-byte grid (its buffer() is a copy):
// the numbers once landed in that copy and the view kept its values. They must be the numbers
// the same state draws into an aligned tensor.
TEST(RandomInPlace, FillsContiguousViewsOffTheGrid) {
  for (const bool normal : {true, false}) {
    const Tensor view = full({10}, 7.0).slice(0, 1, 10);
    const Tensor aligned = full({9}, 7.0);
    random::manual_seed(21);
    normal ? random::normal_(view, 1, 2) : random::uniform_(view, -1, 3);
    random::manual_seed(21);
    normal ? random::normal_(aligned, 1, 2) : random::uniform_(aligned, -1, 3);
    EXPECT_EQ(view.to_vector<float>(), aligned.to_vector<float>()) << (normal ? "normal_" : "uniform_");
    EXPECT_NE(view.to_vector<float>()[0], 7.0f);
  }
}

}  // namespace
}  // namespace ferrite
