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

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define FERRITE_FUZZ_SANITIZER 1
// A refused malloc must reach the library as a null pointer (which it turns into
// Error(OutOfMemory)), as without AddressSanitizer: ASan's default is to abort the process
// on an allocation above its limit. ASAN_OPTIONS still overrides this. A failed operator new
// aborts under ASan whatever the options (it cannot throw std::bad_alloc), so this build
// leaves out the absurd sizes that the library would only refuse by a failed allocation
// (2^40: terabytes); those that no allocation can hold (2^62, 2^63 - 1) stay in.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

namespace ferrite {
namespace {

constexpr std::int64_t kMaxElements = 4096;
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();

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

std::string tensor_str(const Tensor& t) {
  if (!t.defined()) return "undefined";
  std::string s = shape_str(t.shape()) + " " + std::string(dtype_name(t.dtype()));
  if (!t.is_contiguous() || t.storage_offset() != 0) s += " strides " + shape_str(t.strides()) + " offset " +
                                                          std::to_string(t.storage_offset());
  return s;
}

// The random choices of one call, and the record of its arguments.
struct Ctx {
  std::mt19937_64 rng;
  std::ostringstream args;
  bool verbose = false;

  explicit Ctx(std::uint64_t seed) : rng(seed) {}

  std::int64_t u(std::int64_t lo, std::int64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  }
  bool one_in(int n) { return u(0, n - 1) == 0; }
  // A deliberate fault (a wrong shape, dtype, dim, an absurd size): never in a tame call, so
  // that two calls in three get valid-looking arguments and reach the kernels.
  bool tame = false;
  bool bad(int n) { return !tame && one_in(n); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(u(0, static_cast<std::int64_t>(v.size()) - 1))];
  }

  template <class T>
  T note(const char* name, T value) {
    std::ostringstream s;
    if constexpr (std::is_same_v<T, Tensor>) {
      s << tensor_str(value);
    } else if constexpr (std::is_same_v<T, Shape>) {
      s << shape_str(value);
    } else if constexpr (std::is_same_v<T, DType>) {
      s << (is_valid_dtype(value) ? std::string(dtype_name(value)) : "dtype#" + std::to_string(int(value)));
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
      if (value) s << *value; else s << "none";
    } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
      if (value) s << *value; else s << "none";
    } else if constexpr (std::is_same_v<T, bool>) {
      s << (value ? "true" : "false");
    } else if constexpr (std::is_enum_v<T> || std::is_same_v<T, char>) {
      s << static_cast<long long>(value);
    } else {
      s << value;
    }
    args << name << "=" << s.str() << " ";
    if (verbose) std::fprintf(stderr, "  %s=%s\n", name, s.str().c_str());
    return value;
  }

  // ---- sizes and dims ----
  std::int64_t absurd() {
    if (kAddressSanitizer) return pick<std::int64_t>({-1, -2, -7, std::int64_t(1) << 62, kI64Max, kI64Min});
    return pick<std::int64_t>({-1, -2, -7, (std::int64_t(1) << 40) + 3, std::int64_t(1) << 62, kI64Max, kI64Min,
                               -(std::int64_t(1) << 40)});
  }
  std::int64_t small() { return pick<std::int64_t>({0, 1, 1, 2, 2, 3, 3, 4, 5, 7}); }
  std::int64_t size_arg() { return bad(12) ? absurd() : small(); }
  // A dim of a rank-`rank` tensor: mostly valid (negative ones too), sometimes just outside,
  // rarely absurd.
  std::int64_t dim_arg(std::int64_t rank) {
    if (bad(15)) return absurd();
    if (bad(8)) return pick<std::int64_t>({rank, -rank - 1, rank + 1});
    const std::int64_t r = std::max<std::int64_t>(rank, 1);
    return u(-r, r - 1);
  }
  double real_arg() {
    if (one_in(6))
      return pick<double>({std::nan(""), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(), 0.0, -0.0, 1e300, -1e300, 1e-320});
    return std::uniform_real_distribution<double>(-3, 3)(rng);
  }
  double prob_arg() {
    if (one_in(5)) return pick<double>({0.0, 1.0, -0.1, 1.5, std::nan(""), std::numeric_limits<double>::infinity()});
    return std::uniform_real_distribution<double>(0, 1)(rng);
  }
  Scalar scalar_arg() {
    switch (u(0, 3)) {
      case 0: return Scalar(real_arg());
      case 1: return Scalar(pick<std::int64_t>({0, 1, -1, 3, 1 << 20, kI64Max, kI64Min}));
      case 2: return Scalar(one_in(2));
      default: return Scalar(std::numeric_limits<std::uint64_t>::max());
    }
  }

  // ---- dtypes ----
  DType any_dtype() {
    if (tame && !one_in(3)) return kFloatDTypes[u(0, 3)];  // what most ops take
    if (bad(150)) return static_cast<DType>(u(kNumDTypes, 255));  // outside the enum
    return kAllDTypes[u(0, kNumDTypes - 1)];
  }
  DType float_dtype() { return bad(6) ? any_dtype() : kFloatDTypes[u(0, 3)]; }
  DType same_or_any(const Tensor& t) { return t.defined() && !bad(3) ? t.dtype() : any_dtype(); }
  Shape same_or_partner(const Tensor& t) { return t.defined() && (tame || one_in(2)) ? t.shape() : partner(t.defined() ? t.shape() : Shape{}); }
  DType index_dtype() { return bad(6) ? any_dtype() : (tame || one_in(2) ? DType::I64 : DType::I32); }

  // ---- shapes ----
  Shape shape(std::int64_t min_rank = 0, std::int64_t max_rank = 4) {
    const std::int64_t rank = u(min_rank, max_rank);
    Shape s;
    std::int64_t n = 1;
    for (std::int64_t i = 0; i < rank; ++i) {
      std::int64_t d = small();
      if (n * std::max<std::int64_t>(d, 1) > kMaxElements) d = 1;
      n *= std::max<std::int64_t>(d, 1);
      s.push_back(d);
    }
    // Now and then an empty tensor with a huge dim beside a zero one (legal: no elements,
    // but a kernel that loops over the huge dim never ends).
    if (rank >= 2 && !tame && one_in(12)) {
      s[static_cast<std::size_t>(u(0, rank - 1))] = 0;
      const std::int64_t huge = kAddressSanitizer ? pick<std::int64_t>({std::int64_t(1) << 62, kI64Max})
                                                  : pick<std::int64_t>({std::int64_t(1) << 40, std::int64_t(1) << 62, kI64Max});
      for (auto& d : s)
        if (d != 0) {
          d = huge;
          break;
        }
    }
    return s;
  }
  // A shape that broadcasts with `s` (mostly), or a random one.
  Shape partner(const Shape& s) {
    if (bad(6)) return shape();
    Shape p = s;
    for (auto& d : p)
      if (one_in(3)) d = 1;
    while (!p.empty() && one_in(3)) p.erase(p.begin());
    if (p.size() < 4 && one_in(6)) p.insert(p.begin(), small() % 3 + 1);
    if (bad(12) && !p.empty()) {  // a dim that does not broadcast (a huge one stays as it is)
      auto& d = p[static_cast<std::size_t>(u(0, static_cast<std::int64_t>(p.size()) - 1))];
      if (d < kMaxElements) d += 1;
    }
    return p;
  }
  // A permutation of 0..n-1, sometimes broken.
  std::vector<std::int64_t> perm(std::int64_t n) {
    std::vector<std::int64_t> p(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i;
    std::shuffle(p.begin(), p.end(), rng);
    if (bad(8)) {
      if (p.empty() || one_in(2)) p.push_back(u(-n - 1, n));
      else p[0] = dim_arg(n);
    }
    return p;
  }

  // ---- tensors ----
  std::vector<double> values(std::int64_t n, DType dtype) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) {
      if (dtype == DType::Bool) x = static_cast<double>(u(0, 1));
      else if (is_integral(dtype)) x = static_cast<double>(one_in(20) ? pick<std::int64_t>({-100, 1000, 1 << 30}) : u(-3, 6));
      else if (one_in(25)) x = pick<double>({std::nan(""), std::numeric_limits<double>::infinity(),
                                             -std::numeric_limits<double>::infinity(), 0.0, 1e30});
      else x = std::uniform_real_distribution<double>(-3, 3)(rng);
    }
    return v;
  }
  // Integer elements straight from integers: now and then the type's extremes (MIN / -1,
  // |MIN|, overflowing sums and products) and shift counts at and past the width.
  template <class I>
  Tensor integers(std::int64_t n, const Shape& s) {
    std::vector<I> v(static_cast<std::size_t>(n));
    for (auto& x : v)
      x = one_in(12) ? pick<I>({std::numeric_limits<I>::min(), std::numeric_limits<I>::max(), I(-1), I(0), I(31),
                                I(32), I(63), I(64)})
                     : static_cast<I>(one_in(20) ? pick<std::int64_t>({-100, 1000, 1 << 30}) : u(-3, 6));
    return from_vector(v, s);
  }
  Tensor dense(DType dtype, const Shape& s) {
    const std::int64_t n = shape_numel(s);
    if (dtype == DType::I32) return integers<std::int32_t>(n, s);
    if (dtype == DType::I64) return integers<std::int64_t>(n, s);
    Tensor t = from_vector(values(n, dtype), s);
    return dtype == DType::F64 ? t : t.to(dtype);
  }
  // A tensor of dtype and shape, sometimes a non-contiguous or offset view of a larger one.
  Tensor make(DType dtype, Shape s) {
    if (!is_valid_dtype(dtype)) dtype = DType::F32;
    const std::int64_t n = shape_numel(s);  // an Error for an overflowing shape: the call is refused
    // A shape derived from an empty one with a 2^40 dim may hold 2^40 elements: the library
    // must refuse to allocate it (an Error, never a std exception).
    if (n > kMaxElements) return zeros(s, dtype);
    if (n == 0 || n > kMaxElements || s.empty() || one_in(2)) return dense(dtype, s);
    const auto rank = static_cast<std::int64_t>(s.size());
    switch (u(0, 3)) {
      case 0: {  // transposed storage
        Shape r(s.rbegin(), s.rend());
        std::vector<std::int64_t> p;
        for (std::int64_t i = rank - 1; i >= 0; --i) p.push_back(i);
        return dense(dtype, r).permute(p);
      }
      case 1: {  // every other element of dim 0
        Shape b = s;
        b[0] *= 2;
        if (n * 2 > kMaxElements) return dense(dtype, s);
        return dense(dtype, b).slice(0, 0, b[0], 2);
      }
      case 2: {  // an offset into its storage
        Shape b = s;
        b[0] += 1;
        return dense(dtype, b).slice(0, 1, b[0]);
      }
      default: {  // a broadcast (stride 0) dim where the size is 1... or expanded to it
        const auto d = static_cast<std::size_t>(u(0, rank - 1));
        Shape b = s;
        b[d] = 1;
        return dense(dtype, b).expand(s);
      }
    }
  }
  Tensor tensor(DType dtype, Shape s) {
    if (bad(60)) return Tensor();
    return make(dtype, std::move(s));
  }
  Tensor any_tensor(std::int64_t min_rank = 0, std::int64_t max_rank = 4) {
    const DType d = any_dtype();
    return tensor(d, shape(min_rank, max_rank));
  }
  Tensor float_tensor(std::int64_t min_rank = 0, std::int64_t max_rank = 4) {
    const DType d = float_dtype();
    return tensor(d, shape(min_rank, max_rank));
  }
  Tensor index_tensor(const Shape& s, std::int64_t bound) {
    const DType d = index_dtype();
    if (!is_valid_dtype(d) || !is_integral(d)) return tensor(d, s);
    if (shape_numel(s) > kMaxElements) return zeros(s, d);  // refused by the library, see make()
    std::vector<double> v(static_cast<std::size_t>(shape_numel(s)));
    for (auto& x : v) x = static_cast<double>(bad(10) ? pick<std::int64_t>({-1, bound, -bound - 1, 1 << 30}) :
                                              u(0, std::max<std::int64_t>(bound - 1, 0)));
    if (bad(60)) return Tensor();
    return from_vector(v, s).to(d);
  }
};

