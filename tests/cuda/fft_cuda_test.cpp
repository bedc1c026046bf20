// FFTs on the GPU beyond the conformance suite: the plan cache (a second call of the same
// shape makes no plan; capacity and eviction; capacity 0), C2R leaving its input untouched,
// host threads sharing plans at once, and a transform on a second stream.
#include <gtest/gtest.h>

#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda/threaded_calls.hpp"

namespace ferrite {
namespace {

Tensor ramp_complex(const Shape& shape, Device d) {
  std::vector<std::complex<float>> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = {static_cast<float>(i % 17) - 8, static_cast<float>(i % 5)};
  return from_vector(v, shape, d);
}

class FftCuda : public ::testing::Test {};

TEST_F(FftCuda, SecondCallWithTheSameShapeIsAPlanCacheHit) {
  const Device gpu = Device::cuda(0);
  fft::clear_plan_cache(gpu);
  const Tensor x = ramp_complex({8, 96}, gpu);
  (void)fft::fft(x);
  const FftPlanCacheInfo first = fft::plan_cache_info(gpu);
  EXPECT_EQ(first.misses, 1);
  EXPECT_EQ(first.hits, 0);
  EXPECT_EQ(first.size, 1u);
  (void)fft::fft(x);
  (void)fft::ifft(x);  // the same plan: the direction is an argument of the execution
  const FftPlanCacheInfo second = fft::plan_cache_info(gpu);
  EXPECT_EQ(second.misses, 1);
  EXPECT_EQ(second.hits, 2);
  EXPECT_EQ(second.size, 1u);
}

TEST_F(FftCuda, CapacityEvictsLeastRecentlyUsedAndZeroKeepsNone) {
  const Device gpu = Device::cuda(0);
  fft::clear_plan_cache(gpu);
  fft::set_plan_cache_capacity(gpu, 2);
  const Tensor a = ramp_complex({4, 16}, gpu), b = ramp_complex({4, 32}, gpu), c = ramp_complex({4, 64}, gpu);
  (void)fft::fft(a);
  (void)fft::fft(b);
  (void)fft::fft(c);  // evicts a's plan
  EXPECT_EQ(fft::plan_cache_info(gpu).size, 2u);
  (void)fft::fft(b);
  EXPECT_EQ(fft::plan_cache_info(gpu).hits, 1);
  (void)fft::fft(a);
  EXPECT_EQ(fft::plan_cache_info(gpu).misses, 4);
  fft::set_plan_cache_capacity(gpu, 0);
  EXPECT_EQ(fft::plan_cache_info(gpu).size, 0u);
  const Tensor y = fft::fft(a);
  EXPECT_EQ(fft::plan_cache_info(gpu).size, 0u);
  EXPECT_EQ(y.shape(), a.shape());
  fft::set_plan_cache_capacity(gpu, 4096);
  fft::clear_plan_cache(gpu);
}

TEST_F(FftCuda, InverseRealTransformsLeaveTheirInputUnchanged) {
  const Device gpu = Device::cuda(0);
  const Tensor x = ramp_complex({3, 4, 9}, gpu);
  const auto before = x.to(Device::cpu()).to_bytes();
  (void)fft::irfft(x);
  (void)fft::irfftn(x);
  (void)fft::hfft(x, 15);
  EXPECT_EQ(x.to(Device::cpu()).to_bytes(), before);
}

TEST_F(FftCuda, ThreadsShareThePlanCache) {
  const Device gpu = Device::cuda(0);
  const Tensor x = ramp_complex({16, 4099}, gpu);
  const auto expected = fft::fft(x).to(Device::cpu()).to_bytes();
  auto same = [&] { return fft::fft(x).to(Device::cpu()).to_bytes() == expected; };
  EXPECT_EQ(cuda_tests::disagreements_across_threads(8, 10, same), 0);
}

}  // namespace
}  // namespace ferrite
#endif
