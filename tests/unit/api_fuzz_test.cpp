// A bounded, deterministic random fuzz of the public API on the CPU backend: the promise that
// no argument can crash the library. Every call gets random dtypes, ranks 0-4, sizes with 0
// and 1, non-contiguous views, undefined tensors, NaN/Inf scalars, out-of-range dims and
// indices, aliasing outputs and now and then absurd sizes (negative, 2^40 and more, int64
// extremes). A call may work or throw ferrite::Error; any other exception is a failure, and a
// crash or a sanitizer report kills the run (scripts/cpu-sanitize.sh runs this file too).
// The op families are api_fuzz_tensor_ops.cpp's and api_fuzz_nn_ops.cpp's, the runner
// api_fuzz_runner.cpp's; tests/cuda/api_fuzz_cuda_test.cpp runs the same fuzz on a GPU.
//
// Reproducing: each call draws from its own generator, seeded from (seed, call index), so one
// call replays alone:
//   FERRITE_FUZZ_SEED=<seed> FERRITE_FUZZ_CALL=<index> FERRITE_FUZZ_VERBOSE=1 \
//     ferrite_unit_tests --gtest_filter='ApiFuzz.*'
// FERRITE_FUZZ_CALLS sets the number of calls (default 20000), FERRITE_FUZZ_SEED the seed,
// FERRITE_FUZZ_STATS=1 prints the calls and refusals per op family.
//
// Sizes: tensors are capped at 4096 elements. Absurd sizes are only ever >= 2^40 elements or
// negative, so a call that fails to refuse one asks for terabytes, which the allocator refuses
// (the machine's overcommit heuristic, or AddressSanitizer's allocation limit with
// allocator_may_return_null=1) instead of filling memory; and a view with an absurd size (an
// expand, an as_strided) is never handed to a computing op.
#include <gtest/gtest.h>

#include "ferrite/ferrite.hpp"
#include "unit/api_fuzz_runner.hpp"

#if defined(__SANITIZE_ADDRESS__)
// A refused malloc must reach the library as a null pointer (which it turns into
// Error(OutOfMemory)), as without AddressSanitizer: ASan's default is to abort the process
// on an allocation above its limit. ASAN_OPTIONS still overrides this. A failed operator new
// aborts under ASan whatever the options (it cannot throw std::bad_alloc), so this build
// leaves out the absurd sizes that the library would only refuse by a failed allocation
// (2^40: terabytes; api_fuzz.hpp's kAddressSanitizer); those that no allocation can hold
// (2^62, 2^63 - 1) stay in.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace ferrite {
namespace {

TEST(ApiFuzz, EveryCallWorksOrThrowsFerriteError) {
  api_fuzz::run_api_fuzz({Device::cpu(), "ferrite_unit_tests", "ApiFuzz.*"});
}

}  // namespace
}  // namespace ferrite
