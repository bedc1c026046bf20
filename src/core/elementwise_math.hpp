// The math functions the elementwise functors call, for float and double, on the host and
// on the GPU. Device code calls CUDA's own functions (expf, erfcf, ...: a few ulp, IEEE
// specials kept); host code calls <cmath>. Results may differ in the last bits between
// the backends, which the conformance tolerances (design §7) allow; the rules for NaN,
// Inf and signed zeros are the same on both.
#pragma once

#include <cmath>
#include <type_traits>

#include "ferrite/half.hpp"

namespace ferrite::detail::math {

#if defined(__CUDA_ARCH__)
#define FERRITE_MATH_UNARY(name, float_fn, double_fn)                       \
  FERRITE_HOST_DEVICE float name(float x) { return ::float_fn(x); }         \
  FERRITE_HOST_DEVICE double name(double x) { return ::double_fn(x); }
#define FERRITE_MATH_BINARY(name, float_fn, double_fn)                              \
  FERRITE_HOST_DEVICE float name(float x, float y) { return ::float_fn(x, y); }     \
  FERRITE_HOST_DEVICE double name(double x, double y) { return ::double_fn(x, y); }
#else
#define FERRITE_MATH_UNARY(name, float_fn, double_fn)                         \
  FERRITE_HOST_DEVICE float name(float x) { return std::double_fn(x); }       \
  FERRITE_HOST_DEVICE double name(double x) { return std::double_fn(x); }
#define FERRITE_MATH_BINARY(name, float_fn, double_fn)                                    \
  FERRITE_HOST_DEVICE float name(float x, float y) { return std::double_fn(x, y); }       \
  FERRITE_HOST_DEVICE double name(double x, double y) { return std::double_fn(x, y); }
#endif

FERRITE_MATH_UNARY(fabs, fabsf, fabs)
FERRITE_MATH_UNARY(exp, expf, exp)
FERRITE_MATH_UNARY(expm1, expm1f, expm1)
FERRITE_MATH_UNARY(log, logf, log)
FERRITE_MATH_UNARY(log1p, log1pf, log1p)
FERRITE_MATH_UNARY(sqrt, sqrtf, sqrt)
FERRITE_MATH_UNARY(tanh, tanhf, tanh)
FERRITE_MATH_UNARY(erf, erff, erf)
FERRITE_MATH_UNARY(erfc, erfcf, erfc)
FERRITE_MATH_BINARY(pow, powf, pow)

#undef FERRITE_MATH_UNARY
#undef FERRITE_MATH_BINARY

template <class W>
FERRITE_HOST_DEVICE bool isnan(W x) {
  return x != x;
}

}  // namespace ferrite::detail::math
