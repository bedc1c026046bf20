// Progress lines for the conformance program: a full CPU run takes minutes (far longer under
// the sanitizers, scripts/cpu-sanitize.sh), and with --gtest_brief=1 GoogleTest prints nothing
// until the end. This listener prints "progress: 64/635 tests, 0 failed, 41 s" after each
// tenth of the run. It registers itself at start-up, so the test program's main needs no change.
// With FERRITE_TEST_TRACE=<file>, the name of each test is written to that file as the test
// starts (the file is rewritten each time), so a run that dies (a segmentation fault, a killed
// sanitizer run) leaves the name of the test it died in; scripts/gpu-check.sh prints it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "conformance/conformance.hpp"

namespace ferrite::conformance {
namespace {

class ProgressListener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo& info) override {
    static const char* trace = std::getenv("FERRITE_TEST_TRACE");
    if (trace == nullptr || *trace == 0) return;
    if (std::FILE* f = std::fopen(trace, "w")) {
      std::fprintf(f, "%s.%s\n", info.test_suite_name(), info.name());
      std::fclose(f);
    }
  }
  void OnTestIterationStart(const ::testing::UnitTest& unit, int) override {
    total_ = unit.test_to_run_count();
    done_ = failed_ = 0;
    start_ = std::chrono::steady_clock::now();
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    ++done_;
    if (info.result() != nullptr && info.result()->Failed()) ++failed_;
    // After each tenth of the tests (integer steps, so every line prints once), not the last:
    // GoogleTest's own summary follows it.
    if (total_ >= 10 && done_ < total_ && done_ * 10 / total_ != (done_ - 1) * 10 / total_) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      std::printf("progress: %d/%d tests, %d failed, %.0f s\n", done_, total_, failed_, seconds);
      std::fflush(stdout);
    }
  }

  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    if (case_element_limit() < 0) return;
    std::printf("conformance: %lld cases with more than %lld input elements left out "
                "(FERRITE_CONFORMANCE_MAX_ELEMENTS; the native runs keep them)\n",
                static_cast<long long>(cases_left_out()), static_cast<long long>(case_element_limit()));
    std::fflush(stdout);
  }

 private:
  int total_ = 0, done_ = 0, failed_ = 0;
  std::chrono::steady_clock::time_point start_;
};

// GoogleTest owns and deletes the listener.
const bool registered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new ProgressListener);
  return true;
}();

}  // namespace
}  // namespace ferrite::conformance
