// The random kernels on a GPU against the CPU backend, bit for bit, at the sizes and offsets
// that reach every branch of src/cuda/training/random_fill.cu: several waves of the fast
// kernel's grid-stride loop (the conformance cases fit in one), whole tiles exactly, the
// groups after the last whole tile and a partial last group, and outputs on and off the
// 16-byte grid (the fast kernel, the generic kernel's packed and element stores).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ferrite/ferrite.hpp"
#include "ferrite/random.hpp"

#if FERRITE_WITH_CUDA

namespace ferrite {
namespace {

constexpr std::uint64_t kSeed = 0xA5A5A5A55A5A5A5Aull;

// Four draws into `n` elements starting `at` elements into a fresh buffer of `device`.
std::vector<Tensor> draws(DType dtype, std::int64_t n, std::int64_t at, Device device) {
  random::Generator g(kSeed, device);
  g.set_state({kSeed, 0xFFFFFFFEull});  // the offset crosses 2^32 on the way
  std::vector<Tensor> out;
  const Tensor base = zeros({n + at + 8}, dtype, device);
  Tensor u = base.narrow(0, at, n);
  random::uniform_(u, 0, 1, &g);  // rand's unit form
  out.push_back(u.clone());
  random::uniform_(u, -3, 5, &g);
  out.push_back(u.clone());
  random::normal_(u, 0, 1, &g);  // randn's unit form
  out.push_back(u.clone());
  random::normal_(u, 2, 0.5, &g);
  out.push_back(u.clone());
  if (at == 0) {
    out.push_back(random::rand({n}, dtype, device, &g));
    out.push_back(random::randn({n}, dtype, device, &g));
  }
  return out;
}

TEST(CudaRandom, FastAndGenericKernelsMatchTheCpuBitForBit) {
  // 0..9: partial groups only; 4096: whole tiles of 4 groups x 256 threads; 4096 * 3 + 4 *
  // 257 + 3: whole tiles, then groups after them, then a partial group; 3 * 2^22 + 5: three
  // waves of resident blocks on an H200.
  const std::vector<std::int64_t> sizes = {0, 1, 3, 4, 5, 7, 8, 9, 4096, 4096 * 3 + 4 * 257 + 3, (3 << 22) + 5};
  for (const DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    for (const std::int64_t n : sizes) {
      for (const std::int64_t at : {0, 1, 4, 8}) {
        if (n > 100000 && at != 0 && at != 8) continue;  // the big size once on and once off the start
        const std::vector<Tensor> cpu = draws(dtype, n, at, Device::cpu());
        const std::vector<Tensor> gpu = draws(dtype, n, at, Device::cuda(0));
        ASSERT_EQ(cpu.size(), gpu.size());
        for (std::size_t i = 0; i < cpu.size(); ++i)
          EXPECT_TRUE(gpu[i].to(Device::cpu()).to_bytes() == cpu[i].to_bytes())
              << dtype_name(dtype) << " n=" << n << " at=" << at << " draw " << i;
      }
    }
  }
}

}  // namespace
}  // namespace ferrite

#endif
