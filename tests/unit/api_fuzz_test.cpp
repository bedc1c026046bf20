// A bounded, deterministic random fuzz of the public API on the CPU backend: the promise that
// no argument can crash the library. Every call below gets random dtypes, ranks 0-4, sizes
// with 0 and 1, non-contiguous views, undefined tensors, NaN/Inf scalars, out-of-range dims
// and indices, aliasing outputs and now and then absurd sizes (negative, 2^40 and more, int64
// extremes). A call may work or throw ferrite::Error; any other exception is a failure, and a
// crash or a sanitizer report kills the run (scripts/cpu-sanitize.sh runs this file too).
//
// Reproducing: each call draws from its own generator, seeded from (seed, call index), so one
// call replays alone:
//   FERRITE_FUZZ_SEED=<seed> FERRITE_FUZZ_CALL=<index> FERRITE_FUZZ_VERBOSE=1 \
//     ferrite_unit_tests --gtest_filter='ApiFuzz.*'
// FERRITE_FUZZ_CALLS sets the number of calls (default 20000), FERRITE_FUZZ_SEED the seed.
//
// Sizes: tensors are capped at 4096 elements. Absurd sizes are only ever >= 2^40 elements or
// negative, so a call that fails to refuse one asks for terabytes, which the allocator refuses
// (the machine's overcommit heuristic, or AddressSanitizer's allocation limit with
// allocator_may_return_null=1) instead of filling memory; and a view with an absurd size (an
// expand, an as_strided) is never handed to a computing op.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <complex>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <typeinfo>
#include <unistd.h>
#include <vector>

#include "ferrite/ferrite.hpp"
#include "ferrite/testing.hpp"
#include "unit/api_fuzz.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define FERRITE_FUZZ_SANITIZER 1
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

using namespace api_fuzz;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 0) : fallback;
}

// What a crash prints: the reproduction line of the call in flight (a fixed buffer, written
// before each call, so that a signal handler or a sanitizer's death callback can print it).
char g_in_flight[256] = "";

void print_in_flight() {
  if (g_in_flight[0] == '\0') return;
  const char head[] = "\napi_fuzz: crashed in ";
  (void)!write(2, head, sizeof(head) - 1);
  (void)!write(2, g_in_flight, std::strlen(g_in_flight));
  (void)!write(2, "\n", 1);
}

void fuzz_signal_handler(int sig) {
  print_in_flight();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// A hang is a failure too: a call that runs for longer than the limit prints its
// reproduction line and aborts the run.
class Watchdog {
 public:
  explicit Watchdog(double limit_s) : limit_(limit_s), thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void tick() { calls_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    std::int64_t last = -1;
    auto since = std::chrono::steady_clock::now();
    while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; })) {
      const std::int64_t now_calls = calls_.load(std::memory_order_relaxed);
      const auto now = std::chrono::steady_clock::now();
      if (now_calls != last) {
        last = now_calls;
        since = now;
      } else if (std::chrono::duration<double>(now - since).count() > limit_) {
        std::fprintf(stderr, "\napi_fuzz: a call ran for more than %.0f s (FERRITE_FUZZ_CALL_TIMEOUT)", limit_);
        print_in_flight();
        std::abort();
      }
    }
  }
  double limit_;
  std::atomic<std::int64_t> calls_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};


// The op table: every family, in a fixed order (a (seed, call) pair names one call).
std::vector<FuzzOp> make_ops() {
  std::vector<FuzzOp> ops;
  add_tensor_ops(ops);
  add_nn_ops(ops);
  return ops;
}

