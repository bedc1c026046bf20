// The values of one Philox group for each draw, shared by the CPU backend and the CUDA
// kernels (src/core/philox.hpp has the generator and the counter layout). A group holds
// kGroupElems<T> consecutive elements: 4 for 32-bit draws, 2 for F64 and I64.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/numeric.hpp"
#include "core/philox.hpp"
#include "ferrite/backend_families/random_ops.hpp"

namespace ferrite::detail::philox {

template <class T>
inline constexpr int kGroupElems = (std::is_same_v<T, double> || std::is_same_v<T, std::int64_t>) ? 2 : 4;

/// The compute type of a float dtype's draws: float for F32/F16/BF16, double for F64.
template <class T>
using draw_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// RandomDesc with its reals in the compute type (rounded once, on the host).
template <class T>
struct DrawParams {
  RandomKind kind;
  std::uint64_t seed, offset;
  draw_t<T> a, b;
  std::int64_t low;
  std::uint64_t range;
};

template <class T>
DrawParams<T> draw_params(const RandomDesc& d) {
  using W = draw_t<T>;
  return {d.kind, d.seed, d.offset, static_cast<W>(d.a), static_cast<W>(d.b), d.low, d.range};
}

/// Writes elements [0, count) of group `group` to out; probs (Bernoulli with a tensor of
/// probabilities, else null) holds the same elements of the probabilities.
template <class T>
FERRITE_HOST_DEVICE void draw_group(const DrawParams<T>& p, std::uint64_t group, int count, const T* probs, T* out) {
  const Words r = group_words(p.seed, p.offset, group);
  if constexpr (std::is_integral_v<T>) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int e = 0; e < kGroupElems<T>; ++e) {
      if (e >= count) break;  // a constant trip count keeps the arrays in registers
      std::uint64_t rem;
      if constexpr (std::is_same_v<T, std::int64_t>) {
        rem = join(r.w[2 * e], r.w[2 * e + 1]) % p.range;
      } else {
        // A 32-bit word: its remainder by a range of at most 2^32 is a 32-bit remainder (one
        // of 2^32 or more leaves the word as it is), far cheaper on the GPU than a 64-bit one.
        rem = p.range > 0xFFFFFFFFull ? r.w[e] : r.w[e] % static_cast<std::uint32_t>(p.range);
      }
      out[e] = static_cast<T>(static_cast<std::uint64_t>(p.low) + rem);
    }
  } else {
    using W = draw_t<T>;
    W v[kGroupElems<T>];
    if constexpr (std::is_same_v<W, double>) {
      if (p.kind == RandomKind::Normal) {
        box_muller(uniform53_open0(r.w[0], r.w[1]), uniform53(r.w[2], r.w[3]), v[0], v[1]);
      } else {
        v[0] = uniform53(r.w[0], r.w[1]);
        v[1] = uniform53(r.w[2], r.w[3]);
      }
    } else {
      if (p.kind == RandomKind::Normal) {
        box_muller(uniform24_open0(r.w[0]), uniform24(r.w[1]), v[0], v[1]);
        box_muller(uniform24_open0(r.w[2]), uniform24(r.w[3]), v[2], v[3]);
      } else {
        for (int e = 0; e < 4; ++e) v[e] = uniform24(r.w[e]);
      }
    }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int e = 0; e < kGroupElems<T>; ++e) {
      if (e >= count) break;
      W value;
      if (p.kind == RandomKind::Bernoulli) {
        const W prob = probs ? static_cast<W>(widen(probs[e])) : p.a;
        value = v[e] < prob ? W(1) : W(0);
      } else {
        value = add(p.a, mul(p.b, v[e]));
      }
      out[e] = narrow<T>(value);
    }
  }
}

/// The draws with a fast path: rand/uniform_ and randn/normal_ of F32, F16 and BF16, each
/// with a "unit" form for (a, b) = (0, 1). The values are draw_group's to the bit
/// (tests/unit/random_test.cpp compares them): a + b u with (0, 1) is u itself (u is never
/// -0); a + b z with (0, 1) is z + 0, which only turns a -0 into +0, so that add stays.
enum class FastDraw { kUnitUniform, kUniform, kUnitNormal, kNormal };

/// The fast draw for p, or false where draw_group is the only path (F64, integers,
/// Bernoulli).
template <class T>
bool fast_draw_of(const DrawParams<T>& p, FastDraw& kind) {
  if constexpr (std::is_integral_v<T> || std::is_same_v<T, double>) {
    return false;
  } else {
    // a must be +0: -0 + z keeps z = -0, which z + 0 would not.
    const bool unit = p.a == 0.f && !std::signbit(p.a) && p.b == 1.f;
    if (p.kind == RandomKind::Uniform) kind = unit ? FastDraw::kUnitUniform : FastDraw::kUniform;
    else if (p.kind == RandomKind::Normal) kind = unit ? FastDraw::kUnitNormal : FastDraw::kNormal;
    else return false;
    return true;
  }
}

/// narrow<T>(v) for a finite v: the device's conversion without narrow's NaN select (the
/// unit forms' values are finite: [0, 1) and |z| < 6). Both round to nearest even.
template <class T>
FERRITE_HOST_DEVICE T narrow_finite(float v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, BFloat16>) return bfloat16_from_bits(__bfloat16_as_ushort(__float2bfloat16_rn(v)));
  else if constexpr (std::is_same_v<T, Half>) return half_from_bits(__half_as_ushort(__float2half_rn(v)));
  else return narrow<T>(v);
#else
  return narrow<T>(v);
#endif
}

/// draw_group's four values of a whole group of a 32-bit float draw, from its words.
template <class T, FastDraw K>
FERRITE_HOST_DEVICE void fast_group(const DrawParams<T>& p, const Words& r, T* out) {
  static_assert(std::is_same_v<draw_t<T>, float>, "the fast draws are the 32-bit float ones");
  float v[4];
  if constexpr (K == FastDraw::kUnitUniform || K == FastDraw::kUniform) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int e = 0; e < 4; ++e) v[e] = uniform24(r.w[e]);
  } else {
    box_muller_words(r.w[0], r.w[1], v[0], v[1]);
    box_muller_words(r.w[2], r.w[3], v[2], v[3]);
  }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int e = 0; e < 4; ++e) {
    if constexpr (K == FastDraw::kUnitUniform) out[e] = narrow_finite<T>(v[e]);
    else if constexpr (K == FastDraw::kUnitNormal) out[e] = narrow_finite<T>(add(0.f, v[e]));
    else out[e] = narrow<T>(add(p.a, mul(p.b, v[e])));  // may be NaN (0 * Inf) or Inf
  }
}

/// Dropout's keep decision for the 32-bit word of an element.
FERRITE_HOST_DEVICE bool dropout_keep(std::uint32_t word, std::uint32_t threshold) { return (word >> 8) >= threshold; }

/// Dropout's keep decision for element `e` alone of the call at (seed, offset): word e % 4 of
/// group e / 4, what nn::dropout's kernels decide group by group. For callers that need single
/// elements in no group order (attention's weights, recomputed rather than stored).
FERRITE_HOST_DEVICE bool dropout_keeps_element(std::uint64_t seed, std::uint64_t offset, std::uint64_t e,
                                               std::uint32_t threshold) {
  return dropout_keep(group_words(seed, offset, e / 4).w[e % 4], threshold);
}

}  // namespace ferrite::detail::philox