// Reads every element of a result (a sanitizer checks the reads), unless it is too large to
// touch (a legal view with a huge dim).
void touch(const Tensor& t) {
  if (t.defined() && t.numel() <= (1 << 16)) (void)t.to_bytes();
}
void touch(const std::pair<Tensor, Tensor>& p) {
  touch(p.first);
  touch(p.second);
}
void touch(const std::vector<Tensor>& v) {
  for (const auto& t : v) touch(t);
}

using OpFn = std::function<void(Ctx&)>;
struct FuzzOp {
  const char* name;
  OpFn fn;
};

#define OP(name, ...) ops.push_back(FuzzOp{name, [](Ctx& c) __VA_ARGS__})
#define N(name, ...) c.note(name, __VA_ARGS__)

std::vector<FuzzOp> make_ops() {
  std::vector<FuzzOp> ops;
  using BinFn = Tensor (*)(const Tensor&, const Tensor&);

  // ---- elementwise binary, broadcasting ----
  struct Unary {
    const char* name;
    Tensor (*fn)(const Tensor&);
    std::vector<DType> dtypes;
  };
  struct Binary {
    const char* name;
    BinFn fn;
    std::vector<DType> dtypes;  // what a tame call draws from (empty: any)
  };
  const std::vector<DType> ints = {DType::I32, DType::I64, DType::Bool}, bools = {DType::Bool};
  const std::vector<Binary> binaries = {
      {"add", static_cast<BinFn>(&add)}, {"sub", static_cast<BinFn>(&sub)}, {"mul", static_cast<BinFn>(&mul)},
      {"div", static_cast<BinFn>(&div)}, {"maximum", &maximum}, {"minimum", &minimum},
      {"floor_divide", &floor_divide, ints}, {"remainder", &remainder, ints}, {"bitwise_and", &bitwise_and, ints},
      {"bitwise_or", &bitwise_or, ints}, {"bitwise_xor", &bitwise_xor, ints}, {"shift_left", &shift_left, ints},
      {"shift_right", &shift_right, ints}, {"logical_and", &logical_and, bools}, {"logical_or", &logical_or, bools},
      {"logical_xor", &logical_xor, bools}, {"eq", &eq}, {"ne", &ne}, {"lt", &lt}, {"le", &le}, {"gt", &gt}, {"ge", &ge},
      {"relu_backward", &relu_backward}, {"abs_backward", &abs_backward}, {"sigmoid_backward", &sigmoid_backward},
      {"tanh_backward", &tanh_backward}, {"silu_backward", &silu_backward}, {"mish_backward", &mish_backward}};
  for (const auto& bin : binaries) {
    const bool backward = std::string(bin.name).find("_backward") != std::string::npos;  // same shapes
    ops.push_back(FuzzOp{bin.name, [fn = bin.fn, pool = bin.dtypes, backward](Ctx& c) {
                           const Shape s = c.shape();
                           const DType da = c.tame && !pool.empty() ? c.pick(pool) : c.any_dtype();
                           const DType db = c.tame || c.one_in(2) ? da : c.any_dtype();
                           const Tensor a = N("a", c.tensor(da, s));
                           const Tensor b = N("b", c.one_in(10) ? a : c.tensor(db, backward && c.tame ? s : c.partner(s)));
                           touch(fn(a, b));
                         }});
  }
  OP("add(out_dtype)", {
    const Shape s = c.shape();
    const Tensor a = N("a", c.any_tensor());
    const Tensor b = N("b", c.tensor(c.bad(2) || !a.defined() ? c.any_dtype() : a.dtype(), c.partner(a.defined() ? a.shape() : s)));
    const DType d = N("out_dtype", c.any_dtype());
    touch(c.one_in(2) ? add(a, b, d) : div(a, b, d));
  });
  OP("binary_out(alias)", {
    const Shape s = c.shape();
    const DType d = c.any_dtype();
    const Tensor a = N("a", c.tensor(d, s)), b = N("b", c.tensor(c.bad(3) ? c.any_dtype() : d, c.partner(s)));
    Tensor out;
    switch (c.u(0, 4)) {
      case 0: out = a; break;
      case 1: out = b; break;
      case 2: out = a.defined() && a.dim() >= 2 ? a.transpose(0, 1) : a; break;
      case 3: out = c.tensor(c.any_dtype(), c.partner(s)); break;
      default: out = a.defined() && a.dim() >= 1 && a.size(0) >= 1 ? a.select(0, 0).unsqueeze(0).expand(a.shape()) : a;
    }
    N("out", out);
    switch (c.u(0, 3)) {
      case 0: add_out(a, b, out); break;
      case 1: sub_out(a, b, out); break;
      case 2: mul_out(a, b, out); break;
      default: div_out(a, b, out);
    }
    touch(out);
  });
  OP("where", {
    const Shape s = c.shape();
    const Tensor cond = N("cond", c.tensor(c.bad(4) ? c.any_dtype() : DType::Bool, c.partner(s)));
    const DType d = c.any_dtype();
    const Tensor x = N("x", c.tensor(d, s)), y = N("y", c.tensor(c.bad(3) ? c.any_dtype() : d, c.partner(s)));
    touch(where(cond, x, y));
  });
  OP("masked_fill", {
    const Tensor x = N("x", c.any_tensor());
    const Tensor m = N("mask", c.tensor(c.bad(4) ? c.any_dtype() : DType::Bool,
                                        c.partner(x.defined() ? x.shape() : Shape{})));
    const Scalar v = c.scalar_arg();
    N("value", v.to_double());
    if (c.one_in(2)) touch(masked_fill(x, m, v));
    else masked_fill_(x, m, v), touch(x);
  });

  // ---- scalar operators ----
  OP("operator(scalar)", {
    const Tensor a = N("a", c.any_tensor());
    const Scalar s = c.scalar_arg();
    N("scalar", s.to_double());
    switch (c.u(0, 9)) {
      case 0: touch(a + s); break;
      case 1: touch(s - a); break;
      case 2: touch(a * s); break;
      case 3: touch(s / a); break;
      case 4: touch(a % s); break;
      case 5: touch(a == s); break;
      case 6: touch(s < a); break;
      case 7: touch(a & s); break;
      case 8: touch(s ^ a); break;
      default: touch(a >= s);
    }
  });

  // ---- unary ----
  using UnFn = Tensor (*)(const Tensor&);
  const std::vector<Unary> unary_table = {
      {"neg", &neg, {}}, {"abs", &abs, {}}, {"relu", static_cast<UnFn>(&relu)}, {"exp", &exp}, {"log", &log},
      {"sqrt", &sqrt}, {"sigmoid", static_cast<UnFn>(&sigmoid)}, {"tanh", &tanh}, {"silu", &silu},
      {"mish", &mish}, {"bitwise_not", &bitwise_not, ints}, {"logical_not", &logical_not, bools},
      {"operator-", static_cast<UnFn>(&operator-)}, {"operator~", &operator~, ints}};
  for (const auto& un : unary_table)
    ops.push_back(FuzzOp{un.name, [fn = un.fn, pool = un.dtypes](Ctx& c) {
                           const DType d = c.tame && !pool.empty() ? c.pick(pool) : c.any_dtype();
                           touch(fn(N("x", c.tensor(d, c.shape()))));
                         }});
  OP("unary(params)", {
    const Tensor x = N("x", c.any_tensor());
    const double p = N("p", c.real_arg());
    switch (c.u(0, 5)) {
      case 0: touch(pow(x, p)); break;
      case 1: touch(scale(x, p)); break;
      case 2: touch(elu(x, p)); break;
      case 3: touch(gelu(x, N("approx", c.bad(10) ? static_cast<GeluApproximation>(7) : GeluApproximation::Tanh))); break;
      case 4: touch(relu(x, N("out_dtype", c.any_dtype()))); break;
      default: touch(sigmoid(x, N("out_dtype", c.any_dtype())));
    }
  });
  OP("clamp", {
    const Tensor x = N("x", c.any_tensor());
    const std::optional<double> lo = N("lo", c.one_in(3) ? std::nullopt : std::optional<double>(c.real_arg()));
    const std::optional<double> hi = N("hi", c.one_in(3) ? std::nullopt : std::optional<double>(c.real_arg()));
    switch (c.u(0, 2)) {
      case 0: touch(clamp(x, lo, hi)); break;
      case 1: clamp_(x, lo, hi); touch(x); break;
      default: touch(clamp_backward(N("grad", c.tensor(c.any_dtype(), c.partner(x.defined() ? x.shape() : Shape{}))),
                                    x, lo, hi));
    }
  });
  OP("unary_backward(params)", {
    const Tensor x = N("x", c.float_tensor());
    const Tensor g = N("grad", c.tensor(c.same_or_any(x), c.same_or_partner(x)));
    if (c.one_in(2)) touch(gelu_backward(g, x, c.one_in(2) ? GeluApproximation::None : GeluApproximation::Tanh));
    else touch(elu_backward(g, x, N("alpha", c.real_arg())));
  });
  OP("has_inf_nan", { (void)has_inf_nan(N("x", c.any_tensor())); });
  OP("broadcast_shapes", {
    const Shape a = N("a", c.bad(5) ? Shape{c.absurd(), 2} : c.shape());
    (void)broadcast_shapes(a, N("b", c.partner(a)));
  });

  // ---- casts, copies, in-place ----
  OP("to/clone/contiguous", {
    const Tensor x = N("x", c.any_tensor());
    switch (c.u(0, 2)) {
      case 0: touch(x.to(N("dtype", c.any_dtype()))); break;
      case 1: touch(x.clone()); break;
      default: touch(x.contiguous());
    }
  });
  OP("inplace", {
    const Tensor a = N("a", c.any_tensor());
    Tensor b;
    switch (c.u(0, 3)) {
      case 0: b = a; break;
      case 1: b = a.defined() && a.dim() >= 2 ? a.transpose(0, 1) : a; break;
      case 2: b = a.defined() && a.dim() >= 1 ? a.flatten().slice(0, 0, a.numel() / 2 + 1).reshape(
                                                   Shape{std::min<std::int64_t>(a.numel(), a.numel() / 2 + 1)})
                                              : a;
              break;
      default: b = c.tensor(c.any_dtype(), c.partner(a.defined() ? a.shape() : Shape{}));
    }
    N("b", b);
    const Scalar s = c.scalar_arg();
    switch (c.u(0, 8)) {
      case 0: add_(a, b); break;
      case 1: sub_(a, s); break;
      case 2: mul_(a, b); break;
      case 3: div_(a, c.one_in(2) ? Scalar(0) : s); break;
      case 4: copy_(a, b); break;
      case 5: fill_(a, s); break;
      case 6: zero_(a); break;
      case 7: a.div_(b); break;
      default: a.copy_(b);
    }
    touch(a);
  });
  OP("from_bytes", {
    const DType d = N("dtype", c.any_dtype());
    const Shape s = N("shape", c.bad(4) ? Shape{c.size_arg(), c.size_arg()} : c.shape());
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(c.u(0, 64)), 0xFF);
    N("nbytes", bytes.size());
    touch(Tensor::from_bytes(bytes.data(), bytes.size(), d, s));
  });

  // ---- factories ----
  OP("factory", {
    Shape s = c.shape();
    if (c.one_in(3)) s = Shape{c.size_arg(), c.size_arg()};
    if (c.bad(4)) s.push_back(c.absurd());
    N("shape", s);
    const DType d = N("dtype", c.any_dtype());
    switch (c.u(0, 3)) {
      case 0: touch(empty(s, d)); break;
      case 1: touch(zeros(s, d)); break;
      case 2: touch(ones(s, d)); break;
      default: {
        const Scalar v = c.scalar_arg();
        N("value", v.to_double());
        touch(full(s, v, d));
      }
    }
  });
  OP("arange/linspace/eye", {
    const DType d = N("dtype", c.any_dtype());
    switch (c.u(0, 4)) {
      case 0: {
        const double start = N("start", c.one_in(4) ? c.real_arg() : double(c.u(-5, 5)));
        const double end = N("end", c.one_in(6) ? double(c.absurd()) : (c.one_in(4) ? c.real_arg() : double(c.u(-5, 50))));
        const double step = N("step", c.one_in(4) ? c.real_arg() : double(c.pick<std::int64_t>({1, 2, -1, 0})));
        touch(arange(start, end, step, d));
        break;
      }
      case 1: touch(arange(N("n", c.size_arg()), d)); break;
      case 2: touch(eye(N("n", c.size_arg()), N("m", c.one_in(2) ? -1 : c.size_arg()), d)); break;
      case 3: touch(linspace(N("start", c.real_arg()), N("end", c.real_arg()), N("steps", c.size_arg()), d)); break;
      default: touch(logspace(N("start", c.real_arg()), N("end", c.real_arg()), N("steps", c.size_arg()),
                              N("base", c.real_arg()), d));
    }
  });
  OP("like", {
    const Tensor x = N("x", c.any_tensor());
    const DType d = N("dtype", c.any_dtype());
    switch (c.u(0, 3)) {
      case 0: touch(empty_like(x, d)); break;
      case 1: touch(zeros_like(x)); break;
      case 2: touch(ones_like(x, d)); break;
      default: touch(full_like(x, c.scalar_arg(), d));
    }
  });

  // ---- reductions ----
  OP("reduce(all)", {
    const Tensor x = N("x", c.any_tensor());
    switch (c.u(0, 9)) {
      case 0: touch(sum(x)); break;
      case 1: touch(mean(x)); break;
      case 2: touch(prod(x)); break;
      case 3: touch(amin(x)); break;
      case 4: touch(amax(x)); break;
      case 5: touch(any(x)); break;
      case 6: touch(all(x)); break;
      case 7: touch(argmax(x)); break;
      case 8: touch(argmin(x)); break;
      default: touch(c.one_in(2) ? sum(x, N("dtype", c.any_dtype())) : mean(x, N("dtype", c.any_dtype())));
    }
  });
  OP("reduce(dim)", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
    const bool keep = N("keepdim", c.one_in(2));
    switch (c.u(0, 11)) {
      case 0: touch(sum(x, dim, keep)); break;
      case 1: touch(mean(x, dim, keep)); break;
      case 2: touch(prod(x, dim, keep)); break;
      case 3: touch(amin(x, dim, keep)); break;
      case 4: touch(amax(x, dim, keep)); break;
      case 5: touch(any(x, dim, keep)); break;
      case 6: touch(all(x, dim, keep)); break;
      case 7: touch(argmax(x, dim, keep)); break;
      case 8: touch(argmin(x, dim, keep)); break;
      case 9: touch(max(x, dim, keep)); break;
      case 10: touch(min(x, dim, keep)); break;
      default: touch(sum(x, dim, keep, N("dtype", c.any_dtype())));
    }
  });
  OP("reduce(dims)", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t rank = x.defined() ? x.dim() : 1;
    std::vector<std::int64_t> dims;
    for (std::int64_t i = 0, n = c.u(0, 3); i < n; ++i) {
      const std::int64_t d = c.dim_arg(rank);
      if (!c.tame || std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
    }
    N("dims", Shape(dims));
    const bool keep = N("keepdim", c.one_in(2));
    switch (c.u(0, 5)) {
      case 0: touch(sum(x, dims, keep)); break;
      case 1: touch(mean(x, dims, keep)); break;
      case 2: touch(amin(x, dims, keep)); break;
      case 3: touch(amax(x, dims, keep)); break;
      case 4: touch(any(x, dims, keep)); break;
      default: touch(all(x, dims, keep));
    }
  });
  OP("masked_amin/amax", {
    const Tensor x = N("x", c.any_tensor());
    const Tensor m = N("mask", c.tensor(c.bad(4) ? c.any_dtype() : DType::Bool, c.same_or_partner(x)));
    if (c.one_in(2)) touch(c.one_in(2) ? masked_amin(x, m) : masked_amax(x, m));
    else touch(masked_amax(x, m, N("dim", c.dim_arg(x.defined() ? x.dim() : 1)), c.one_in(2)));
  });
  OP("prod_backward", {
    const Tensor x = N("x", c.any_tensor());
    if (c.one_in(2)) {
      touch(prod_backward(N("grad", c.tensor(c.same_or_any(x), c.bad(3) ? c.shape() : Shape{})), x));
    } else {
      const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
      const bool keep = N("keepdim", c.one_in(2));
      Shape gs = x.defined() ? x.shape() : Shape{};
      if (!gs.empty() && dim >= -x.dim() && dim < x.dim()) {
        const auto d = static_cast<std::size_t>(dim < 0 ? dim + x.dim() : dim);
        if (keep) gs[d] = 1;
        else gs.erase(gs.begin() + static_cast<std::ptrdiff_t>(d));
      }
      touch(prod_backward(N("grad", c.tensor(c.same_or_any(x), c.bad(4) ? c.shape() : gs)), x, dim, keep));
    }
  });
  OP("scan", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
    switch (c.u(0, 4)) {
      case 0: touch(cumsum(x, dim)); break;
      case 1: touch(cumprod(x, dim)); break;
      case 2: touch(logcumsumexp(x, dim)); break;
      case 3: touch(cummax(x, dim)); break;
      default: touch(cummin(x, dim));
    }
  });
  OP("softmax", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
    switch (c.u(0, 3)) {
      case 0: touch(softmax(x, dim)); break;
      case 1: touch(log_softmax(x, dim, N("dtype", c.any_dtype()))); break;
      case 2: touch(softmax_backward(N("grad", c.tensor(c.same_or_any(x), c.same_or_partner(x))), x, dim));
              break;
      default: touch(log_softmax_backward(
                   N("grad", c.tensor(c.same_or_any(x), c.same_or_partner(x))), x, dim));
    }
  });
  OP("layer_norm/rms_norm", {
    const Tensor x = N("x", c.float_tensor(c.tame ? 1 : 0));
    const std::int64_t last = x.defined() && x.dim() > 0 ? x.size(-1) : 1;
    const Shape ws = c.bad(5) ? c.shape(0, 2) : Shape{last};
    const Tensor w = N("weight", c.one_in(3) ? Tensor() : c.tensor(c.same_or_any(x), ws));
    const Tensor b = N("bias", c.one_in(3) ? Tensor() : c.tensor(c.same_or_any(x), c.bad(5) ? c.shape(0, 2) : ws));
    const double eps = N("eps", c.one_in(3) ? c.real_arg() : 1e-5);
    LayerNormOptions lo;
    if (c.one_in(4)) lo.out_dtype = N("out_dtype", c.any_dtype());
    if (c.one_in(2)) {
      const LayerNormResult r = layer_norm(x, w, b, eps, lo);
      touch(r.y), touch(r.mean), touch(r.rstd);
      const Tensor g = N("grad", c.bad(4) ? c.float_tensor() : c.tensor(c.float_dtype(), r.y.shape()));
      LayerNormBackwardOptions bo;
      if (c.one_in(4)) bo.dx_cast = N("dx_cast", c.any_dtype());
      if (c.one_in(5)) bo.residual = N("residual", c.bad(2) ? c.float_tensor() : c.tensor(x.dtype(), x.shape()));
      const LayerNormGrads gr = layer_norm_backward(g, x, c.bad(8) ? r.rstd : r.mean, r.rstd,
                                                    c.bad(8) ? b : w, bo);
      touch(gr.dx), touch(gr.dweight), touch(gr.dbias), touch(gr.dx_cast);
    } else {
      RmsNormOptions ro;
      ro.out_dtype = lo.out_dtype;
      const RmsNormResult r = rms_norm(x, w, eps, ro);
      touch(r.y), touch(r.rstd);
      const Tensor g = N("grad", c.bad(4) ? c.float_tensor() : c.tensor(c.float_dtype(), r.y.shape()));
      const RmsNormGrads gr = rms_norm_backward(g, x, r.rstd, w);
      touch(gr.dx), touch(gr.dweight);
    }
  });

  // ---- views ----
  OP("view/reshape", {
    const Tensor x = N("x", c.any_tensor());
    Shape s;
    const std::int64_t n = x.defined() ? x.numel() : 1;
    switch (c.u(0, 3)) {
      case 0: s = {n}; break;
      case 1: s = {-1}; break;
      case 2: s = {c.size_arg(), -1}; break;
      default: s = c.shape();
    }
    if (c.bad(5)) s.push_back(c.pick<std::int64_t>({-1, -2, 0, c.absurd()}));
    N("shape", s);
    touch(c.one_in(2) ? x.view(s) : x.reshape(s));
  });
  OP("slice/narrow/select", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
    const std::int64_t a = N("a", c.bad(8) ? c.absurd() : c.u(-6, 6));
    const std::int64_t b = N("b", c.bad(8) ? c.absurd() : c.u(-6, 8));
    switch (c.u(0, 2)) {
      case 0: touch(x.slice(dim, a, b, N("step", c.bad(6) ? c.absurd() : c.u(-1, 3)))); break;
      case 1: touch(x.narrow(dim, a, b)); break;
      default: touch(x.select(dim, a));
    }
  });
  OP("squeeze/unsqueeze/flatten", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t r = x.defined() ? x.dim() : 1;
    const std::int64_t d = N("d", c.dim_arg(r + 1));
    switch (c.u(0, 4)) {
      case 0: touch(x.unsqueeze(d)); break;
      case 1: touch(x.squeeze()); break;
      case 2: touch(x.squeeze(d)); break;
      case 3: touch(x.flatten(d, N("end", c.dim_arg(r)))); break;
      default: {
        const Shape s = N("sizes", c.bad(3) ? c.shape(0, 3) : Shape{c.size_arg(), -1});
        touch(x.unflatten(d, s));
      }
    }
  });
  OP("expand", {
    const Tensor x = N("x", c.any_tensor());
    Shape s = x.defined() ? x.shape() : Shape{};
    for (auto& d : s)
      if (c.one_in(2)) d = c.one_in(3) ? -1 : c.size_arg();
    if (c.one_in(3)) s.insert(s.begin(), c.size_arg());
    N("shape", s);
    const Tensor e = x.expand(s);  // not touched: a legal view may have 2^62 elements
    if (e.numel() <= kMaxElements) touch(e);
  });
  OP("transpose/permute", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t r = x.defined() ? x.dim() : 1;
    switch (c.u(0, 4)) {
      case 0: touch(transpose(x, N("d0", c.dim_arg(r)), N("d1", c.dim_arg(r)))); break;
      case 1: touch(permute(x, N("dims", Shape(c.perm(r))))); break;
      case 2: touch(x.t()); break;
      case 3: touch(x.mT()); break;
      default: touch(x.diagonal(N("offset", c.bad(5) ? c.absurd() : c.u(-3, 3)), N("d1", c.dim_arg(r)),
                                N("d2", c.dim_arg(r))));
    }
  });
  OP("unfold", {
    const Tensor x = N("x", c.any_tensor());
    touch(x.unfold(N("dim", c.dim_arg(x.defined() ? x.dim() : 1)), N("size", c.size_arg()),
                   N("step", c.size_arg())));
  });
  OP("as_strided/strided_copy", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t rank = c.u(0, 3);
    Shape s, st;
    for (std::int64_t i = 0; i < rank; ++i) {
      s.push_back(c.bad(10) ? c.absurd() : c.small());
      st.push_back(c.bad(10) ? c.absurd() : c.u(-1, 5));
    }
    if (c.bad(8)) st.push_back(1);  // a rank mismatch
    N("shape", s), N("strides", st);
    const std::int64_t off = N("offset", c.bad(8) ? c.absurd() : c.u(0, 8));
    switch (c.u(0, 2)) {
      case 0: {
        const Tensor v = x.as_strided(s, st, off);
        if (v.numel() <= kMaxElements) touch(v);
        break;
      }
      case 1: touch(strided_copy(x, s, st, off)); break;
      default: {
        const Tensor src = N("src", c.tensor(x.defined() ? x.dtype() : DType::F32, c.bad(3) ? c.shape() : s));
        strided_scatter(x, src, s, st, off);
        touch(x);
      }
    }
  });
  OP("cat/stack", {
    const DType d = c.any_dtype();
    const Shape s = c.shape();
    const std::int64_t n = c.u(c.tame ? 1 : 0, 4);
    std::vector<Tensor> ts;
    for (std::int64_t i = 0; i < n; ++i) {
      Shape si = s;
      if (!si.empty() && c.one_in(2)) si[static_cast<std::size_t>(c.u(0, static_cast<std::int64_t>(si.size()) - 1))] = c.small();
      if (c.bad(10)) si = c.shape();
      ts.push_back(N("t", c.tensor(c.bad(5) ? c.any_dtype() : d, si)));
    }
    const std::int64_t dim = N("dim", c.dim_arg(static_cast<std::int64_t>(s.size()) + 1));
    touch(c.one_in(2) ? cat(ts, dim) : stack(ts, dim));
  });
  OP("split/chunk/repeat/roll", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t r = x.defined() ? x.dim() : 1;
    const std::int64_t dim = N("dim", c.dim_arg(r));
    switch (c.u(0, 3)) {
      case 0: {
        std::vector<std::int64_t> sizes;
        for (std::int64_t i = 0, n = c.u(0, 3); i < n; ++i) sizes.push_back(c.size_arg());
        touch(split(x, N("sizes", Shape(sizes)), dim));
        break;
      }
      case 1: touch(chunk(x, N("n", c.size_arg()), dim)); break;
      case 2: {
        std::vector<std::int64_t> reps;
        for (std::int64_t i = 0, n = c.u(0, 5); i < n; ++i) reps.push_back(c.bad(10) ? c.absurd() : c.u(0, 3));
        touch(repeat(x, N("reps", Shape(reps))));
        break;
      }
      default: touch(roll(x, N("shift", c.bad(5) ? c.absurd() : c.u(-5, 5)), dim));
    }
  });
  OP("index_select/gather/scatter_add", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t r = x.defined() ? x.dim() : 1;
    const std::int64_t dim = N("dim", c.dim_arg(r));
    const std::int64_t bound = x.defined() && dim >= -r && dim < r && r > 0 ? x.size(dim < 0 ? dim + r : dim) : 3;
    switch (c.u(0, 2)) {
      case 0: touch(index_select(x, dim, N("index", c.index_tensor(c.shape(0, 2), bound)))); break;
      case 1: {
        Shape is = x.defined() ? x.shape() : Shape{};
        for (auto& d : is) if (c.one_in(3)) d = c.small();
        touch(gather(x, dim, N("index", c.index_tensor(is, bound))));
        break;
      }
      default: {
        Shape is = x.defined() ? x.shape() : Shape{};
        for (auto& d : is) if (c.one_in(3)) d = std::min<std::int64_t>(d, c.small());
        const Tensor idx = N("index", c.index_tensor(is, bound));
        const Tensor src = N("src", c.tensor(c.bad(4) ? c.any_dtype() : (x.defined() ? x.dtype() : DType::F32),
                                             c.bad(4) ? c.shape() : is));
        touch(scatter_add(x, dim, idx, src));
      }
    }
  });
  OP("masked_select/scatter", {
    const Tensor x = N("x", c.any_tensor());
    const Tensor m = N("mask", c.tensor(c.bad(4) ? c.any_dtype() : DType::Bool,
                                        c.partner(x.defined() ? x.shape() : Shape{})));
    if (c.one_in(2)) touch(masked_select(x, m));
    else touch(masked_scatter(x, m, N("source", c.tensor(c.bad(4) ? c.any_dtype() : (x.defined() ? x.dtype() : DType::F32),
                                                         c.shape(0, 2)))));
  });
  OP("embedding", {
    const Tensor w = N("weight", c.float_tensor(0, 3));
    const std::int64_t rows = w.defined() && w.dim() > 0 ? w.size(0) : 3;
    const Tensor idx = N("indices", c.index_tensor(c.shape(0, 2), rows));
    if (c.one_in(2)) {
      touch(nn::embedding(w, idx));
    } else {
      Shape gs = idx.defined() ? idx.shape() : Shape{};
      gs.push_back(c.small());
      touch(nn::embedding_backward(N("grad", c.tensor(c.float_dtype(), c.bad(4) ? c.shape() : gs)), idx,
                                   N("num", c.bad(6) ? c.absurd() : rows)));
    }
  });
  OP("slice_write/read", {
    const Tensor cache = N("cache", c.any_tensor(1, 4));
    if (c.one_in(2)) {
      touch(slice_read(cache, N("len", c.bad(5) ? c.absurd() : c.u(-1, 6))));
    } else {
      Shape s = cache.defined() ? cache.shape() : Shape{};
      if (s.size() >= 2 && c.one_in(2)) s[s.size() - 2] = c.small();
      if (c.bad(5)) s = c.shape();
      const Tensor src = N("src", c.tensor(c.bad(4) ? c.any_dtype() : (cache.defined() ? cache.dtype() : DType::F32), s));
      slice_write(cache, src, N("pos", c.bad(5) ? c.absurd() : c.u(-1, 6)));
      touch(cache);
    }
  });

  // ---- matmul ----
  OP("matmul", {
    // The variant first, then ranks that suit it (any ranks when not tame).
    const std::int64_t variant = c.u(0, 6);
    static constexpr std::int64_t kRanks[7][2] = {{-1, -1}, {2, 2}, {3, 3}, {1, 1}, {2, 1}, {1, 2}, {2, 2}};
    const bool any_rank = !c.tame || variant == 0 || c.one_in(4);
    const std::int64_t ra = any_rank ? c.u(0, 4) : kRanks[variant][0], rb = any_rank ? c.u(0, 4) : kRanks[variant][1];
    const std::int64_t m = c.small(), k = c.small(), n = c.small();
    Shape batch;
    for (std::int64_t i = 0; i < 2; ++i) batch.push_back(c.small() % 3 + (c.one_in(3) ? 0 : 1));
    auto mk = [&](std::int64_t rank, std::int64_t r0, std::int64_t r1) {
      if (rank == 0) return Shape{};
      if (rank == 1) return Shape{r1};
      Shape s(batch.end() - std::min<std::int64_t>(rank - 2, 2), batch.end());
      s.push_back(r0), s.push_back(r1);
      if (c.bad(8)) s[static_cast<std::size_t>(c.u(0, rank - 1))] += 1;
      return s;
    };
    const DType d = c.bad(4) ? c.any_dtype() : c.float_dtype();
    MatmulOptions o;
    o.transpose_a = N("ta", c.one_in(4));
    o.transpose_b = N("tb", c.one_in(4));
    Shape sa = mk(ra, m, k), sb = mk(rb, k, n);
    if (rb == 1) sb = {k};
    if (o.transpose_a && sa.size() >= 2) std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
    if (o.transpose_b && sb.size() >= 2) std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
    const Tensor a = N("a", c.tensor(d, sa)), b = N("b", c.tensor(c.bad(5) ? c.any_dtype() : d, sb));
    if (c.one_in(4)) o.out_dtype = N("out_dtype", c.any_dtype());
    if (c.one_in(4)) o.compute = N("compute", static_cast<MatmulCompute>(c.u(0, c.bad(5) ? 6 : 4)));
    switch (variant) {
      case 0: touch(matmul(a, b, o)); break;
      case 1: touch(mm(a, b, o)); break;
      case 2: touch(bmm(a, b, o)); break;
      case 3: touch(dot(a, b, o)); break;
      case 4: touch(mv(a, b, o)); break;
      case 5: touch(vm(a, b, o)); break;
      default: {
        Tensor out;
        switch (c.u(0, 2)) {
          case 0: out = c.tame ? c.tensor(d, {m, n}) : a; break;
          case 1: out = c.tame && m == k ? a : b; break;  // tame: in place when a is [m, m]
          default: out = c.tensor(c.bad(4) ? c.any_dtype() : d, sa.size() >= 2 ? Shape{m, n} : c.shape());
        }
        N("out", out);
        matmul_out(out, a, b, N("alpha", c.one_in(3) ? c.real_arg() : 1.0), N("beta", c.one_in(2) ? c.real_arg() : 0.0), o);
        touch(out);
      }
    }
  });
  OP("linear", {
    const DType d = c.float_dtype();
    const std::int64_t in = c.small(), out = c.small();
    Shape xs = c.shape(0, 2);
    xs.push_back(in);
    const Tensor x = N("x", c.tensor(d, c.bad(6) ? c.shape() : xs));
    const Tensor w = N("weight", c.tensor(c.bad(5) ? c.any_dtype() : d, c.bad(6) ? c.shape() : Shape{out, in}));
    std::optional<Tensor> bias;
    if (c.one_in(2)) bias = N("bias", c.tensor(c.bad(5) ? c.any_dtype() : d, c.bad(5) ? c.shape(0, 2) : Shape{out}));
    nn::LinearOptions o;
    if (c.one_in(4)) o.out_dtype = N("out_dtype", c.any_dtype());
    if (c.one_in(4)) {
      Shape rs = xs;
      rs.back() = out;
      o.residual = N("residual", c.tensor(c.bad(3) ? c.float_dtype() : (o.out_dtype ? *o.out_dtype : d), c.partner(rs)));
    }
    if (c.one_in(3)) {
      const Tensor o2 = N("out", c.bad(3) ? x : c.tensor(d, c.partner(Shape{out})));
      nn::linear_out(o2, x, w, bias, o);
      touch(o2);
    } else {
      touch(nn::linear(x, w, bias, o));
    }
  });

  // ---- attention ----
  OP("scaled_dot_product_attention", {
    const DType d = c.float_dtype();
    const std::int64_t b = c.small() % 3, hq = c.pick<std::int64_t>({1, 2, 4}), sq = c.small(), sk = c.small();
    const std::int64_t hk = c.one_in(3) ? (c.bad(3) ? 3 : (hq % 2 == 0 ? hq / 2 : hq)) : hq;
    const std::int64_t dh = c.pick<std::int64_t>({0, 1, 4, 8, 16}), dv = c.bad(4) ? c.small() : dh;
    auto sh = [&](Shape s) { return c.bad(12) ? c.shape() : s; };
    const Tensor q = N("q", c.tensor(d, sh({b, hq, sq, dh})));
    const Tensor k = N("k", c.tensor(c.bad(8) ? c.any_dtype() : d, sh({b, hk, sk, dh})));
    const Tensor v = N("v", c.tensor(c.bad(8) ? c.any_dtype() : d, sh({b, hk, sk, dv})));
    nn::AttentionOptions o;
    o.causal = N("causal", c.one_in(3));
    if (c.one_in(4)) o.scale = N("scale", c.real_arg());
    if (c.one_in(4)) {
      Shape ms = {b, hq, sq, sk};
      for (auto& e : ms) if (c.one_in(3)) e = 1;
      o.mask = N("mask", c.tensor(c.one_in(2) ? DType::Bool : (c.one_in(2) ? d : c.any_dtype()), sh(ms)));
    }
    random::Generator gen(c.u(0, 1000));
    if (c.one_in(4)) {
      o.dropout_p = N("dropout_p", c.prob_arg());
      if (c.one_in(2)) o.generator = &gen;
    }
    o.deterministic = c.one_in(2);
    const nn::AttentionResult r = nn::scaled_dot_product_attention(q, k, v, o);
    touch(r.out), touch(r.logsumexp);
    if (c.one_in(2)) {
      o.dropout_state = r.dropout_state;
      const Tensor g = N("grad_out", c.tensor(c.bad(6) ? c.any_dtype() : d, c.bad(8) ? c.shape() : r.out.shape()));
      const Tensor lse = c.bad(8) ? N("lse", c.float_tensor()) : r.logsumexp;
      if (c.one_in(3)) {
        nn::AttentionGrads grads{c.tensor(d, q.shape()), c.bad(4) ? q : c.tensor(d, k.shape()),
                                 c.tensor(c.bad(6) ? c.any_dtype() : d, v.shape())};
        N("dq", grads.dq), N("dk", grads.dk), N("dv", grads.dv);
        nn::scaled_dot_product_attention_backward_out(grads, g, q, k, v, r.out, lse, o);
        touch(grads.dq), touch(grads.dk), touch(grads.dv);
      } else {
        const nn::AttentionGrads gr = nn::scaled_dot_product_attention_backward(g, q, k, v, r.out, lse, o);
        touch(gr.dq), touch(gr.dk), touch(gr.dv);
      }
    }
  });

  // ---- convolution and pooling ----
  OP("conv2d", {
    const DType d = c.float_dtype();
    const std::int64_t n = c.small() % 3, g = c.pick<std::int64_t>({1, 1, 2}), ci = g * (c.small() % 3 + 1),
                       co = g * (c.small() % 3 + 1), h = c.small() + 1, w = c.small() + 1, kh = c.u(1, 3), kw = c.u(1, 3);
    const Tensor x = N("x", c.tensor(d, c.bad(8) ? c.shape() : Shape{n, ci, h, w}));
    const Tensor wt = N("weight", c.tensor(c.bad(8) ? c.any_dtype() : d, c.bad(8) ? c.shape() : Shape{co, ci / g, kh, kw}));
    std::optional<Tensor> bias;
    if (c.one_in(2)) bias = N("bias", c.tensor(d, c.bad(6) ? c.shape(0, 2) : Shape{co}));
    nn::Conv2dOptions o;
    auto p2 = [&](std::int64_t lo, std::int64_t hi) {
      return nn::Size2{c.bad(10) ? c.absurd() : c.u(lo, hi), c.bad(10) ? c.absurd() : c.u(lo, hi)};
    };
    o.stride = p2(1, 3), o.padding = p2(0, 2), o.dilation = p2(1, 2);
    o.groups = c.bad(8) ? c.absurd() : (c.one_in(6) ? c.u(0, 3) : g);
    N("stride", Shape{o.stride[0], o.stride[1]}), N("padding", Shape{o.padding[0], o.padding[1]}),
        N("dilation", Shape{o.dilation[0], o.dilation[1]}), N("groups", o.groups);
    if (c.one_in(2)) {
      touch(nn::conv2d(x, wt, bias, o));
    } else {
      const Tensor gr = N("grad", c.tensor(d, c.bad(3) ? c.shape(4, 4) : Shape{n, co, h, w}));
      const std::array<bool, 3> mask = {c.one_in(2), c.one_in(2), c.one_in(2)};
      const nn::Conv2dGrads r = nn::conv2d_backward(gr, x, wt, o, mask);
      touch(r.input), touch(r.weight), touch(r.bias);
    }
  });
  OP("pool2d", {
    const DType d = c.bad(5) ? c.any_dtype() : c.float_dtype();
    const Tensor x = N("x", c.tensor(d, c.bad(6) ? c.shape() : c.shape(3, 4)));
    auto p2 = [&](std::int64_t lo, std::int64_t hi) {
      return nn::Size2{c.bad(12) ? c.absurd() : c.u(lo, hi), c.bad(12) ? c.absurd() : c.u(lo, hi)};
    };
    const nn::Size2 k = p2(c.tame ? 1 : 0, 3), pad = p2(0, 1);
    const std::optional<nn::Size2> stride = c.one_in(2) ? std::nullopt : std::optional<nn::Size2>(p2(0, 3));
    const bool ceil = c.one_in(2);
    N("kernel", Shape{k[0], k[1]}), N("padding", Shape{pad[0], pad[1]}), N("ceil", ceil);
    if (stride) N("stride", Shape{(*stride)[0], (*stride)[1]});
    switch (c.u(0, 2)) {
      case 0: {
        nn::MaxPool2dOptions o{k, stride, pad, p2(1, 2), ceil};
        N("dilation", Shape{o.dilation[0], o.dilation[1]});
        const nn::MaxPool2dResult r = nn::max_pool2d(x, o);
        touch(r.values), touch(r.indices);
        if (c.one_in(2)) {
          const Tensor g = N("grad", c.tensor(d, c.bad(5) ? c.shape() : r.values.shape()));
          const Tensor idx = c.bad(5) ? N("indices", c.index_tensor(r.indices.shape(), 1 << 20)) : r.indices;
          touch(nn::max_pool2d_backward(g, x, idx, o));
        }
        break;
      }
      case 1: {
        nn::AvgPool2dOptions o;
        o.kernel_size = k, o.stride = stride, o.padding = pad, o.ceil_mode = ceil;
        o.count_include_pad = c.one_in(2);
        if (c.one_in(4)) o.divisor_override = N("divisor", c.bad(2) ? c.absurd() : c.u(-1, 3));
        const Tensor y = nn::avg_pool2d(x, o);
        touch(y);
        if (c.one_in(2)) touch(nn::avg_pool2d_backward(N("grad", c.tensor(d, c.bad(5) ? c.shape() : y.shape())), x, o));
        break;
      }
      default: {
        const nn::Size2 os = p2(0, 4);
        N("output_size", Shape{os[0], os[1]});
        const Tensor y = nn::adaptive_avg_pool2d(x, os);
        touch(y);
        if (c.one_in(2)) touch(nn::adaptive_avg_pool2d_backward(N("grad", c.tensor(d, c.bad(5) ? c.shape() : y.shape())), x));
      }
    }
  });
  OP("rnn_cell", {
    const DType d = c.float_dtype();
    const std::int64_t b = c.small(), h = c.small();
    const bool gru = N("gru", c.one_in(2));
    const std::int64_t g = gru ? 3 : 4;
    auto sh = [&](Shape s) { return c.bad(10) ? c.shape() : s; };
    const Tensor ig = N("input_gates", c.tensor(d, sh({b, g * h})));
    const Tensor hg = N("hidden_gates", c.tensor(c.bad(8) ? c.any_dtype() : d, sh({b, g * h})));
    const Tensor hx = N("hx", c.tensor(d, sh({b, h})));
    std::optional<Tensor> ib, hb;
    if (c.one_in(2)) ib = N("input_bias", c.tensor(d, sh({g * h}))), hb = N("hidden_bias", c.tensor(d, sh({g * h})));
    if (gru) {
      const nn::GruCellResult r = nn::gru_cell(ig, hg, hx, ib, hb);
      touch(r.hy), touch(r.workspace);
      const nn::GruCellGrads gr = nn::gru_cell_backward(N("grad_hy", c.tensor(d, sh(r.hy.shape()))),
                                                        c.bad(6) ? c.float_tensor() : r.workspace, c.one_in(2));
      touch(gr.input_gates), touch(gr.hidden_gates), touch(gr.hx), touch(gr.input_bias), touch(gr.hidden_bias);
    } else {
      const nn::LstmCellResult r = nn::lstm_cell(ig, hg, hx, ib, hb);
      touch(r.hy), touch(r.cy), touch(r.workspace);
      std::optional<Tensor> ghy, gcy;
      if (c.one_in(2)) ghy = N("grad_hy", c.tensor(d, sh(r.hy.shape())));
      if (c.one_in(2)) gcy = N("grad_cy", c.tensor(d, sh(r.cy.shape())));
      const nn::LstmCellGrads gr = nn::lstm_cell_backward(ghy, gcy, hx, c.bad(6) ? hx : r.cy,
                                                          c.bad(6) ? c.float_tensor() : r.workspace, c.one_in(2));
      touch(gr.gates), touch(gr.cx), touch(gr.bias);
    }
  });

  // ---- training ----
  OP("dropout", {
    const Tensor x = N("x", c.any_tensor());
    const double p = N("p", c.prob_arg());
    random::Generator gen(c.u(0, 99));
    const nn::DropoutResult r = nn::dropout(x, p, c.one_in(2) ? &gen : nullptr);
    touch(r.output), touch(r.mask);
    if (c.one_in(2)) {
      const Tensor g = N("grad", c.tensor(c.any_dtype(), c.bad(4) ? c.shape() : r.output.shape()));
      touch(nn::dropout_backward(g, c.bad(6) ? x : r.mask, N("p2", c.one_in(3) ? c.prob_arg() : p)));
    }
  });
  OP("cross_entropy", {
    const DType d = c.float_dtype();
    const std::int64_t n = c.small(), k = c.small();
    const Tensor logits = N("logits", c.tensor(d, c.bad(6) ? c.shape() : Shape{n, k}));
    const Tensor t = N("targets", c.index_tensor(c.bad(6) ? c.shape(0, 2) : Shape{n}, k));
    nn::CrossEntropyOptions o;
    o.ignore_index = N("ignore_index", c.one_in(4) ? c.u(-1, 3) : -100);
    o.label_smoothing = N("label_smoothing", c.one_in(3) ? c.prob_arg() : 0.0);
    o.reduction = N("reduction", static_cast<nn::Reduction>(c.bad(20) ? 9 : c.u(0, 2)));
    if (c.one_in(2)) {
      touch(nn::cross_entropy(logits, t, o));
    } else {
      const nn::CrossEntropyForward f = nn::cross_entropy_forward(logits, t, o);
      touch(f.loss), touch(f.lse), touch(f.count);
      const Tensor g = N("grad", c.tensor(d, c.bad(4) ? c.shape(0, 1) : f.loss.shape()));
      touch(nn::cross_entropy_backward(g, logits, t, f, o));
    }
  });
  OP("optim", {
    const DType d = c.float_dtype();
    const std::int64_t n = c.u(0, 2);
    const Shape s = c.shape(0, 2);
    auto list = [&](const char* name, DType dt) {
      std::vector<Tensor> v;
      for (std::int64_t i = 0, m = c.bad(8) ? c.u(0, 3) : n; i < m; ++i)
        v.push_back(N(name, c.tensor(c.bad(8) ? c.any_dtype() : dt, c.bad(8) ? c.shape() : s)));
      return v;
    };
    const Tensor found = c.one_in(4) ? N("found_inf", c.any_tensor(0, 1)) : Tensor();
    if (c.one_in(2)) {
      optim::AdamTensors t{list("param", d), list("grad", d), list("exp_avg", DType::F32), list("exp_avg_sq", DType::F32),
                           {}, {}};
      optim::AdamOptions o;
      o.lr = N("lr", c.tame ? 0.01 : c.real_arg());
      o.amsgrad = c.one_in(3);
      if (o.amsgrad) t.max_exp_avg_sqs = list("max_exp_avg_sq", DType::F32);
      if (c.one_in(4)) t.master_params = list("master", DType::F32);
      const std::int64_t step = N("step", c.bad(5) ? c.absurd() : c.u(c.tame ? 1 : 0, 3));
      if (c.one_in(2)) optim::adam(t, step, o, found);
      else optim::adamw(t, step, o, found);
    } else {
      optim::SgdOptions o;
      o.lr = N("lr", c.tame ? 0.01 : c.real_arg());
      o.momentum = N("momentum", c.one_in(2) ? 0.0 : c.real_arg());
      o.nesterov = c.one_in(3);
      optim::SgdTensors t{list("param", d), list("grad", d), o.momentum != 0 ? list("buf", DType::F32) : std::vector<Tensor>{},
                          {}};
      optim::sgd(t, c.one_in(2), o, found);
    }
  });

  // ---- linear algebra ----
  OP("linalg", {
    const DType d = c.bad(5) ? c.any_dtype() : c.pick<DType>({DType::F32, DType::F64, DType::C64, DType::C128});
    const std::int64_t n = c.small() % 6, m = c.one_in(3) ? c.small() % 6 : n;
    Shape s = c.shape(0, 1);
    s.push_back(n), s.push_back(m);
    if (c.bad(8)) s = c.shape();
    const Tensor a = N("a", c.tensor(d, s));
    auto rhs = [&]() {
      Shape bs = s;
      if (bs.size() >= 2) bs.back() = c.small() % 4;
      if (c.one_in(3) && bs.size() >= 2) bs.pop_back();
      if (c.bad(8)) bs = c.shape();
      return N("b", c.tensor(c.bad(6) ? c.any_dtype() : d, bs));
    };
    switch (c.u(0, 14)) {
      case 0: touch(linalg::cholesky(a, c.one_in(2))); break;
      case 1: { auto r = linalg::cholesky_ex(a); touch(r.L), touch(r.info); break; }
      case 2: touch(linalg::solve(a, rhs())); break;
      case 3: { auto r = linalg::solve_ex(a, rhs()); touch(r.result), touch(r.info); break; }
      case 4: {
        const linalg::LuFactor f = linalg::lu_factor(a);
        touch(f.LU), touch(f.pivots);
        const Tensor piv = c.bad(4) ? N("pivots", c.index_tensor(f.pivots.shape(), 8)) : f.pivots;
        touch(linalg::lu_solve(f.LU, piv, rhs()));
        break;
      }
      case 5: { auto r = linalg::lu(a); touch(r.P), touch(r.L), touch(r.U); break; }
      case 6: { auto r = linalg::qr(a, N("mode", static_cast<linalg::QrMode>(c.u(0, c.bad(10) ? 5 : 2)))); touch(r.Q), touch(r.R); break; }
      case 7: { auto r = linalg::eigh(a, N("uplo", c.pick<char>({'L', 'U', 'x', '\0'}))); touch(r.eigenvalues), touch(r.eigenvectors); break; }
      case 8: touch(linalg::eigvalsh(a)); break;
      case 9: { auto r = linalg::svd(a, c.one_in(2)); touch(r.U), touch(r.S), touch(r.Vh); break; }
      case 10: touch(linalg::svdvals(a)); break;
      case 11: { auto r = linalg::eig(a); touch(r.eigenvalues), touch(r.eigenvectors); break; }
      case 12: touch(linalg::eigvals(a)); break;
      case 13: touch(linalg::lstsq(a, rhs())); break;
      default: { auto r = linalg::lu_factor_ex(a); touch(r.LU), touch(r.pivots), touch(r.info); touch(linalg::inv(a)); }
    }
  });

  // ---- FFT ----
  OP("fft1", {
    const DType d = c.bad(5) ? c.any_dtype() : c.pick<DType>({DType::F32, DType::F64, DType::C64, DType::C128, DType::F16});
    const Tensor x = N("x", c.tensor(d, c.shape()));
    const std::optional<std::int64_t> n =
        N("n", c.one_in(2) ? std::nullopt : std::optional<std::int64_t>(c.bad(6) ? c.absurd() : c.u(0, 9)));
    const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
    const auto norm = N("norm", static_cast<fft::Norm>(c.bad(20) ? 7 : c.u(0, 2)));
    switch (c.u(0, 5)) {
      case 0: touch(fft::fft(x, n, dim, norm)); break;
      case 1: touch(fft::ifft(x, n, dim, norm)); break;
      case 2: touch(fft::rfft(x, n, dim, norm)); break;
      case 3: touch(fft::irfft(x, n, dim, norm)); break;
      case 4: touch(fft::hfft(x, n, dim, norm)); break;
      default: touch(fft::ihfft(x, n, dim, norm));
    }
  });
  OP("fftn", {
    const DType d = c.bad(5) ? c.any_dtype() : c.pick<DType>({DType::F32, DType::F64, DType::C64, DType::C128});
    const Tensor x = N("x", c.tensor(d, c.shape()));
    const std::int64_t r = x.defined() ? x.dim() : 1;
    std::optional<fft::Dims> s, dims;
    if (c.one_in(2)) {
      fft::Dims v;
      for (std::int64_t i = 0, k = c.u(0, 3); i < k; ++i) v.push_back(c.bad(8) ? c.absurd() : c.u(-1, 6));
      s = v;
      N("s", Shape(v));
    }
    if (c.one_in(2)) {
      fft::Dims v;
      for (std::int64_t i = 0, k = c.u(0, 3); i < k; ++i) v.push_back(c.dim_arg(r));
      dims = v;
      N("dim", Shape(v));
    }
    switch (c.u(0, 7)) {
      case 0: touch(fft::fftn(x, s, dims)); break;
      case 1: touch(fft::ifftn(x, s, dims)); break;
      case 2: touch(fft::rfftn(x, s, dims)); break;
      case 3: touch(fft::irfftn(x, s, dims)); break;
      case 4: touch(fft::fft2(x, s, dims ? *dims : fft::Dims{-2, -1})); break;
      case 5: touch(fft::irfft2(x, s, dims ? *dims : fft::Dims{-2, -1})); break;
      case 6: touch(fft::fftshift(x, dims)); break;
      default: touch(fft::ifftshift(x, dims));
    }
  });
  OP("fftfreq", {
    const std::int64_t n = N("n", c.size_arg());
    const double dd = N("d", c.real_arg());
    const DType dt = N("dtype", c.any_dtype());
    touch(c.one_in(2) ? fft::fftfreq(n, dd, dt) : fft::rfftfreq(n, dd, dt));
  });

  // ---- sparse ----
  OP("sparse(dense)", {
    const DType d = c.bad(5) ? c.any_dtype() : c.pick<DType>({DType::F32, DType::F64, DType::F16, DType::C64});
    const std::int64_t r = c.small(), k = c.small();
    Tensor x = N("x", c.tensor(d, c.bad(8) ? c.shape() : Shape{r, k}));
    if (x.defined() && x.numel() > 0 && c.one_in(2)) x = x * (c.dense(DType::Bool, x.shape()));  // make it sparse
    const auto layout = N("layout", static_cast<sparse::Layout>(c.bad(20) ? 5 : c.u(0, 2)));
    const DType id = N("index_dtype", c.index_dtype());
    const sparse::SparseMatrix a = sparse::from_dense(x, layout, id);
    touch(a.values());
    switch (c.u(0, 9)) {
      case 0: touch(sparse::to_dense(a)); break;
      case 1: touch(sparse::to_dense(sparse::to_csr(a))); break;
      case 2: touch(sparse::to_dense(sparse::to_csc(a))); break;
      case 3: touch(sparse::to_dense(sparse::coalesce(sparse::to_coo(a)))); break;
      case 4: touch(sparse::to_dense(sparse::transpose(a))); break;
      case 5: touch(sparse::spmv(a, N("v", c.tensor(c.bad(4) ? c.any_dtype() : d, {c.bad(4) ? c.small() : k})))); break;
      case 6: touch(sparse::spmm(a, N("b", c.tensor(c.bad(4) ? c.any_dtype() : d, {c.bad(4) ? c.small() : k, c.small()})))); break;
      case 7: touch(sparse::spmm(N("b", c.tensor(d, {c.small(), c.bad(4) ? c.small() : r})), a)); break;
      case 8: {
        const sparse::SparseMatrix b = sparse::from_dense(N("y", c.tensor(d, c.one_in(3) ? Shape{k, c.small()} : Shape{r, k})),
                                                          c.one_in(2) ? layout : sparse::Layout::CSR, id);
        touch(sparse::to_dense(c.one_in(2) ? sparse::spgemm(a, b) : sparse::add(a, b, c.real_arg())));
        break;
      }
      default: {
        const std::int64_t inner = c.small();
        const sparse::SparseMatrix s = sparse::sddmm(a, N("m1", c.tensor(d, {r, inner})),
                                                     N("m2", c.tensor(d, {c.bad(5) ? c.small() : inner, k})),
                                                     c.real_arg(), c.real_arg());
        touch(s.values());
      }
    }
  });
  OP("sparse(raw)", {
    const std::int64_t rows = N("rows", c.size_arg()), cols = N("cols", c.size_arg());
    const std::int64_t nnz = c.small();
    const std::int64_t layout = N("layout", c.u(0, 2));
    // Compressed pointers: rows + 1 (CSR) or cols + 1 (CSC) of them, nondecreasing up to nnz
    // in a tame call; COO: nnz row indices.
    const std::int64_t outer = layout == 0 ? rows : cols, inner = layout == 0 ? cols : rows;
    Tensor first;
    if (layout != 2 && c.tame && outer >= 0 && outer <= 64) {
      std::vector<std::int64_t> ptr(static_cast<std::size_t>(outer + 1), 0);
      for (std::size_t i = 1; i < ptr.size(); ++i) ptr[i] = std::min<std::int64_t>(nnz, ptr[i - 1] + c.u(0, 2));
      ptr.back() = nnz;
      first = N("first", from_vector(ptr, {outer + 1}));
    } else {
      first = N("first", c.index_tensor({c.one_in(2) || outer < 0 || outer > 64 ? nnz : outer + 1},
                                        layout == 2 ? std::max<std::int64_t>(rows, 1) : 4));
    }
    const Tensor second = N("second", c.index_tensor({nnz}, layout == 2 ? std::max<std::int64_t>(cols, 1)
                                                                         : std::max<std::int64_t>(inner, 1)));
    const Tensor values = N("values", c.tensor(c.float_dtype(), {c.bad(6) ? c.small() : nnz}));
    sparse::SparseMatrix a;
    switch (layout) {
      case 0: a = sparse::csr(first, second, values, rows, cols); break;
      case 1: a = sparse::csc(first, second, values, rows, cols); break;
      default: a = sparse::coo(first, second, values, rows, cols);
    }
    std::int64_t cells = 0;
    if (!__builtin_mul_overflow(a.rows(), a.cols(), &cells) && cells <= kMaxElements) touch(sparse::to_dense(a));
    if (a.cols() <= 64 && c.one_in(2)) touch(sparse::spmv(a, N("x", c.tensor(a.dtype(), {a.cols()}))));
  });
  OP("sparse24", {
    const DType d = c.bad(4) ? c.any_dtype() : c.pick<DType>({DType::F16, DType::BF16, DType::F32});
    // cuSPARSELt's rule: rows and cols multiples of 32 bytes (16 F16/BF16 elements, 8 F32).
    const std::int64_t q = is_valid_dtype(d) && dtype_size(d) > 0 ? 32 / static_cast<std::int64_t>(dtype_size(d)) : 8;
    const std::int64_t rows = q * (c.small() % 3) + (c.bad(4) ? c.small() : 0), cols = q * (c.small() % 3 + 1);
    const Tensor x = N("x", c.tensor(d, c.bad(6) ? c.shape() : Shape{rows, cols}));
    const Tensor p = sparse::prune_24(x);
    touch(p);
    const sparse::Sparse24Matrix m = sparse::compress_24(c.bad(6) ? x : p);
    touch(sparse::decompress_24(m));
    const std::int64_t dense = q / 2 * (c.small() % 3) + (c.bad(4) ? c.small() : 0);  // 16 bytes
    if (c.one_in(2)) touch(sparse::matmul_24(m, N("b", c.tensor(d, {c.bad(4) ? c.small() : m.cols(), dense}))));
    else touch(sparse::linear_24(N("x2", c.tensor(d, {dense, c.bad(4) ? c.small() : m.cols()})), m));
  });

  // ---- random ----
  OP("random", {
    Shape s = c.shape();
    if (c.bad(6)) s.push_back(c.absurd());
    N("shape", s);
    const DType d = N("dtype", c.any_dtype());
    random::Generator gen(c.u(0, 99));
    random::Generator* g = c.one_in(2) ? &gen : nullptr;
    switch (c.u(0, 6)) {
      case 0: touch(random::rand(s, d, Device::cpu(), g)); break;
      case 1: touch(random::randn(s, d, Device::cpu(), g)); break;
      case 2: touch(random::randint(N("low", c.bad(5) ? c.absurd() : c.u(-3, 3)),
                                    N("high", c.bad(5) ? c.absurd() : c.u(-3, 5)), s, d, Device::cpu(), g));
              break;
      case 3: touch(random::bernoulli(s, N("p", c.prob_arg()), d, Device::cpu(), g)); break;
      case 4: touch(random::bernoulli(N("probs", c.any_tensor()), g)); break;
      case 5: {
        const Tensor x = N("x", c.any_tensor());
        random::normal_(x, N("mean", c.real_arg()), N("std", c.real_arg()), g);
        touch(x);
        break;
      }
      default: {
        const Tensor x = N("x", c.any_tensor());
        random::uniform_(x, N("from", c.real_arg()), N("to", c.real_arg()), g);
        touch(x);
      }
    }
  });
  OP("accessors", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t d = N("d", c.dim_arg(x.defined() ? x.dim() : 1));
    switch (c.u(0, 7)) {
      case 0: (void)x.size(d); break;
      case 1: (void)x.stride(d); break;
      case 2: (void)x.item<double>(); break;
      case 3: (void)x.item<std::int64_t>(); break;
      case 4: (void)x.to_vector<std::complex<float>>(); break;
      case 5: (void)x.to_vector<bool>(); break;
      case 6: (void)x.to_vector<Half>(); break;
      default: (void)x.data_ptr();
    }
  });
  OP("buffer", {
    const DType d = N("dtype", c.any_dtype());
    const auto bytes = static_cast<std::size_t>(N("bytes", c.u(0, 64)));
    auto storage = backend(Device::cpu()).allocate(bytes, Device::cpu());
    const std::int64_t numel = N("numel", c.bad(4) ? c.absurd() : c.u(0, 16));
    const Shape s = N("shape", c.one_in(2) ? Shape{numel} : c.shape(0, 2));
    touch(Tensor(Buffer(storage, d, numel), s));
  });
  OP("print", {
    const Tensor x = N("x", c.any_tensor());
    std::ostringstream s;
    s << x;
    (void)x.description();
  });
  return ops;
}

#undef OP
#undef N

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
