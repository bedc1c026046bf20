// Device helpers of the shape family's kernels: element types by size, and a divider by a
// runtime constant that costs a multiply-high instead of a division (index arithmetic is the
// main cost of a strided copy of 16-byte elements).
#pragma once

#include <cstdint>

namespace ferrite::cuda::shape {

/// The type that moves one element of `Bytes` bytes (16: a vector of four words).
template <int Bytes> struct Element;
template <> struct Element<1> { using type = std::uint8_t; };
template <> struct Element<2> { using type = std::uint16_t; };
template <> struct Element<4> { using type = std::uint32_t; };
template <> struct Element<8> { using type = uint2; };
template <> struct Element<16> { using type = uint4; };
template <int Bytes>
using element_t = typename Element<Bytes>::type;

/// n / d and n % d for 0 <= n < 2^31 and 1 <= d < 2^31 (the round-up method of Granlund
/// and Montgomery): q = (umulhi(n, magic) + n) >> shift; n + umulhi stays below 2^32.
struct FastDivmod {
  std::uint32_t divisor = 1;
  std::uint32_t magic = 0;
  std::uint32_t shift = 0;

  FastDivmod() = default;
  __host__ explicit FastDivmod(std::uint32_t d) : divisor(d) {
    while ((std::uint64_t(1) << shift) < d) ++shift;
    magic = static_cast<std::uint32_t>(((std::uint64_t(1) << 32) * ((std::uint64_t(1) << shift) - d)) / d + 1);
  }
  __device__ __forceinline__ std::uint32_t div(std::uint32_t n) const { return (__umulhi(n, magic) + n) >> shift; }
};

}  // namespace ferrite::cuda::shape
