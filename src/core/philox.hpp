// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) and
// the transforms from its words to values, shared by the CPU backend and the CUDA kernels
// so that both produce the same bits for the same (seed, offset, element index).
//
// Counter layout (docs/families/random.md): key = (seed low, seed high); counter =
// (group low, group high, offset low, offset high). One Philox call gives four 32-bit words
// for one *group* of elements: 4 elements for 32-bit draws (F32/F16/BF16 values, I32
// integers, dropout), 2 elements for 64-bit draws (F64 values, I64 integers). A call of
// the generator takes one offset, so calls never share a counter.
//
// Normals use Box-Muller with log, sin and cos written here from + - * / and sqrt only,
// each rounded once (no fused multiply-add: device code uses the __f*_rn intrinsics, which
// nvcc never contracts, and the host build targets plain x86-64/ARM without contraction
// across these calls). IEEE division and square root are correctly rounded on both, so the
// results agree bit for bit, which libm's and CUDA's transcendental functions do not.
#pragma once

#include <cstdint>

#include "ferrite/half.hpp"

namespace ferrite::detail::philox {

struct Words {
  std::uint32_t w[4];
};

FERRITE_HOST_DEVICE void mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
#if defined(__CUDA_ARCH__)
  // The 64-bit product's form makes ptxas add a zero register to each high word (an extra
  // instruction per multiplication in the Philox rounds); the two halves do not.
  hi = __umulhi(a, b);
  lo = a * b;
#else
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
#endif
}

/// Philox4x32 with 10 rounds, Random123's reference definition (its known-answer vectors
/// are in tests/unit/random_test.cpp).
inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;  // multipliers
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;  // key schedule

/// One Philox4x32 round of the counter (c0..c3) under the round key (k0, k1).
FERRITE_HOST_DEVICE void philox_round(std::uint32_t& c0, std::uint32_t& c1, std::uint32_t& c2, std::uint32_t& c3,
                                      std::uint32_t k0, std::uint32_t k1) {
  std::uint32_t hi0, lo0, hi1, lo1;
  mulhilo(kPhiloxM0, c0, hi0, lo0);
  mulhilo(kPhiloxM1, c2, hi1, lo1);
  c0 = hi1 ^ c1 ^ k0;  // c1 and c3 are read before they are replaced
  c1 = lo1;
  c2 = hi0 ^ c3 ^ k1;
  c3 = lo0;
}

FERRITE_HOST_DEVICE Words philox4x32_10(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2,
                                                std::uint32_t c3, std::uint32_t k0, std::uint32_t k1) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    philox_round(c0, c1, c2, c3, k0, k1);
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return Words{{c0, c1, c2, c3}};
}

