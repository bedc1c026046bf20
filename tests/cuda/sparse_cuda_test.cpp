// Sparse products on the GPU beyond the conformance suite: host threads running the own
// SpGEMM kernel at once with C rows of different widths. Its fill kernel asks for n values of
// shared memory per block, above the 48 KB that needs an opt-in for the wide products, and the
// opt-in is a per-device setting of the kernel that every thread shares. Inputs are small
// integers, so every product is exact in F64 and compared with the CPU backend bit for bit.
#include <gtest/gtest.h>

#include <atomic>
#include <exception>
#include <random>

#include "cuda/threaded_calls.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA

namespace ferrite {
namespace {

// Integers in [-4, 4], about `density` of them nonzero, as F64.
Tensor sparse_integers(const Shape& shape, double density, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-4, 4);
  std::bernoulli_distribution stored(density);
  std::vector<double> v(static_cast<std::size_t>(shape_numel(shape)));
  for (double& x : v) x = stored(rng) ? value(rng) : 0;
  return from_vector(v, shape);
}

TEST(CudaSparse, HostThreadsRunTheOwnSpgemmAtDifferentWidths) {
  // Alternate calls: C rows of 8192 F64 values (64 KB of accumulator, past the 48 KB default)
  // and of 64 (a few hundred bytes). A thread's narrow product must never leave the kernel
  // unable to launch another thread's wide one, and every result is the CPU backend's.
  const Device gpu = Device::cuda(0);
  const Tensor a = sparse_integers({48, 40}, 0.2, 1);
  const Tensor wide_b = sparse_integers({40, 8192}, 0.02, 2), narrow_b = sparse_integers({40, 64}, 0.3, 3);
  auto product = [](const Tensor& x, const Tensor& y, Device d) {
    return sparse::to_dense(sparse::spgemm(sparse::from_dense(x.to(d)), sparse::from_dense(y.to(d))))
        .to(Device::cpu())
        .to_bytes();
  };
  const auto wide = product(a, wide_b, Device::cpu()), narrow = product(a, narrow_b, Device::cpu());
  std::atomic<int> calls{0};
  auto same = [&] {
    try {
      return calls.fetch_add(1) % 2 == 0 ? product(a, wide_b, gpu) == wide : product(a, narrow_b, gpu) == narrow;
    } catch (const std::exception&) {  // a launch refused for its shared memory
      return false;
    }
  };
  EXPECT_EQ(cuda_tests::disagreements_across_threads(8, 16, same), 0);
}

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA
