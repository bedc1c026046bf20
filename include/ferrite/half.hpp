// Host-side 16-bit float types and the bit-level conversions shared with device code.
//
// The conversions are plain integer code marked FERRITE_HOST_DEVICE so the CPU backend
// and the CUDA kernels round identically (bit-exact casts on both backends). Every
// narrowing conversion rounds to nearest, ties to even. Doubles are narrowed through a
// round-to-odd float: rounding to odd first and to nearest-even second gives the same
// result as one direct rounding, because float keeps more than twice the bits of
// half/bfloat16 plus two.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define FERRITE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FERRITE_HOST_DEVICE inline
#endif

namespace ferrite {
namespace bits {

FERRITE_HOST_DEVICE std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
FERRITE_HOST_DEVICE float float_from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// IEEE binary16 bits of `f`, round to nearest even; NaN becomes the canonical quiet NaN.
FERRITE_HOST_DEVICE std::uint16_t float_to_half(float f) {
  const std::uint32_t x = float_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t mag = x & 0x7FFFFFFFu;
  if (mag >= 0x7F800000u) return static_cast<std::uint16_t>(sign | (mag > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (mag >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to Inf
  if (mag < 0x38800000u) {                                                     // below 2^-14: subnormal half
    if (mag < 0x33000000u) return static_cast<std::uint16_t>(sign);              // <= 2^-25 rounds to zero
    const std::uint32_t exponent = mag >> 23;
    const std::uint32_t mantissa = (mag & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - exponent;  // 14..24
    std::uint32_t result = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (result & 1u))) ++result;
    return static_cast<std::uint16_t>(sign | result);
  }
  std::uint32_t result = (mag - 0x38000000u) >> 13;  // rebias exponent 127 -> 15
  const std::uint32_t rest = mag & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;
  return static_cast<std::uint16_t>(sign | result);
}

FERRITE_HOST_DEVICE float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // 2^-24, exact
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return float_from_bits(sign | 0x7F800000u | (mantissa << 13));
  return float_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// bfloat16 bits of `f`, round to nearest even; NaN becomes the canonical quiet NaN.
FERRITE_HOST_DEVICE std::uint16_t float_to_bfloat16(float f) {
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>(((x >> 16) & 0x8000u) | 0x7FC0u);
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

FERRITE_HOST_DEVICE float bfloat16_to_float(std::uint16_t b) {
  return float_from_bits(static_cast<std::uint32_t>(b) << 16);
}

/// `d` rounded to float with round-to-odd (truncate, then set the last bit if inexact).
FERRITE_HOST_DEVICE float double_to_float_round_odd(double d) {
  float f = static_cast<float>(d);
  if (d != d) return f;
  std::uint32_t u = float_bits(f);
  const double back = static_cast<double>(f);
  if ((back > d && d >= 0) || (back < d && d <= 0)) --u;  // rounded away from zero: step back
  if (static_cast<double>(float_from_bits(u)) != d) u |= 1u;
  return float_from_bits(u);
}

}  // namespace bits

/// IEEE binary16. Stored as its bit pattern; arithmetic goes through float.
struct Half {
  std::uint16_t bits = 0;

  Half() = default;
  explicit Half(float f) : bits(bits::float_to_half(f)) {}
  explicit Half(double d) : bits(bits::float_to_half(bits::double_to_float_round_odd(d))) {}
  operator float() const { return bits::half_to_float(bits); }
  static Half from_bits(std::uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
};

/// bfloat16 (8-bit exponent, 7-bit mantissa). Stored as its bit pattern.
struct BFloat16 {
  std::uint16_t bits = 0;

  BFloat16() = default;
  explicit BFloat16(float f) : bits(bits::float_to_bfloat16(f)) {}
  explicit BFloat16(double d) : bits(bits::float_to_bfloat16(bits::double_to_float_round_odd(d))) {}
  operator float() const { return bits::bfloat16_to_float(bits); }
  static BFloat16 from_bits(std::uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

}  // namespace ferrite
