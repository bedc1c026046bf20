// The reducers run by reduce_engine.cuh: what one element adds to an accumulator, how two
// accumulators merge and what the result is. Include only from .cu files.
#pragma once

#include "core/elementwise_functors.hpp"
#include "cuda/reduction/reduce_common.cuh"

namespace ferrite::cuda::reduction {

/// Integer and Bool sums and products give I64 (as PyTorch); floats keep their dtype. AddFn
/// and MulFn wrap integers like two's-complement int64 arithmetic, without UB.
template <class T>
using sum_out_t = std::conditional_t<std::is_integral_v<acc_t<T>>, std::int64_t, T>;

/// O: the result type (an F32 result of F16/BF16 input: float).
template <class T, class O = sum_out_t<T>>
struct SumReducer {
  using acc_t = reduction::acc_t<T>;
  using out_t = O;
  bool mean = false;
  __device__ acc_t identity() const { return acc_t(0); }
  __device__ __forceinline__ acc_t step(acc_t a, T v, std::int64_t) const {
    return detail::AddFn{}(a, static_cast<acc_t>(detail::widen(v)));
  }
  __device__ __forceinline__ acc_t merge(acc_t a, acc_t b) const { return detail::AddFn{}(a, b); }
  __device__ out_t finish(acc_t a, std::int64_t dim) const {
    if constexpr (std::is_integral_v<acc_t>) {
      return a;
    } else {
      if (mean) a = a / static_cast<acc_t>(dim);  // 0 / 0 = NaN for an empty dim, as PyTorch
      return detail::narrow<O>(a);
    }
  }
};

template <class T>
struct ProdReducer {
  using acc_t = reduction::acc_t<T>;
  using out_t = sum_out_t<T>;
  __device__ acc_t identity() const { return acc_t(1); }
  __device__ __forceinline__ acc_t step(acc_t a, T v, std::int64_t) const {
    return detail::MulFn{}(a, static_cast<acc_t>(detail::widen(v)));
  }
  __device__ __forceinline__ acc_t merge(acc_t a, acc_t b) const { return detail::MulFn{}(a, b); }
  __device__ out_t finish(acc_t a, std::int64_t) const {
    if constexpr (std::is_integral_v<acc_t>)
      return a;
    else
      return detail::narrow<T>(a);
  }
};

/// amax (max = true) or amin; a NaN wins and stays.
template <class T>
struct ExtremeReducer {
  using acc_t = reduction::acc_t<T>;
  using out_t = T;
  bool max = true;
  acc_t empty;  // the identity: -Inf / +Inf, or the integer dtype's limits
  __device__ acc_t identity() const { return empty; }
  __device__ __forceinline__ acc_t merge(acc_t a, acc_t b) const {
    return (a != a || (max ? a > b : a < b) || (a == b)) ? a : b;
  }
  // One compare fewer than merge: equal values keep `a` either way, and a NaN in `a` stays
  // because no comparison with it is true.
  __device__ __forceinline__ acc_t step(acc_t a, T v, std::int64_t) const {
    const acc_t x = static_cast<acc_t>(detail::widen(v));
    return (x != x || (max ? x > a : x < a)) ? x : a;
  }
  __device__ out_t finish(acc_t a, std::int64_t) const { return detail::narrow<T>(a); }
};

/// The identity of amax / amin for T, as its accumulator.
template <class T>
acc_t<T> extreme_identity(bool max) {
  if constexpr (std::is_floating_point_v<acc_t<T>>)
    return max ? -std::numeric_limits<acc_t<T>>::infinity() : std::numeric_limits<acc_t<T>>::infinity();
  else
    return max ? static_cast<acc_t<T>>(std::numeric_limits<T>::lowest()) : static_cast<acc_t<T>>(std::numeric_limits<T>::max());
}

struct AnyAllReducer {
  using acc_t = std::int32_t;
  using out_t = bool;
  bool any = true;
  __device__ acc_t identity() const { return any ? 0 : 1; }
  __device__ __forceinline__ acc_t merge(acc_t a, acc_t b) const { return any ? (a | b) : (a & b); }
  __device__ __forceinline__ acc_t step(acc_t a, bool v, std::int64_t) const { return merge(a, v ? 1 : 0); }
  __device__ out_t finish(acc_t a, std::int64_t) const { return a != 0; }
};

/// argmax (max = true) or argmin: the value and the index along the dim. The first
/// occurrence wins ties and the first NaN wins everything, whatever the merge order.
template <class T>
struct ArgReducer {
  struct acc_t {
    reduction::acc_t<T> value;
    std::int64_t index;
  };
  using out_t = std::int64_t;
  bool max = true;
  reduction::acc_t<T> empty;
  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();  // the identity's index
  __device__ acc_t identity() const { return {empty, kNone}; }
  __device__ __forceinline__ acc_t merge(acc_t a, acc_t b) const {
    const bool a_nan = a.value != a.value, b_nan = b.value != b.value;
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return a.index < b.index ? a : b;
      return a_nan ? a : b;
    }
    if (a.value == b.value) return a.index < b.index ? a : b;
    return (max ? a.value > b.value : a.value < b.value) ? a : b;
  }
  // The engines step each thread through its elements in increasing index order, so a later
  // element only wins when it is strictly better, or is the first NaN (a held NaN stays).
  __device__ __forceinline__ acc_t step(acc_t a, T v, std::int64_t j) const {
    const auto x = static_cast<reduction::acc_t<T>>(detail::widen(v));
    const bool take = a.index == kNone || (a.value == a.value && (x != x || (max ? x > a.value : x < a.value)));
    return take ? acc_t{x, j} : a;
  }
  __device__ out_t finish(acc_t a, std::int64_t) const { return a.index; }
};

}  // namespace ferrite::cuda::reduction