/// The four words of group `group` of the call at (seed, offset).
FERRITE_HOST_DEVICE Words group_words(std::uint64_t seed, std::uint64_t offset, std::uint64_t group) {
  return philox4x32_10(static_cast<std::uint32_t>(group), static_cast<std::uint32_t>(group >> 32),
                       static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(offset >> 32),
                       static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

/// group_words for many groups of one call that share the group's high word (the kernels'
/// hot loops): the first round's product of the counter's third word (the offset's low
/// word) is the same for all of them, so it is made once, and a group costs 19 of the 20
/// multiplications. The same words as group_words (tests/unit/random_test.cpp checks it).
struct PhiloxLanes {
  std::uint32_t k0, k1;  // key (the seed)
  std::uint32_t n0, n1;  // the first round's outputs that do not depend on the group's low word
  std::uint32_t c3k1;    // counter word 3 ^ key word 1, the rest of the first round's word 2

  FERRITE_HOST_DEVICE PhiloxLanes(std::uint64_t seed, std::uint64_t offset, std::uint32_t group_hi)
      : k0(static_cast<std::uint32_t>(seed)), k1(static_cast<std::uint32_t>(seed >> 32)) {
    std::uint32_t hi1, lo1;
    mulhilo(kPhiloxM1, static_cast<std::uint32_t>(offset), hi1, lo1);
    n0 = hi1 ^ group_hi ^ k0;
    n1 = lo1;
    c3k1 = static_cast<std::uint32_t>(offset >> 32) ^ k1;
  }

  FERRITE_HOST_DEVICE Words operator()(std::uint32_t group_lo) const {
    std::uint32_t hi0, lo0;
    mulhilo(kPhiloxM0, group_lo, hi0, lo0);
    std::uint32_t c0 = n0, c1 = n1, c2 = hi0 ^ c3k1, c3 = lo0;
    std::uint32_t a = k0, b = k1;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int round = 1; round < 10; ++round) {
      a += kPhiloxW0;
      b += kPhiloxW1;
      philox_round(c0, c1, c2, c3, a, b);
    }
    return Words{{c0, c1, c2, c3}};
  }
};

// ---- once-rounded arithmetic (never contracted into an fma) ----
FERRITE_HOST_DEVICE float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
FERRITE_HOST_DEVICE double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
FERRITE_HOST_DEVICE float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
FERRITE_HOST_DEVICE double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
FERRITE_HOST_DEVICE float root(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return __builtin_sqrtf(x);
#endif
}
FERRITE_HOST_DEVICE double root(double x) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return __builtin_sqrt(x);
#endif
}
FERRITE_HOST_DEVICE float quot(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
FERRITE_HOST_DEVICE double quot(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

// ---- words to uniforms ----
/// [0, 1) with 24 random bits (exact in float).
FERRITE_HOST_DEVICE float uniform24(std::uint32_t w) { return static_cast<float>(w >> 8) * 0x1p-24f; }
/// (0, 1] with 24 random bits: Box-Muller's log argument, never 0.
FERRITE_HOST_DEVICE float uniform24_open0(std::uint32_t w) {
  return static_cast<float>((w >> 8) + 1u) * 0x1p-24f;
}
FERRITE_HOST_DEVICE std::uint64_t join(std::uint32_t hi, std::uint32_t lo) {
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}
/// [0, 1) with 53 random bits (exact in double).
FERRITE_HOST_DEVICE double uniform53(std::uint32_t hi, std::uint32_t lo) {
  return static_cast<double>(join(hi, lo) >> 11) * 0x1p-53;
}
FERRITE_HOST_DEVICE double uniform53_open0(std::uint32_t hi, std::uint32_t lo) {
  return static_cast<double>((join(hi, lo) >> 11) + 1u) * 0x1p-53;
}

// ---- log and sincos for Box-Muller ----
// Coefficients live in local arrays (device code cannot read a host constexpr array).
// float: log's atanh series to z^5 (|s| <= 0.1716, z = s^2 <= 0.0295), sin to a^11 and cos
// to a^12 on |a| <= pi/4: truncation below 2^-26 relative. double: to z^12, a^21 and a^22:
// below 2^-55.
template <class T, int N>
FERRITE_HOST_DEVICE T horner(const T (&c)[N], T z) {
  T p = c[N - 1];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = N - 2; k >= 0; --k) p = add(mul(p, z), c[k]);
  return p;
}

template <class T>
FERRITE_HOST_DEVICE T log_series(T z) {
  if constexpr (sizeof(T) == 4) {
    const float c[] = {1.f, 1.f / 3, 1.f / 5, 1.f / 7, 1.f / 9, 1.f / 11};
    return horner(c, z);
  } else {
    const double c[] = {1.,      1. / 3,  1. / 5,  1. / 7,  1. / 9,  1. / 11, 1. / 13,
                        1. / 15, 1. / 17, 1. / 19, 1. / 21, 1. / 23, 1. / 25};
    return horner(c, z);
  }
}
template <class T>
FERRITE_HOST_DEVICE T sin_series(T z) {
  if constexpr (sizeof(T) == 4) {
    const float c[] = {1.f, -1.f / 6, 1.f / 120, -1.f / 5040, 1.f / 362880, -1.f / 39916800};
    return horner(c, z);
  } else {
    const double c[] = {1.,          -1. / 6,       1. / 120,           -1. / 5040,
                        1. / 362880, -1. / 39916800, 1. / 6227020800.,  -1. / 1307674368000.,
                        1. / 355687428096000., -1. / 121645100408832000., 1. / 51090942171709440000.};
    return horner(c, z);
  }
}
template <class T>
FERRITE_HOST_DEVICE T cos_series(T z) {
  if constexpr (sizeof(T) == 4) {
    const float c[] = {1.f, -1.f / 2, 1.f / 24, -1.f / 720, 1.f / 40320, -1.f / 3628800, 1.f / 479001600};
    return horner(c, z);
  } else {
    const double c[] = {1.,  -1. / 2,  1. / 24,  -1. / 720,  1. / 40320,  -1. / 3628800,  1. / 479001600.,
                        -1. / 87178291200., 1. / 20922789888000., -1. / 6402373705728000.,
                        1. / 2432902008176640000., -1. / 1124000727777607680000.};
    return horner(c, z);
  }
}

/// log of m * 2^e for m in [sqrt(2)/2, sqrt(2)] (log_positive's split).
template <class T>
FERRITE_HOST_DEVICE T log_split(T m, int e) {
  // log m = 2 atanh(s), s = (m - 1) / (m + 1); m - 1 is exact (Sterbenz).
  const T s = quot(add(m, T(-1)), add(m, T(1)));
  const T z = mul(s, s);
  const T log_m = mul(mul(T(2), s), log_series(z));
  const T fe = static_cast<T>(e);
  // ln 2 split so that e * hi is exact (|e| < 2^11 needs hi to have at most 13 bits).
  const T ln2_hi = sizeof(T) == 4 ? T(0.693145751953125) : T(0.693147180369123816490);
  const T ln2_lo = sizeof(T) == 4 ? T(1.428606765330187e-06) : T(1.90821492927058770002e-10);
  return add(mul(fe, ln2_hi), add(mul(fe, ln2_lo), log_m));
}

/// Natural log of a positive normal x (Box-Muller passes (0, 1]).
template <class T>
FERRITE_HOST_DEVICE T log_positive(T x) {
  int e;
  T m;
  if constexpr (sizeof(T) == 4) {
    std::uint32_t b;
    __builtin_memcpy(&b, &x, 4);
    e = static_cast<int>((b >> 23) & 0xFFu) - 127;
    b = (b & 0x007FFFFFu) | 0x3F800000u;  // mantissa in [1, 2)
    if (b > 0x3FB504F3u) {                 // above sqrt(2): halve it (exact)
      b -= 0x00800000u;
      ++e;
    }
    __builtin_memcpy(&m, &b, 4);
  } else {
    std::uint64_t b;
    __builtin_memcpy(&b, &x, 8);
    e = static_cast<int>((b >> 52) & 0x7FFu) - 1023;
    b = (b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
    if (b > 0x3FF6A09E667F3BCCull) {
      b -= 0x0010000000000000ull;
      ++e;
    }
    __builtin_memcpy(&m, &b, 8);
  }
  return log_split(m, e);
}

/// log_positive(uniform24_open0(w)) without the scaling: x = j 2^-24 with j = (w >> 8) + 1
/// in [1, 2^24] has float(j)'s mantissa and its exponent less 24, so the split is taken
/// from float(j) (exact) and the log is the same to the bit.
FERRITE_HOST_DEVICE float log_open0_word(std::uint32_t w) {
  const float j = static_cast<float>((w >> 8) + 1u);
  std::uint32_t b;
  __builtin_memcpy(&b, &j, 4);
  int e = static_cast<int>(b >> 23) - (127 + 24);  // j >= 1: sign 0, exponent field only
  b = (b & 0x007FFFFFu) | 0x3F800000u;
  if (b > 0x3FB504F3u) {
    b -= 0x00800000u;
    ++e;
  }
  float m;
  __builtin_memcpy(&m, &b, 4);
  return log_split(m, e);
}

/// sin and cos of 2*pi*u for u in [0, 1) with few enough bits that 4u - round(4u) is exact.
template <class T>
FERRITE_HOST_DEVICE void sincos_turns(T u, T& s, T& c) {
  const T t = mul(u, T(4));
  const int q = static_cast<int>(add(t, T(0.5)));  // round half up; t >= 0
  const T a = mul(add(t, static_cast<T>(-q)), T(1.57079632679489661923));
  const T a2 = mul(a, a);
  const T sa = mul(a, sin_series(a2));
  const T ca = cos_series(a2);
  switch (q & 3) {
    case 0: s = sa; c = ca; break;
    case 1: s = ca; c = -sa; break;
    case 2: s = -sa; c = -ca; break;
    default: s = -ca; c = sa; break;
  }
}

/// sincos_turns(uniform24(w)) with the quadrant split in integers: u = k 2^-24 (k = w >> 8),
/// 4u = k 2^-22, and sincos_turns' q = trunc(4u + 0.5) is (k + 2^21) >> 22 (4u + 0.5 is
/// exact below 4, and rounding in [4, 4.5) cannot reach 5); 4u - q = (k - q 2^22) 2^-22 is
/// exact in both, and a power-of-two factor moves out of a rounded product unchanged (no
/// subnormals here), so a is the same float. Saves a float-int-float round trip.
FERRITE_HOST_DEVICE void sincos_word(std::uint32_t w, float& s, float& c) {
  const std::uint32_t k = w >> 8;
  const std::uint32_t q = (k + (1u << 21)) >> 22;
  const std::int32_t reduced = static_cast<std::int32_t>(k) - static_cast<std::int32_t>(q << 22);
  constexpr float kQuarterTurn = static_cast<float>(1.57079632679489661923) * 0x1p-22f;  // exact scaling
  const float a = mul(static_cast<float>(reduced), kQuarterTurn);
  const float a2 = mul(a, a);
  const float sa = mul(a, sin_series(a2));
  const float ca = cos_series(a2);
  // sincos_turns' quadrant switch without branches (a warp's lanes would diverge over it):
  // odd quadrants swap sin and cos; quadrants 2, 3 negate sin, quadrants 1, 2 negate cos.
  const float s0 = (q & 1u) ? ca : sa, c0 = (q & 1u) ? sa : ca;
  s = (q & 2u) ? -s0 : s0;
  c = ((q + 1u) & 2u) ? -c0 : c0;
}

/// box_muller(uniform24_open0(w0), uniform24(w1)) to the bit, from the words.
FERRITE_HOST_DEVICE void box_muller_words(std::uint32_t w0, std::uint32_t w1, float& z0, float& z1) {
  const float r = root(mul(-2.f, log_open0_word(w0)));
  float s, c;
  sincos_word(w1, s, c);
  z0 = mul(r, c);
  z1 = mul(r, s);
}

/// Box-Muller: two standard normals from u1 in (0, 1] and u2 in [0, 1).
template <class T>
FERRITE_HOST_DEVICE void box_muller(T u1, T u2, T& z0, T& z1) {
  const T r = root(mul(T(-2), log_positive(u1)));
  T s, c;
  sincos_turns(u2, s, c);
  z0 = mul(r, c);
  z1 = mul(r, s);
}

}  // namespace ferrite::detail::philox
