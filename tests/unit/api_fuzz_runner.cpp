// The API fuzz's runner (api_fuzz_runner.hpp): draws each call, runs it, and reports what
// is not a ferrite::Error: another exception, a write past an allocation (guard bytes), a
// hang (the watchdog), a crash (the reproduction line of the call in flight, from a signal
// handler or AddressSanitizer's death callback) and, off the CPU, a device fault that a call
// left behind (a synchronisation after every call).
//
// Reproducing: each call draws from its own generator, seeded from (seed, call index), so one
// call replays alone (the test's program and filter are the target's):
//   FERRITE_FUZZ_SEED=<seed> FERRITE_FUZZ_CALL=<index> FERRITE_FUZZ_VERBOSE=1 \
//     ferrite_unit_tests --gtest_filter='ApiFuzz.*'
//
// On CUDA:
// - Every tensor a call builds is on the device (api_fuzz.hpp); now and then one argument is
//   left on the host, which the library must refuse with a DeviceMismatch naming both
//   devices. A DeviceMismatch in a call whose arguments were all on the device is a failure
//   (the library mixed devices itself), and so is a DeviceMismatch message that names
//   neither the host nor the device.
// - After every call the device is synchronised: a kernel fault (an illegal address, a
//   misaligned access, a device-side assert) surfaces there, or already in the call as an
//   Error(Cuda) (touch() copies results to the host). That is a failure naming the call and its
//   reproduction line, and the run stops there: the fault is sticky, the CUDA context is lost,
//   and every later call (and later test in the process) would fail for it.
// - Error(Cuda) from a call is never a refusal: the front end let through something the GPU
//   rejected (a launch configuration, say). Library errors (cuBLAS, cuSOLVER, cuFFT: Library)
//   and OutOfMemory stay refusals.
// - The guard bytes cover the CUDA backend too: with testing::set_memory_checks on, its
//   allocator poisons every buffer and puts 256 guard bytes after it, read back and checked
//   when the buffer is freed (src/cuda/cuda_backend.cpp). They see an op's outputs and
//   temporaries made through the backend's allocate, not scratch that a kernel or a CUDA
//   library takes from the pool directly (workspaces, cuBLAS/cuFFT/cuSOLVER buffers), nor a
//   read out of bounds: compute-sanitizer --tool memcheck is the CUDA-side check of those
//   (tests/cuda/api_fuzz_cuda_test.cpp says how to run it).
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
#include "unit/api_fuzz_runner.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define FERRITE_FUZZ_SANITIZER 1
#endif

namespace ferrite::api_fuzz {
namespace {

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

// One failing call's line: what it was, what went wrong, how to replay it.
std::string failure(const FuzzTarget& target, std::uint64_t seed, std::int64_t i, const FuzzOp& op, const Ctx& c,
                    const std::string& what) {
  return "call " + std::to_string(i) + " " + op.name + "(" + c.args.str() + ") on " + target.device.str() + " " + what +
         "\n  reproduce: FERRITE_FUZZ_SEED=" + std::to_string(seed) + " FERRITE_FUZZ_CALL=" + std::to_string(i) +
         " FERRITE_FUZZ_VERBOSE=1 " + target.program + " --gtest_filter='" + target.filter + "'";
}

// How many devices a message names ("[4] F32 cpu", "cuda:0", "device-kind-7:0"): a
// DeviceMismatch must name both sides.
int devices_named(const std::string& text) {
  int n = 0;
  for (const char* name : {"cpu", "cuda:", "device-kind-"})
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) ++n;
  return n;
}

}  // namespace

