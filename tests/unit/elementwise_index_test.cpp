// The index arithmetic behind the GPU engine's view kernels, checked on the host: the fast
// division they decompose indices with (the same code runs on the device), and the layout
// tests that choose 32-bit indexing and the transposing tile.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/elementwise_layout.hpp"
#include "core/fast_divmod.hpp"

namespace ferrite {
namespace {

constexpr std::uint32_t kBelow31 = (std::uint32_t(1) << 31) - 1;  // the largest index a kernel divides

TEST(FastDivmod, MatchesDivisionOverTheIndexRange) {
  std::vector<std::uint32_t> divisors;
  for (std::uint32_t d = 1; d <= 2048; ++d) divisors.push_back(d);
  for (std::uint32_t p = 11; p <= 31; ++p) {
    const std::uint32_t power = std::uint32_t(1) << p;
    for (std::uint32_t d : {power - 1, power, power + 1, power / 3 * 2 + 1}) divisors.push_back(d);
  }
  for (std::uint32_t d : {16383u, 16384u, 100003u, 65535u, 1000000007u, kBelow31}) divisors.push_back(d);
  std::mt19937 rng(7);
  for (const std::uint32_t d : divisors) {
    if (d > (std::uint32_t(1) << 31)) continue;  // outside the documented range
    const detail::FastDivmod divider(d);
    std::vector<std::uint32_t> numerators = {0, 1, d - 1, d, kBelow31, kBelow31 - 1, kBelow31 / d * d,
                                             kBelow31 / d * d - 1};
    if (d < kBelow31) numerators.push_back(d + 1);
    for (int i = 0; i < 2000; ++i) numerators.push_back(rng() & kBelow31);
    for (const std::uint32_t n : numerators) {
      if (n > kBelow31) continue;
      ASSERT_EQ(divider.div(n), n / d) << n << " / " << d;
    }
  }
}

ElementwiseLayout layout_of(std::vector<std::int64_t> sizes, std::vector<std::vector<std::int64_t>> strides) {
  ElementwiseLayout layout;
  layout.rank = static_cast<int>(sizes.size());
  layout.num_inputs = static_cast<int>(strides.size());
  layout.numel = 1;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    layout.sizes[d] = sizes[d];
    layout.numel *= sizes[d];
  }
  for (std::size_t k = 0; k < strides.size(); ++k)
    for (std::size_t d = 0; d < sizes.size(); ++d) layout.strides[k][d] = strides[k][d];
  layout.contiguous = false;
  return layout;
}

TEST(ElementwiseLayoutChoice, ThirtyTwoBitOffsetsNeedEveryOffsetBelowTwoToThe31) {
  constexpr std::int64_t k31 = std::int64_t(1) << 31;
  // A narrowed [16384, 16383] view of a [16384, 16384] tensor: offsets up to 2^28.
  EXPECT_TRUE(offsets_fit_32_bits(layout_of({16384, 16383}, {{16384, 1}, {16383, 1}})));
  // Few elements, far apart: three rows of a tensor with 2^31-element rows.
  EXPECT_FALSE(offsets_fit_32_bits(layout_of({3, 4}, {{k31, 1}})));
  EXPECT_TRUE(offsets_fit_32_bits(layout_of({2, 4}, {{k31 - 8, 1}})));   // largest offset 2^31 - 5
  EXPECT_FALSE(offsets_fit_32_bits(layout_of({2, 4}, {{k31 - 3, 1}})));  // largest offset 2^31
  EXPECT_FALSE(offsets_fit_32_bits(layout_of({2, k31 / 2}, {{0, 1}})));  // 2^31 elements
  EXPECT_TRUE(offsets_fit_32_bits(layout_of({2, k31 / 2 - 1}, {{0, 1}})));
  EXPECT_FALSE(offsets_fit_32_bits(layout_of({4, 4}, {{-4, 1}})));       // a negative stride
  // A stride whose product with the size overflows int64 is not mistaken for a small one.
  EXPECT_FALSE(offsets_fit_32_bits(layout_of({3, 2}, {{std::int64_t(1) << 62, 1}})));
  // Broadcast dims (stride 0) address nothing new; size-1 dims neither.
  EXPECT_TRUE(offsets_fit_32_bits(layout_of({1, 1000}, {{k31 * 4, 1}})));
  EXPECT_TRUE(offsets_fit_32_bits(layout_of({1 << 20, 1000}, {{0, 1}})));
}

TEST(ElementwiseLayoutChoice, TheTileTakesRankTwoLayoutsWithAScatteredOperand) {
  const std::size_t f32[] = {4, 4, 4}, f64[] = {8, 8, 8}, where[] = {1, 4, 4};
  // x.t() + y: x steps by 1 along rows, 16384 along cols.
  EXPECT_TRUE(uses_transpose_tile(layout_of({16384, 16384}, {{1, 16384}, {16384, 1}}), f32));
  // x.t() + row broadcast, and a column-broadcast partner.
  EXPECT_TRUE(uses_transpose_tile(layout_of({64, 33}, {{1, 64}, {0, 1}}), f32));
  EXPECT_TRUE(uses_transpose_tile(layout_of({64, 33}, {{1, 64}, {1, 0}}), f32));
  // Columns 8 floats apart are scattered (a sector each); 4 apart (16 bytes) are not.
  EXPECT_TRUE(uses_transpose_tile(layout_of({5, 7}, {{1, 8}, {7, 1}}), f32));
  EXPECT_FALSE(uses_transpose_tile(layout_of({5, 7}, {{1, 4}, {7, 1}}), f32));
  EXPECT_TRUE(uses_transpose_tile(layout_of({5, 7}, {{1, 4}, {7, 1}}), f64));
  // A narrowed view alone (rows off the 16-byte grid) reads well: no tile.
  EXPECT_FALSE(uses_transpose_tile(layout_of({16384, 16383}, {{16384, 1}, {16384, 1}}), f32));
  // Scattered both ways (x.t()[:, ::2] style): no direction reads well.
  EXPECT_FALSE(uses_transpose_tile(layout_of({64, 64}, {{16, 1024}, {64, 1}}), f32));
  // Rank 1 and rank 3 layouts go elsewhere.
  EXPECT_FALSE(uses_transpose_tile(layout_of({1000}, {{16}, {1}}), f32));
  EXPECT_FALSE(uses_transpose_tile(layout_of({2, 64, 64}, {{4096, 1, 64}, {4096, 64, 1}}), f32));
  // Offsets past 32 bits: no tile (the front end copies, the engine indexes in 64 bits).
  EXPECT_FALSE(uses_transpose_tile(layout_of({64, 64}, {{1, std::int64_t(1) << 26}, {64, 1}}), f32));
  // where(cond, x.t(), y): Bool cond read directly beside a tiled F32 operand.
  EXPECT_TRUE(uses_transpose_tile(layout_of({64, 33}, {{33, 1}, {1, 64}, {33, 1}}), where));
  // Empty.
  EXPECT_FALSE(uses_transpose_tile(layout_of({0, 64}, {{1, 64}, {64, 1}}), f32));
}

}  // namespace
}  // namespace ferrite
