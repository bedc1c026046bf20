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

/// (lo, hi) of every thread of the block, valid in thread 0. Blocks are full warps.
__device__ __forceinline__ void block_range(long long& lo, long long& hi) {
  for (int o = 16; o > 0; o /= 2) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
  }
  __shared__ long long warp_lo[32], warp_hi[32];
  if (threadIdx.x % 32 == 0) {
    warp_lo[threadIdx.x / 32] = lo;
    warp_hi[threadIdx.x / 32] = hi;
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (unsigned w = 1; w < blockDim.x / 32; ++w) {
      lo = min(lo, warp_lo[w]);
      hi = max(hi, warp_hi[w]);
    }
}

/// Folds the block's (lo, hi) into range[0..1]: one pair of integer atomics per block (exact,
/// so the result does not depend on the order; few, so they do not serialise the kernel).
__device__ __forceinline__ void fold_range(long long lo, long long hi, long long* range) {
  block_range(lo, hi);
  if (threadIdx.x == 0 && lo <= hi) {
    atomicMin(range, lo);
    atomicMax(range + 1, hi);
  }
}

}  // namespace ferrite::cuda::shape
