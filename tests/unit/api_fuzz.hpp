// The API fuzz's shared pieces (api_fuzz_runner.cpp runs them, for the CPU test in
// tests/unit/api_fuzz_test.cpp and the CUDA one in tests/cuda/api_fuzz_cuda_test.cpp): the
// random choices and argument record of one call (Ctx), how results are read back (touch),
// and the op families, registered by api_fuzz_tensor_ops.cpp (elementwise, factories,
// reductions, shape and index ops) and api_fuzz_nn_ops.cpp (matmul, nn, training, linalg,
// FFT, sparse, random, accessors). The registration order is the table's order, so a
// (seed, call) pair keeps naming the same call.
//
// The device: every tensor a call builds lands on Ctx::device, through the few creation
// points below (make, dense, integers, index_tensor, tensor_of, factory_device, generator);
// the op families never name a device themselves. Off the CPU, now and then one argument is
// left on the host (stray(): a deliberate fault, which the library must refuse with a
// DeviceMismatch naming both devices). Those extra draws happen only off the CPU, so a CPU
// run draws exactly what it drew before the fuzz knew about devices: a (seed, call) pair names
// the same call with the same arguments there. A CUDA run's calls differ from the CPU run's
// of the same seed and index (the extra draws shift what follows them).
#pragma once

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <complex>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ferrite/ferrite.hpp"

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer a failed operator new aborts (it cannot throw std::bad_alloc), so the
// absurd sizes only a failed allocation would refuse (2^40) are left out (api_fuzz_test.cpp).
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

namespace ferrite::api_fuzz {

inline constexpr std::int64_t kMaxElements = 4096;
inline constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();

inline std::string tensor_str(const Tensor& t) {
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
  Device device = Device::cpu();  // where the call's tensors live
  int strays = 0;  // arguments this call put off its device (stray(), factory_device(); never on the CPU)

  explicit Ctx(std::uint64_t seed, Device target = Device::cpu()) : rng(seed), device(target) {}

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

  // ---- devices ----
  // Where the tensor being built goes: the call's device, or the host while a stray argument
  // is built (see stray()).
  Device place() const { return on_host_ ? Device::cpu() : device; }
  // A tensor built on the host (values, casts), moved to place(). The casts stay on the host
  // so that a GPU run's inputs hold the same values as a CPU run would build from the same
  // draws, and a cast the device refuses never turns into a refusal blamed on the op.
  Tensor placed(Tensor host) const { return place().is_cpu() ? host : host.to(place()); }
  template <class T>
  Tensor tensor_of(const std::vector<T>& values, Shape s) { return placed(from_vector(values, std::move(s))); }
  // Off the CPU, now and then (a deliberate fault) one argument stays on the host: a CPU
  // tensor mixed into a CUDA call. Never drawn on the CPU (see the top of the file).
  bool stray() { return !device.is_cpu() && bad(30); }
  // The device a factory is asked for: the call's, or (off the CPU, a deliberate fault) one
  // that does not exist: an index past the last GPU, a negative one, a kind outside the enum.
  Device factory_device() {
    if (device.is_cpu() || !bad(40)) return device;
    const Device d = pick<Device>({Device::cuda(cuda_device_count()), Device::cuda(-1),
                                   Device{static_cast<DeviceKind>(7), 0}});
    if (verbose) std::fprintf(stderr, "  device=%s\n", d.str().c_str());
    args << "device=" << d.str() << " ";
    ++strays;
    return d;
  }
  // A generator for the call's device, or (a stray) one of the host's.
  random::Generator generator(std::uint64_t seed) {
    if (!stray()) return random::Generator(seed, device);
    ++strays;
    if (verbose) std::fprintf(stderr, "  generator=cpu\n");
    args << "generator=cpu ";
    return random::Generator(seed, Device::cpu());
  }

  template <class T>
  T note(const char* name, T value) {
    std::ostringstream s;
    if constexpr (std::is_same_v<T, Tensor>) {
      s << tensor_str(value);
      if (value.defined() && !device.is_cpu()) s << " " << value.device().str();
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
    return tensor_of(v, s);
  }
  Tensor dense(DType dtype, const Shape& s) {
    const std::int64_t n = shape_numel(s);
    if (dtype == DType::I32) return integers<std::int32_t>(n, s);
    if (dtype == DType::I64) return integers<std::int64_t>(n, s);
    Tensor t = from_vector(values(n, dtype), s);
    return placed(dtype == DType::F64 ? t : t.to(dtype));
  }
  // A tensor of dtype and shape, sometimes a non-contiguous or offset view of a larger one.
  Tensor make(DType dtype, Shape s) {
    if (!is_valid_dtype(dtype)) dtype = DType::F32;
    const std::int64_t n = shape_numel(s);  // an Error for an overflowing shape: the call is refused
    // A shape derived from an empty one with a 2^40 dim may hold 2^40 elements: the library
    // must refuse to allocate it (an Error, never a std exception).
    if (n > kMaxElements) return zeros(s, dtype, place());
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
    if (stray()) return on_host([&] { return make(dtype, std::move(s)); });
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
    if (stray()) return on_host([&] { return indices(s, bound, d); });
    return indices(s, bound, d);
  }

 private:
  bool on_host_ = false;
  // index_tensor's values: mostly in [0, bound), sometimes just outside or absurd.
  Tensor indices(const Shape& s, std::int64_t bound, DType d) {
    if (shape_numel(s) > kMaxElements) return zeros(s, d, place());  // refused by the library, see make()
    std::vector<double> v(static_cast<std::size_t>(shape_numel(s)));
    for (auto& x : v) x = static_cast<double>(bad(10) ? pick<std::int64_t>({-1, bound, -bound - 1, 1 << 30}) :
                                              u(0, std::max<std::int64_t>(bound - 1, 0)));
    if (bad(60)) return Tensor();
    return placed(from_vector(v, s).to(d));
  }
  // Builds a stray argument: everything `build` creates lands on the host.
  template <class F>
  Tensor on_host(F&& build) {
    struct Restore {
      bool& flag;
      ~Restore() { flag = false; }
    } restore{on_host_};
    on_host_ = true;
    Tensor t = build();
    if (t.defined()) ++strays;
    return t;
  }
};

// Reads every element of a result (a sanitizer checks the reads), unless it is too large to
// touch (a legal view with a huge dim).
inline void touch(const Tensor& t) {
  if (t.defined() && t.numel() <= (1 << 16)) (void)t.to_bytes();
}
inline void touch(const std::pair<Tensor, Tensor>& p) {
  touch(p.first);
  touch(p.second);
}
inline void touch(const std::vector<Tensor>& v) {
  for (const auto& t : v) touch(t);
}

using OpFn = std::function<void(Ctx&)>;
struct FuzzOp {
  const char* name;
  OpFn fn;
};

// The op families, appended in this order (make_ops in api_fuzz_test.cpp).
void add_tensor_ops(std::vector<FuzzOp>& ops);
void add_nn_ops(std::vector<FuzzOp>& ops);

}  // namespace ferrite::api_fuzz
