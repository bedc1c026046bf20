// cumsum, cumprod (every real numeric dtype; integers give I64) and logcumsumexp (floats).
#include <cmath>

#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reducers.cuh"
#include "cuda/reduction/reduction_kernels.cuh"
#include "cuda/reduction/scan_engine.cuh"

namespace ferrite::cuda::reduction {
namespace {

template <class T, bool kProduct>
struct ArithmeticScan {
  using acc_t = reduction::acc_t<T>;
  using out_t = sum_out_t<T>;
  __device__ acc_t identity() const { return acc_t(kProduct ? 1 : 0); }
  __device__ acc_t make(T v, std::int64_t) const { return static_cast<acc_t>(detail::widen(v)); }
  __device__ acc_t operator()(acc_t a, acc_t b) const { return kProduct ? detail::MulFn{}(a, b) : detail::AddFn{}(a, b); }
  __device__ out_t value(acc_t a) const {
    if constexpr (std::is_integral_v<acc_t>)
      return a;
    else
      return detail::narrow<T>(a);
  }
  __device__ void store(out_t* out, std::int64_t*, std::int64_t at, acc_t a) const { out[at] = value(a); }
};

/// log(exp(a) + exp(b)) with the larger term factored out: no overflow for large inputs.
template <class T>
struct LogAddExpScan {
  using acc_t = reduction::acc_t<T>;
  using out_t = T;
  __device__ acc_t identity() const { return -std::numeric_limits<acc_t>::infinity(); }
  __device__ acc_t make(T v, std::int64_t) const { return static_cast<acc_t>(detail::widen(v)); }
  __device__ acc_t operator()(acc_t a, acc_t b) const {
    if (a != a || b != b) return a + b;  // NaN
    const acc_t hi = a > b ? a : b, lo = a > b ? b : a;
    if (hi == -std::numeric_limits<acc_t>::infinity() || hi == std::numeric_limits<acc_t>::infinity()) return hi;
    return hi + log1p(exp(lo - hi));
  }
  __device__ out_t value(acc_t a) const { return detail::narrow<T>(a); }
  __device__ void store(out_t* out, std::int64_t*, std::int64_t at, acc_t a) const { out[at] = value(a); }
};

}  // namespace

void scan_arithmetic(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e, cudaStream_t stream) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T> || std::is_same_v<T, bool>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cuda");
    } else {
      const T* in = x.data_as<const T>();
      switch (op) {
        case Op::Cumsum:
          return launch_scan(in, out.data_as<sum_out_t<T>>(), nullptr, ArithmeticScan<T, false>{}, e, stream);
        case Op::Cumprod:
          return launch_scan(in, out.data_as<sum_out_t<T>>(), nullptr, ArithmeticScan<T, true>{}, e, stream);
        case Op::Logcumsumexp:
          if constexpr (std::is_floating_point_v<acc_t<T>>)
            return launch_scan(in, out.data_as<T>(), nullptr, LogAddExpScan<T>{}, e, stream);
          [[fallthrough]];
        default:
          FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cuda");
      }
    }
  });
}

}  // namespace ferrite::cuda::reduction
