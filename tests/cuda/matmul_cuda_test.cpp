// Matrix products on the GPU beyond the conformance suite: host threads building and sharing
// cached cuBLASLt plans at once (also a bias-epilogue plan with a bias per thread), products
// on a second stream (its own workspace), and operands on different devices. Inputs are small integers, so every product below is
// exact in F32 (and in TF32, which holds integers up to 2048) and results are compared
// with the CPU backend bit for bit.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include <cuda_runtime_api.h>

namespace ferrite {
namespace {

// Integers in [-4, 4]: sums of up to 2^18 products stay exact in F32.
Tensor small_integers(const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (float& x : v) x = static_cast<float>(dist(rng));
  return from_vector(v, shape);
}

std::vector<std::uint8_t> product_bytes(const Tensor& a, const Tensor& b, const MatmulOptions& options, Device d) {
  return matmul(a.to(d), b.to(d), options).to_bytes();
}

TEST(CudaMatmul, HostThreadsShareThePlanCache) {
  // Eight threads, each with shapes of its own (new plans built concurrently) and one shape
  // common to all (the same plan found or built by several threads at once).
  std::vector<std::thread> threads;
  std::vector<std::string> failures(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &failures] {
      try {
        for (int round = 0; round < 4; ++round) {
          const std::int64_t m = 33 + t, k = 64 + 8 * round, n = 17 + round;
          const Tensor a = small_integers({3, m, k}, 100 * t + round), b = small_integers({3, k, n}, 7 + t);
          const MatmulOptions options{.compute = round % 2 ? MatmulCompute::TF32 : MatmulCompute::Default};
          if (product_bytes(a, b, options, Device::cuda(0)) != product_bytes(a, b, options, Device::cpu()))
            failures[static_cast<std::size_t>(t)] += "shape " + std::to_string(round) + " differs; ";
          const Tensor c = small_integers({128, 96}, 5), d = small_integers({96, 80}, 6);
          if (product_bytes(c, d, {}, Device::cuda(0)) != product_bytes(c, d, {}, Device::cpu()))
            failures[static_cast<std::size_t>(t)] += "common shape differs; ";
        }
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] += e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[static_cast<std::size_t>(t)], "") << "thread " << t;
}

TEST(CudaMatmul, HostThreadsShareABiasPlan) {
  // nn::linear's bias pointer is set on the shared cuBLASLt plan per call (under the plan's
  // mutex): eight threads on one shape, so one plan, each with a bias of its own, must each
  // get their own bias added, round after round. 33 out features: rows off the 16-byte grid.
  const Tensor x = small_integers({2, 65, 96}, 11), w = small_integers({33, 96}, 12);
  std::vector<std::thread> threads;
  std::vector<std::string> failures(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &x, &w, &failures] {
      try {
        const Tensor bias = small_integers({33}, 200 + static_cast<unsigned>(t));
        const std::vector<std::uint8_t> expected = nn::linear(x, w, bias).to_bytes();
        const Device gpu = Device::cuda(0);
        const Tensor gx = x.to(gpu), gw = w.to(gpu), gbias = bias.to(gpu);
        for (int round = 0; round < 16; ++round)
          if (nn::linear(gx, gw, gbias).to_bytes() != expected)
            failures[static_cast<std::size_t>(t)] += "round " + std::to_string(round) + " differs; ";
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] += e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[static_cast<std::size_t>(t)], "") << "thread " << t;
}

TEST(CudaMatmul, SecondStreamUsesItsOwnWorkspace) {
  // 256^3 F32 takes a split-K plan on the H200 (it needs the workspace); run it on the
  // default stream and on another one at the same time.
  const Tensor a = small_integers({256, 256}, 1), b = small_integers({256, 256}, 2);
  const std::vector<std::uint8_t> expected = matmul(a, b).to_bytes();
  const Tensor ga = a.to(Device::cuda(0)), gb = b.to(Device::cuda(0));
  synchronize(Device::cuda(0));  // the uploads ran on the default stream; the other stream reads them
  cudaStream_t other = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  std::vector<Tensor> on_default, on_other;
  for (int i = 0; i < 8; ++i) {
    on_default.push_back(matmul(ga, gb));
    const cuda::StreamGuard guard(0, other);
    on_other.push_back(matmul(ga, gb));
  }
  synchronize(Device::cuda(0));
  ASSERT_EQ(cudaStreamSynchronize(other), cudaSuccess);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(on_default[static_cast<std::size_t>(i)].to_bytes(), expected) << "default stream, call " << i;
    const cuda::StreamGuard guard(0, other);
    EXPECT_EQ(on_other[static_cast<std::size_t>(i)].to_bytes(), expected) << "second stream, call " << i;
  }
  on_other.clear();  // freed on the stream they were allocated on, before it is destroyed
  ASSERT_EQ(cudaStreamSynchronize(other), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(other), cudaSuccess);
}

TEST(CudaMatmul, OperandsOnDifferentDevicesAreAnError) {
  const std::string message = conformance::expect_error(
      [] { matmul(zeros({2, 3}, DType::F32, Device::cuda(0)), zeros({3, 2}, DType::F32, Device::cpu())); },
      ErrorKind::DeviceMismatch, "matmul: operands are on different devices");
  EXPECT_EQ(message, "");
}

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA
