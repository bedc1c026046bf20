// conv2d's cuDNN route beyond the conformance suite: a second call of the same case builds no
// graph (the cache's hit/miss counters), each pass and the TF32 switch are graphs of their own,
// and F32, F16 and BF16 take the cuDNN route (an engine supports them) rather than im2col;
// host threads convolving at once share the graphs and get the single thread's bits.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include "cuda/conv/cudnn_conv.hpp"
#include "cuda/threaded_calls.hpp"

namespace ferrite {
namespace {

namespace cc = cuda::cudnn_conv;

class ConvCudnn : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cc::compiled_in()) GTEST_SKIP() << "built without the cuDNN frontend (conv2d uses im2col)";
    const char* env = std::getenv("FERRITE_CONV_CUDNN");
    if (env != nullptr && std::string(env) == "0") GTEST_SKIP() << "FERRITE_CONV_CUDNN=0 (conv2d uses im2col)";
    cc::clear_cache();
  }
  void TearDown() override { set_allow_tf32(false); }
};

Tensor ramp(const Shape& shape, DType dt) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 8;
  return from_vector(v, shape, Device::cuda(0)).to(dt);
}

TEST_F(ConvCudnn, SecondCallBuildsNoGraph) {
  const Tensor x = ramp({2, 16, 12, 12}, DType::F32), w = ramp({32, 16, 3, 3}, DType::F32);
  const nn::Conv2dOptions o{.padding = {1, 1}};
  (void)nn::conv2d(x, w, std::nullopt, o);
  cc::CacheStats s = cc::cache_stats();
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.hits, 0);
  EXPECT_EQ(s.unsupported, 0) << s.last_unsupported;
  (void)nn::conv2d(x, w, std::nullopt, o);
  s = cc::cache_stats();
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.size, 1);

  const Tensor g = ramp({2, 32, 12, 12}, DType::F32);
  (void)nn::conv2d_backward(g, x, w, o, {true, true, false});
  s = cc::cache_stats();
  EXPECT_EQ(s.misses, 3) << "dgrad and wgrad are graphs of their own";
  (void)nn::conv2d_backward(g, x, w, o, {true, true, false});
  s = cc::cache_stats();
  EXPECT_EQ(s.misses, 3);
  EXPECT_EQ(s.hits, 3);
  EXPECT_EQ(s.unsupported, 0) << s.last_unsupported;

  set_allow_tf32(true);  // another engine choice, so another graph
  (void)nn::conv2d(x, w, std::nullopt, o);
  EXPECT_EQ(cc::cache_stats().misses, 4);
  set_allow_tf32(false);
  (void)nn::conv2d(x, w, std::nullopt, o);
  EXPECT_EQ(cc::cache_stats().misses, 4);
  synchronize(Device::cuda(0));
}

TEST_F(ConvCudnn, FloatAndHalfTypesTakeTheCudnnRoute) {
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    cc::clear_cache();
    const Tensor x = ramp({4, 32, 14, 14}, dt), w = ramp({64, 32, 3, 3}, dt), g = ramp({4, 64, 7, 7}, dt);
    const nn::Conv2dOptions o{.stride = {2, 2}, .padding = {1, 1}};
    (void)nn::conv2d(x, w, std::nullopt, o);
    (void)nn::conv2d_backward(g, x, w, o, {true, true, false});
    const cc::CacheStats s = cc::cache_stats();
    EXPECT_EQ(s.misses, 3);
    EXPECT_EQ(s.unsupported, 0) << s.last_unsupported;
  }
  // F64: cuDNN may or may not have engines; either route is correct (the conformance suite
  // checks it), so only report which one ran.
  cc::clear_cache();
  const Tensor x = ramp({2, 8, 10, 10}, DType::F64), w = ramp({8, 8, 3, 3}, DType::F64);
  (void)nn::conv2d(x, w, std::nullopt, {.padding = {1, 1}});
  const cc::CacheStats s = cc::cache_stats();
  std::printf("conv2d F64 route: %s\n", s.unsupported == 0 ? "cuDNN" : ("im2col (" + s.last_unsupported + ")").c_str());
  synchronize(Device::cuda(0));
}

// Each thread runs on a cuDNN handle of its own and enqueues the shared graphs without the
// cache's lock: every result must still be the single-threaded one bit for bit (the engines
// are deterministic), and the three graphs are built once, by the first call.
TEST_F(ConvCudnn, ThreadsShareTheGraphs) {
  const Tensor x = ramp({4, 16, 20, 20}, DType::F32), w = ramp({32, 16, 3, 3}, DType::F32);
  const Tensor g = ramp({4, 32, 20, 20}, DType::F32);
  const nn::Conv2dOptions o{.padding = {1, 1}};
  auto bytes = [](const Tensor& t) { return t.to(Device::cpu()).to_bytes(); };
  auto all_passes = [&] {
    const nn::Conv2dGrads d = nn::conv2d_backward(g, x, w, o, {true, true, false});
    return std::vector{bytes(nn::conv2d(x, w, std::nullopt, o)), bytes(d.input), bytes(d.weight)};
  };
  const auto expected = all_passes();
  constexpr int kThreads = 6, kRounds = 8;
  EXPECT_EQ(cuda_tests::disagreements_across_threads(kThreads, kRounds, [&] { return all_passes() == expected; }), 0);
  const cc::CacheStats s = cc::cache_stats();
  EXPECT_EQ(s.misses, 3);
  EXPECT_EQ(s.hits, 3 * kThreads * kRounds);
  EXPECT_EQ(s.unsupported, 0) << s.last_unsupported;
}

}  // namespace
}  // namespace ferrite
#endif
