// The CPU matmul gives the same bits for any OpenMP thread count (docs/families/matmul.md):
// the output is cut into fixed tiles, each one single-threaded Eigen call. Before, Eigen's
// own threading chose its k-blocking from the thread count and F32 results moved by ~1e-6.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

Tensor random_f32(Shape shape, std::uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
  return from_vector<float>(v, std::move(shape));
}

#ifdef _OPENMP
// Runs f with `threads` OpenMP threads and returns the raw bytes of its result.
template <class F>
std::vector<std::uint8_t> bytes_with_threads(int threads, F&& f) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  const std::vector<std::uint8_t> bytes = f().to_bytes();
  omp_set_num_threads(before);
  return bytes;
}
#endif

TEST(MatmulDeterminism, SameBitsForAnyThreadCount) {
#ifndef _OPENMP
  GTEST_SKIP() << "built without OpenMP: one thread only";
#else
  const Tensor a = random_f32({333, 2000}, 1), b = random_f32({2000, 300}, 2);
  const Tensor bt = random_f32({300, 2000}, 3);  // for transpose_b
  const Tensor batch_a = random_f32({6, 70, 900}, 4), batch_b = random_f32({6, 900, 90}, 5);
  const std::vector<std::pair<const char*, std::function<Tensor()>>> products{
      {"f32", [&] { return matmul(a, b); }},
      {"f32 transpose_b", [&] { return matmul(a, bt, {.transpose_b = true}); }},
      {"f64", [&] { return matmul(a.to(DType::F64), b.to(DType::F64)); }},
      {"bf16", [&] { return matmul(a.to(DType::BF16), b.to(DType::BF16), {.out_dtype = DType::F32}); }},
      {"bmm", [&] { return bmm(batch_a, batch_b); }},
      {"alpha/beta", [&] {
         Tensor out = random_f32({333, 300}, 6);
         matmul_out(out, a, b, 0.5, 0.25);
         return out;
       }},
  };
  for (const auto& [name, product] : products) {
    const auto one = bytes_with_threads(1, product);
    for (int threads : {2, 3, 4})  // the bytes compared as a whole: a diff of them says nothing
      EXPECT_TRUE(bytes_with_threads(threads, product) == one) << name << ": 1 vs " << threads << " threads";
  }
#endif
}

}  // namespace
}  // namespace ferrite
