// Hooks for tests: poisoned allocations and guard bytes, on every backend.
#pragma once

#include <cstdint>

namespace ferrite::testing {

/// While enabled, every new allocation is filled with 0xFF bytes (NaN for floats, -1 for
/// integers) and followed by kGuardBytes of a known pattern that is checked when the
/// allocation is freed. Off by default; also switched on by FERRITE_MEMORY_CHECKS=1.
void set_memory_checks(bool enabled);
bool memory_checks_enabled();
/// Number of freed allocations whose guard bytes had been overwritten (process-wide).
std::int64_t guard_violations();

inline constexpr std::uint8_t kPoisonByte = 0xFF;
inline constexpr std::uint8_t kGuardByte = 0xA5;
inline constexpr std::size_t kGuardBytes = 256;

}  // namespace ferrite::testing