void run_api_fuzz(const FuzzTarget& target) {
  const Device device = target.device;
  const std::uint64_t seed = env_u64("FERRITE_FUZZ_SEED", 20261202);
  const auto calls = static_cast<std::int64_t>(env_u64("FERRITE_FUZZ_CALLS", 20000));
  const char* only_env = std::getenv("FERRITE_FUZZ_CALL");
  const std::int64_t only = only_env != nullptr && *only_env != '\0' ? std::strtoll(only_env, nullptr, 0) : -1;
  const bool verbose = std::getenv("FERRITE_FUZZ_VERBOSE") != nullptr;

  const std::vector<FuzzOp> ops = make_ops();
  std::printf("api_fuzz: seed %llu, %lld calls over %zu op families on %s (FERRITE_FUZZ_SEED, FERRITE_FUZZ_CALLS)\n",
              static_cast<unsigned long long>(seed), static_cast<long long>(calls), ops.size(), device.str().c_str());
  std::fflush(stdout);
  const auto started = std::chrono::steady_clock::now();

  // Guard bytes around every allocation (ferrite/testing.hpp), on the CPU and the CUDA
  // backend alike: a write past an output's end counts as a violation even without a sanitizer.
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
  // Off the CPU: the calls with an argument off the device (Ctx::strays), and what became of them.
  std::int64_t stray_calls = 0, stray_mismatch = 0, stray_other = 0;
  std::int64_t ran = 0;
  bool fatal = false;  // a device fault stopped the run
  for (std::int64_t i = 0; i < calls; ++i) {
    if (only >= 0 && i != only) continue;
    Ctx c(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i))), device);
    c.verbose = verbose;
    c.tame = c.u(0, 2) != 0;
    const auto which = static_cast<std::size_t>(c.u(0, static_cast<std::int64_t>(ops.size()) - 1));
    const FuzzOp& op = ops[which];
    std::snprintf(g_in_flight, sizeof(g_in_flight),
                  "%s; reproduce: FERRITE_FUZZ_SEED=%llu FERRITE_FUZZ_CALL=%lld FERRITE_FUZZ_VERBOSE=1 %s "
                  "--gtest_filter='%s'",
                  op.name, static_cast<unsigned long long>(seed), static_cast<long long>(i), target.program,
                  target.filter);
    if (verbose) std::fprintf(stderr, "call %lld: %s\n", static_cast<long long>(i), op.name);
    watchdog.tick();
    ++runs[which];
    ++ran;
    std::string caught;
    bool refused = false;
    ErrorKind kind = ErrorKind::InvalidArgument;
    try {
      op.fn(c);
    } catch (const Error& e) {
      refused = true;
      kind = e.kind();
      if (verbose) std::fprintf(stderr, "  Error(%s): %s\n", std::string(error_kind_name(e.kind())).c_str(), e.what());
      if (kind == ErrorKind::Cuda) {
        caught = std::string("threw Error(Cuda), a CUDA runtime error the front end should have prevented: ") + e.what();
      } else if (kind == ErrorKind::DeviceMismatch && c.strays == 0) {
        caught = std::string("threw DeviceMismatch though every argument was on ") + device.str() + ": " + e.what();
      } else if (kind == ErrorKind::DeviceMismatch && devices_named(e.what()) < 2) {
        caught = std::string("threw a DeviceMismatch that does not name both devices: ") + e.what();
      }
    } catch (const std::exception& e) {
      caught = std::string("threw ") + typeid(e).name() + ": " + e.what();
    } catch (...) {
      caught = "threw an exception of unknown type";
    }
    if (refused && kind != ErrorKind::Cuda) ++errors[which];
    if (c.strays > 0) {
      ++stray_calls;
      if (refused) ++(kind == ErrorKind::DeviceMismatch ? stray_mismatch : stray_other);
    }
    // Off the CPU, a kernel fault shows at the next synchronisation: now, while the call is
    // still the one in flight (a hang here is the watchdog's too). It is sticky: the context
    // is lost, so the run stops, and the guard bytes (unreadable now) say nothing more.
    if (!device.is_cpu()) {
      try {
        synchronize(device);
      } catch (const std::exception& e) {
        fatal = true;
        failures.push_back(failure(target, seed, i, op, c,
                                   "left a device fault behind (the synchronisation after it failed: " +
                                       std::string(e.what()) + (caught.empty() ? "" : "; the call itself " + caught) +
                                       "); the CUDA context is lost, so the fuzz stops here, and later tests in this "
                                       "process fail for the same reason"));
        break;
      }
    }
    // The guard bytes are checked when a buffer is freed: the call's temporaries are gone now.
    const std::int64_t guards = testing::guard_violations();
    if (guards != last_guards) {
      failures.push_back(failure(target, seed, i, op, c, "wrote past the end of an allocation (guard bytes)"));
      last_guards = guards;
    }
    if (!caught.empty()) failures.push_back(failure(target, seed, i, op, c, caught));
  }
  g_in_flight[0] = '\0';
  std::signal(SIGSEGV, old_segv);
  std::signal(SIGABRT, old_abrt);
  std::signal(SIGFPE, old_fpe);
  const std::int64_t violations = testing::guard_violations() - violations_before;
  testing::set_memory_checks(checks_were_on);

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("api_fuzz: %lld calls on %s in %.1f s\n", static_cast<long long>(ran), device.str().c_str(), seconds);
  if (!device.is_cpu())
    std::printf("api_fuzz: %lld calls had an argument off %s (a host tensor or generator, a missing device): %lld "
                "refused with DeviceMismatch, %lld otherwise first, %lld worked (the stray was not used, or the op "
                "takes any device)\n",
                static_cast<long long>(stray_calls), device.str().c_str(), static_cast<long long>(stray_mismatch),
                static_cast<long long>(stray_other),
                static_cast<long long>(stray_calls - stray_mismatch - stray_other));
  if (verbose || std::getenv("FERRITE_FUZZ_STATS") != nullptr)
    for (std::size_t k = 0; k < ops.size(); ++k)
      std::printf("  %-34s %5lld calls, %5lld refused\n", ops[k].name, static_cast<long long>(runs[k]),
                  static_cast<long long>(errors[k]));
  for (const auto& f : failures) ADD_FAILURE() << f;
  if (!fatal)  // after a device fault every guard read fails: the fault's own failure says it all
    EXPECT_EQ(violations, 0) << "writes past the end of an allocation (guard bytes) during the fuzz on "
                             << device.str() << ", seed " << seed;
}

}  // namespace ferrite::api_fuzz
