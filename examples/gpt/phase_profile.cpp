#include "examples/gpt/phase_profile.hpp"

#include <chrono>
#include <cstdio>
#include <ostream>

namespace ferrite::gpt {

namespace {
thread_local PhaseProfile* g_active = nullptr;
thread_local bool g_in_phase = false;  // a phase inside another adds to the outer one only

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

PhaseProfile* active_profile() { return g_active; }
void set_active_profile(PhaseProfile* profile) { g_active = profile; }

void PhaseProfile::add(const char* phase, double seconds) {
  for (auto& [name, total] : totals_)
    if (name == phase) {
      total += seconds;
      return;
    }
  totals_.emplace_back(phase, seconds);
}

void PhaseProfile::print(std::ostream& out, std::int64_t steps, double step_seconds) const {
  double sum = 0;
  for (const auto& entry : totals_) sum += entry.second;
  const double per_step = steps > 0 ? 1e3 / static_cast<double>(steps) : 0;
  char line[160];
  std::snprintf(line, sizeof line, "profile: %lld steps on %s, each phase between device synchronisations\n",
                static_cast<long long>(steps), device_.str().c_str());
  out << line;
  std::snprintf(line, sizeof line, "  %-24s %10s %7s\n", "phase", "ms/step", "share");
  out << line;
  for (const auto& [name, total] : totals_) {
    std::snprintf(line, sizeof line, "  %-24s %10.3f %6.1f%%\n", name.c_str(), total * per_step,
                  sum > 0 ? 100.0 * total / sum : 0.0);
    out << line;
  }
  std::snprintf(line, sizeof line, "  %-24s %10.3f\n  %-24s %10.3f (the phases' sum plus what lies between them)\n",
                "phases' sum", sum * per_step, "profiled step", step_seconds * per_step);
  out << line;
}

Phase::Phase(const char* name) : name_(name), profile_(g_in_phase ? nullptr : g_active) {
  if (!profile_) return;
  synchronize(profile_->device());
  g_in_phase = true;  // after the call that may throw: no destructor runs if the constructor does
  start_ns_ = now_ns();
}

Phase::~Phase() {
  if (!profile_) return;
  try {
    synchronize(profile_->device());
  } catch (const Error&) {
    // An error of the phase's own work surfaces at the next call that waits for the device;
    // a destructor must not throw it.
  }
  profile_->add(name_, static_cast<double>(now_ns() - start_ns_) * 1e-9);
  g_in_phase = false;
}

}  // namespace ferrite::gpt
