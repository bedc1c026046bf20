// The API fuzz (tests/unit/api_fuzz_test.cpp) on the CUDA backend: the same op families and
// runner (tests/unit/api_fuzz_runner.cpp), with every tensor a call builds on cuda:0 and now and
// then one argument on the host, a generator of the host's or a factory asked for a missing
// device (refusals the library must make with an Error, never a crash). After every call the
// device is synchronised; a kernel fault is a failure naming the call and its reproduction
// line, and the run stops there (the CUDA context is lost). The extra draws for those device
// faults happen only on the GPU, so a call index names a different call here than on the CPU.
//
// Running it on a GPU machine (from a CUDA build directory, e.g. build/):
//   tests/ferrite_cuda_tests --gtest_filter='CudaApiFuzz.*'
//   FERRITE_FUZZ_STATS=1 ...       calls and refusals per op family
//   FERRITE_FUZZ_CALLS=3000 ...    fewer calls (default 20000, as on the CPU)
//   FERRITE_FUZZ_SEED=<seed> FERRITE_FUZZ_CALL=<index> FERRITE_FUZZ_VERBOSE=1 ...   one call again
// Under compute-sanitizer (out-of-bounds and misaligned device accesses, which the guard
// bytes cannot see; about 3000 calls fit a few minutes):
//   FERRITE_FUZZ_CALLS=3000 FERRITE_FUZZ_CALL_TIMEOUT=300 compute-sanitizer --tool memcheck \
//     --report-api-errors no --error-exitcode 99 tests/ferrite_cuda_tests --gtest_filter='CudaApiFuzz.*'
// --report-api-errors no: the fuzz asks for absurd sizes on purpose, and the failed
// cudaMallocAsync that the library turns into Error(OutOfMemory) is otherwise reported (and
// counted for the exit status) as an API error; any other CUDA API failure still fails the
// fuzz itself, as an Error(Cuda) or a device fault. The call timeout is raised because
// memcheck slows the first cuDNN/cuSOLVER/cuFFT calls by far more than it slows the rest.
#include <gtest/gtest.h>

#include "ferrite/ferrite.hpp"
#include "unit/api_fuzz_runner.hpp"

#if FERRITE_WITH_CUDA

namespace ferrite {
namespace {

TEST(CudaApiFuzz, EveryCallWorksOrThrowsFerriteError) {
  // ferrite_cuda_tests' main exits 77 without a GPU before any test runs; this skip keeps the
  // test honest when it is run some other way.
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  api_fuzz::run_api_fuzz({Device::cuda(0), "ferrite_cuda_tests", "CudaApiFuzz.*"});
}

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA
