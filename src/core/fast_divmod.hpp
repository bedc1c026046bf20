// Division of 32-bit indices by a divisor fixed at launch, as a multiply-high and a shift
// (Granlund and Montgomery, "Division by invariant integers using multiplication", PLDI'94).
// A GPU has no integer divide instruction: n / d compiles to some twenty instructions, which
// an index decomposition per element pays once per dim. Shared by host and device code so
// the host tests (tests/unit/core_test.cpp) check the very arithmetic the kernels run.
#pragma once

#include <cstdint>

#include "ferrite/half.hpp"

namespace ferrite::detail {

/// Exact n / divisor for 0 <= n < 2^31 and 1 <= divisor <= 2^31 (the callers keep every
/// element index and offset below 2^31; see elementwise_layout.hpp, offsets_fit_32_bits).
struct FastDivmod {
  std::uint32_t divisor = 1;
  std::uint32_t magic = 0;
  std::uint32_t shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(std::uint32_t d) : divisor(d) {
    // shift = ceil(log2 d); magic = floor(2^32 (2^shift - d) / d) + 1, which is below 2^32
    // because 2^(shift-1) < d. Then n / d = (mulhi(n, magic) + n) >> shift; the sum stays
    // below 2^32 because mulhi(n, magic) <= n < 2^31.
    while (shift < 32 && (std::uint64_t(1) << shift) < d) ++shift;
    magic = static_cast<std::uint32_t>(((std::uint64_t(1) << 32) * ((std::uint64_t(1) << shift) - d)) / d + 1);
  }

  FERRITE_HOST_DEVICE std::uint32_t div(std::uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const std::uint32_t high = __umulhi(n, magic);
#else
    const auto high = static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * magic) >> 32);
#endif
    return (high + n) >> shift;
  }
};

}  // namespace ferrite::detail