TEST(ApiFuzz, EveryCallWorksOrThrowsFerriteError) {
  const std::uint64_t seed = env_u64("FERRITE_FUZZ_SEED", 20261202);
  const auto calls = static_cast<std::int64_t>(env_u64("FERRITE_FUZZ_CALLS", 20000));
  const char* only_env = std::getenv("FERRITE_FUZZ_CALL");
  const std::int64_t only = only_env != nullptr && *only_env != '\0' ? std::strtoll(only_env, nullptr, 0) : -1;
  const bool verbose = std::getenv("FERRITE_FUZZ_VERBOSE") != nullptr;

  const std::vector<FuzzOp> ops = make_ops();
  std::printf("api_fuzz: seed %llu, %lld calls over %zu op families (FERRITE_FUZZ_SEED, FERRITE_FUZZ_CALLS)\n",
              static_cast<unsigned long long>(seed), static_cast<long long>(calls), ops.size());

  // Guard bytes around every allocation (ferrite/testing.hpp): a write past an output's end
  // counts as a violation even without a sanitizer.
  const bool checks_were_on = testing::memory_checks_enabled();
  testing::set_memory_checks(true);
  const std::int64_t violations_before = testing::guard_violations();
  auto old_segv = std::signal(SIGSEGV, fuzz_signal_handler);
  auto old_abrt = std::signal(SIGABRT, fuzz_signal_handler);
  auto old_fpe = std::signal(SIGFPE, fuzz_signal_handler);
#ifdef FERRITE_FUZZ_SANITIZER
  __sanitizer_set_death_callback(print_in_flight);
#endif

  Watchdog watchdog(static_cast<double>(env_u64("FERRITE_FUZZ_CALL_TIMEOUT", 60)));
  std::vector<std::string> failures;
  std::int64_t last_guards = violations_before;
  std::vector<std::int64_t> errors(ops.size(), 0), runs(ops.size(), 0);
  for (std::int64_t i = 0; i < calls; ++i) {
    if (only >= 0 && i != only) continue;
    Ctx c(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i))));
    c.verbose = verbose;
    c.tame = c.u(0, 2) != 0;
    const auto which = static_cast<std::size_t>(c.u(0, static_cast<std::int64_t>(ops.size()) - 1));
    const FuzzOp& op = ops[which];
    std::snprintf(g_in_flight, sizeof(g_in_flight),
                  "%s; reproduce: FERRITE_FUZZ_SEED=%llu FERRITE_FUZZ_CALL=%lld FERRITE_FUZZ_VERBOSE=1 "
                  "ferrite_unit_tests --gtest_filter='ApiFuzz.*'",
                  op.name, static_cast<unsigned long long>(seed), static_cast<long long>(i));
    if (verbose) std::fprintf(stderr, "call %lld: %s\n", static_cast<long long>(i), op.name);
    watchdog.tick();
    ++runs[which];
    std::string caught;
    try {
      op.fn(c);
    } catch (const Error& e) {
      ++errors[which];
      if (verbose) std::fprintf(stderr, "  Error(%s): %s\n", std::string(error_kind_name(e.kind())).c_str(), e.what());
    } catch (const std::exception& e) {
      caught = std::string(typeid(e).name()) + ": " + e.what();
    } catch (...) {
      caught = "an exception of unknown type";
    }
    // The guard bytes are checked when a buffer is freed: the call's temporaries are gone now.
    const std::int64_t guards = testing::guard_violations();
    if (guards != last_guards) {
      failures.push_back("call " + std::to_string(i) + " " + op.name + "(" + c.args.str() +
                         ") wrote past the end of an allocation (guard bytes)\n  reproduce: FERRITE_FUZZ_SEED=" +
                         std::to_string(seed) + " FERRITE_FUZZ_CALL=" + std::to_string(i) + " FERRITE_FUZZ_VERBOSE=1");
      last_guards = guards;
    }
    if (!caught.empty())
      failures.push_back("call " + std::to_string(i) + " " + op.name + "(" + c.args.str() + ") threw " + caught +
                         "\n  reproduce: FERRITE_FUZZ_SEED=" + std::to_string(seed) +
                         " FERRITE_FUZZ_CALL=" + std::to_string(i) + " FERRITE_FUZZ_VERBOSE=1");
  }
  g_in_flight[0] = '\0';
  std::signal(SIGSEGV, old_segv);
  std::signal(SIGABRT, old_abrt);
  std::signal(SIGFPE, old_fpe);
  const std::int64_t violations = testing::guard_violations() - violations_before;
  testing::set_memory_checks(checks_were_on);

  if (verbose || std::getenv("FERRITE_FUZZ_STATS") != nullptr)
    for (std::size_t k = 0; k < ops.size(); ++k)
      std::printf("  %-34s %5lld calls, %5lld refused\n", ops[k].name, static_cast<long long>(runs[k]),
                  static_cast<long long>(errors[k]));
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(violations, 0) << "writes past the end of an allocation (guard bytes) during the fuzz, seed " << seed;
}

}  // namespace
}  // namespace ferrite
