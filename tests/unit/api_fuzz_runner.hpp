// The API fuzz's runner, one for every device: the CPU test (tests/unit/api_fuzz_test.cpp, in
// ferrite_unit_tests) and the CUDA one (tests/cuda/api_fuzz_cuda_test.cpp, in
// ferrite_cuda_tests) call it with their device; the op families are api_fuzz.hpp's.
#pragma once

#include "ferrite/device.hpp"

namespace ferrite::api_fuzz {

// Where the fuzz runs, and how the test that runs it is named in a failing call's
// reproduction line.
struct FuzzTarget {
  Device device;
  const char* program;  // the test binary, e.g. "ferrite_unit_tests"
  const char* filter;   // its gtest filter, e.g. "ApiFuzz.*"
};

// Runs the fuzz on target.device and reports every failure through GoogleTest (ADD_FAILURE):
// FERRITE_FUZZ_SEED (default 20261202), FERRITE_FUZZ_CALLS (default 20000), FERRITE_FUZZ_CALL
// (only that call), FERRITE_FUZZ_VERBOSE (every call's arguments and error), FERRITE_FUZZ_STATS
// (calls and refusals per family), FERRITE_FUZZ_CALL_TIMEOUT (seconds a call may run, 60).
void run_api_fuzz(const FuzzTarget& target);

}  // namespace ferrite::api_fuzz
