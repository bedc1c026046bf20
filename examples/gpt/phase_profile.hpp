// Where a training step's time goes, phase by phase (`ferrite train --profile`). A phase is a
// scope bracketed by device synchronisations, so its time is the work it launched plus about
// one launch latency; a profiled step is slower than a free-running one (no overlap of the
// host with the device), and the table says so by showing the profiled step time beside it.
// With no profile active a phase costs one pointer test.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

class PhaseProfile {
 public:
  explicit PhaseProfile(Device device) : device_(device) {}
  Device device() const { return device_; }
  /// Adds seconds to `phase` (phases keep the order in which they first appear).
  void add(const char* phase, double seconds);
  /// A table of each phase's milliseconds per step and share of the phases' sum, for `steps`
  /// profiled steps whose wall time was `step_seconds` in all.
  void print(std::ostream& out, std::int64_t steps, double step_seconds) const;

 private:
  Device device_;
  std::vector<std::pair<std::string, double>> totals_;
};

/// The profile this thread's phases report to; null (the default) turns phases off.
PhaseProfile* active_profile();
void set_active_profile(PhaseProfile* profile);

/// One phase: synchronises the device and starts the clock when a profile is active, and on
/// scope exit synchronises again and adds the elapsed time. A phase opened inside another
/// counts nothing of its own (its time stays the outer phase's).
class Phase {
 public:
  explicit Phase(const char* name);
  ~Phase();
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  const char* name_;
  PhaseProfile* profile_;
  std::int64_t start_ns_ = 0;
};

}  // namespace ferrite::gpt
