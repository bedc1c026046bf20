// Element types and conversion rules shared by the CPU backend and the CUDA kernels.
//
// Every element is widened to its "wide" type before an op touches it (Half and BFloat16
// to float, I32 to I64, complex to a plain re/im pair) and narrowed once on store. The CPU
// and the GPU run this same code, so casts agree bit for bit on both backends.
//
// Conversion rules (also in docs/architecture.md):
//   float -> integer: truncate toward zero; NaN -> 0; +-Inf and out-of-range saturate to
//                     the integer's max/min.
//   integer -> narrower integer: two's-complement wrap (keep the low bits).
//   anything -> Bool: x != 0 (NaN -> true; a complex is true when either part is nonzero).
//   complex -> real: the real part. real -> complex: (x, 0).
//   -> F16/BF16: round to nearest even (doubles and int64 through a round-to-odd float).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "ferrite/dtype.hpp"
#include "ferrite/half.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace ferrite::detail {

/// Interleaved complex number, layout-compatible with std::complex<T>.
template <class T>
struct alignas(2 * sizeof(T)) Complex {
  T re, im;
};

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<Complex<T>> = true;

/// The type each dtype is stored as in memory, on both backends.
template <DType D> struct StorageOf;
template <> struct StorageOf<DType::F32> { using type = float; };
template <> struct StorageOf<DType::F64> { using type = double; };
template <> struct StorageOf<DType::F16> { using type = Half; };
template <> struct StorageOf<DType::BF16> { using type = BFloat16; };
template <> struct StorageOf<DType::I32> { using type = std::int32_t; };
template <> struct StorageOf<DType::I64> { using type = std::int64_t; };
template <> struct StorageOf<DType::Bool> { using type = bool; };
template <> struct StorageOf<DType::C64> { using type = Complex<float>; };
template <> struct StorageOf<DType::C128> { using type = Complex<double>; };
template <DType D>
using storage_t = typename StorageOf<D>::type;

/// The type ops compute in.
template <class T> struct WideOf { using type = T; };
template <> struct WideOf<Half> { using type = float; };
template <> struct WideOf<BFloat16> { using type = float; };
template <> struct WideOf<std::int32_t> { using type = std::int64_t; };
template <class T>
using wide_t = typename WideOf<T>::type;

// ---- widening (exact) ----

template <class T>
FERRITE_HOST_DEVICE wide_t<T> widen(T x) {
  return x;
}
template <>
FERRITE_HOST_DEVICE float widen<Half>(Half x) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(x.bits));
#else
  return bits::half_to_float(x.bits);
#endif
}
template <>
FERRITE_HOST_DEVICE float widen<BFloat16>(BFloat16 x) {
  return bits::bfloat16_to_float(x.bits);
}

// ---- narrowing (the rounding rules above) ----

FERRITE_HOST_DEVICE Half half_from_bits(std::uint16_t b) {
  Half h;
  h.bits = b;
  return h;
}
FERRITE_HOST_DEVICE BFloat16 bfloat16_from_bits(std::uint16_t b) {
  BFloat16 h;
  h.bits = b;
  return h;
}

FERRITE_HOST_DEVICE std::uint16_t float_to_half_bits(float f) {
#if defined(__CUDA_ARCH__)
  // The hardware conversion rounds to nearest even too; only NaNs could differ: they become
  // the CPU's signed quiet NaN through a select (no branch into the software path).
  const std::uint16_t nan = static_cast<std::uint16_t>(((__float_as_uint(f) >> 16) & 0x8000u) | 0x7E00u);
  const std::uint16_t rounded = __half_as_ushort(__float2half_rn(f));
  return f != f ? nan : rounded;
#else
  return bits::float_to_half(f);
#endif
}

/// Float to integer: truncate; NaN -> 0; saturate outside the integer's range.
template <class I, class F>
FERRITE_HOST_DEVICE I saturating_truncate(F f) {
  constexpr F upper = static_cast<F>(std::numeric_limits<I>::max()) + F(1);  // 2^31 or 2^63, exact
  constexpr F lower = -upper;
  if (f != f) return I(0);
  if (f >= upper) return std::numeric_limits<I>::max();
  if (f <= lower) return std::numeric_limits<I>::min();
  return static_cast<I>(f);
}

FERRITE_HOST_DEVICE std::uint16_t float_to_bfloat16_bits(float f) {
#if defined(__CUDA_ARCH__)
  // One cvt instruction instead of the integer rounding sequence: BF16 ops with real math
  // (exp, sigmoid) are bound by instruction count, not memory, without it. Same rounding
  // (nearest even); a NaN becomes the CPU's signed quiet NaN through a select, not a branch
  // into the software path (the row-wise BF16 kernels are bound by instruction issue).
  const std::uint16_t nan = static_cast<std::uint16_t>(((__float_as_uint(f) >> 16) & 0x8000u) | 0x7FC0u);
  const std::uint16_t rounded = __bfloat16_as_ushort(__float2bfloat16_rn(f));
  return f != f ? nan : rounded;
#else
  return bits::float_to_bfloat16(f);
#endif
}

template <class To, class W>
FERRITE_HOST_DEVICE To narrow(W w) {
  if constexpr (is_complex_v<W>) {
    if constexpr (is_complex_v<To>) {
      using C = decltype(To::re);
      return To{static_cast<C>(w.re), static_cast<C>(w.im)};
    } else if constexpr (std::is_same_v<To, bool>) {
      return w.re != 0 || w.im != 0;
    } else {
      return narrow<To>(w.re);
    }
  } else if constexpr (is_complex_v<To>) {
    using C = decltype(To::re);
    return To{narrow<C>(w), C(0)};
  } else if constexpr (std::is_same_v<To, bool>) {
    return w != W(0);
  } else if constexpr (std::is_same_v<To, Half>) {
    if constexpr (std::is_same_v<W, double> || std::is_same_v<W, std::int64_t>)
      return half_from_bits(bits::float_to_half(bits::double_to_float_round_odd(static_cast<double>(w))));
    else
      return half_from_bits(float_to_half_bits(static_cast<float>(w)));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<W, double> || std::is_same_v<W, std::int64_t>)
      return bfloat16_from_bits(bits::float_to_bfloat16(bits::double_to_float_round_odd(static_cast<double>(w))));
    else
      return bfloat16_from_bits(float_to_bfloat16_bits(static_cast<float>(w)));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<W>) {
    return saturating_truncate<To>(w);
  } else {
    return static_cast<To>(w);  // integer wrap (C++20 defines it), int -> float round to nearest
  }
}

template <class To, class From>
FERRITE_HOST_DEVICE To convert(From x) {
  return narrow<To>(widen(x));
}

}  // namespace ferrite::detail
