// Backend side of ferrite/testing.hpp: allocators ask whether to poison and guard, and
// report guards found overwritten.
#pragma once

#include <cstdint>

#include "ferrite/testing.hpp"

namespace ferrite::detail {
void record_guard_violation();
/// Whether the kGuardBytes at `guard` (host memory) still hold kGuardByte.
bool guard_intact(const std::uint8_t* guard);
}  // namespace ferrite::detail
