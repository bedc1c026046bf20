#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/memory_checks.hpp"

namespace ferrite::testing {
namespace {
std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag{[] {
    const char* env = std::getenv("FERRITE_MEMORY_CHECKS");
    return env != nullptr && std::strcmp(env, "0") != 0;
  }()};
  return flag;
}
std::atomic<std::int64_t> violations{0};
}  // namespace

void set_memory_checks(bool enabled) { enabled_flag().store(enabled); }
bool memory_checks_enabled() { return enabled_flag().load(std::memory_order_relaxed); }
std::int64_t guard_violations() { return violations.load(); }

}  // namespace ferrite::testing

namespace ferrite::detail {
void record_guard_violation() { testing::violations.fetch_add(1); }

bool guard_intact(const std::uint8_t* guard) {
  for (std::size_t i = 0; i < testing::kGuardBytes; ++i)
    if (guard[i] != testing::kGuardByte) return false;
  return true;
}
}  // namespace ferrite::detail
