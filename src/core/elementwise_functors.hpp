// The elementwise ops as small functors on wide values (see numeric.hpp). Both backends
// run these, so an op's meaning is written once; the CPU tests check it against exact or
// float64 truths and the CUDA tests check the GPU engine against the CPU.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/elementwise_math.hpp"
#include "core/numeric.hpp"

namespace ferrite::detail {

// Integer arithmetic wraps (two's complement), computed in unsigned to stay defined.
template <class I>
FERRITE_HOST_DEVICE I wrapping(std::make_unsigned_t<I> v) {
  return static_cast<I>(v);
}

struct AddFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a, W b) const {
    if constexpr (std::is_integral_v<W>) {
      using U = std::make_unsigned_t<W>;
      return wrapping<W>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};

struct SubFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a, W b) const {
    if constexpr (std::is_integral_v<W>) {
      using U = std::make_unsigned_t<W>;
      return wrapping<W>(static_cast<U>(a) - static_cast<U>(b));
    } else {
      return a - b;
    }
  }
};

struct MulFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a, W b) const {
    if constexpr (std::is_integral_v<W>) {
      using U = std::make_unsigned_t<W>;
      return wrapping<W>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};

/// Floats: IEEE division. Integers: truncate toward zero; x / 0 = 0 (no trap, documented);
/// MIN / -1 wraps to MIN.
struct DivFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a, W b) const {
    if constexpr (std::is_integral_v<W>) {
      if (b == 0) return W(0);
      if (b == -1) return SubFn{}(W(0), a);
      return a / b;
    } else {
      return a / b;
    }
  }
};

struct NegFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a) const {
    if constexpr (std::is_integral_v<W>)
      return SubFn{}(W(0), a);
    else
      return -a;  // not 0 - a, which would turn +0 into +0 instead of -0
  }
};

/// max(x, 0); NaN stays NaN as in PyTorch. relu(-0) is +0 on every backend (PyTorch's
/// CUDA result; its CPU keeps -0): `<=` sends both zeros to +0.
struct ReluFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a) const {
    return a <= W(0) ? W(0) : a;
  }
};

/// |x|. Floats: the sign bit cleared (|-0| = +0, NaN stays NaN). Integers: |MIN| wraps
/// to MIN, as in PyTorch.
struct AbsFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a) const {
    if constexpr (std::is_integral_v<W>)
      return a < 0 ? SubFn{}(W(0), a) : a;
    else
      return math::fabs(a);
  }
};

/// ~x on integers; not x on Bool (so bitwise_not and logical_not agree on Bool).
struct BitwiseNotFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a) const {
    if constexpr (std::is_same_v<W, bool>)
      return !a;
    else
      return ~a;
  }
};

/// The four arithmetic ops chosen at run time: one kernel per dtype for the mixed-precision
/// (F16/BF16 in, F32 out) variants, which are not worth a kernel each.
enum class ArithmeticOp : std::uint8_t { Add, Sub, Mul, Div };
struct ArithmeticFn {
  ArithmeticOp op;
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a, W b) const {
    switch (op) {
      case ArithmeticOp::Add: return AddFn{}(a, b);
      case ArithmeticOp::Sub: return SubFn{}(a, b);
      case ArithmeticOp::Mul: return MulFn{}(a, b);
      default: return DivFn{}(a, b);
    }
  }
};

/// maximum / minimum. NaN wins (either operand NaN gives NaN, as torch.maximum); between
/// +0 and -0, maximum is +0 and minimum is -0 (IEEE 754-2019 maximum/minimum).
struct MinMaxFn {
  bool is_max;
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a, W b) const {
    if constexpr (!std::is_integral_v<W>) {
      if (a != a) return a;
      if (b != b) return b;
      // Two zeros: a + b is -0 only when both are -0 (max); -(-a - b) is +0 only when both
      // are +0 (min). No signbit() needed.
      if (a == b && a == W(0)) return is_max ? a + b : -(-a - b);
    }
    if (is_max) return a > b ? a : b;
    return a < b ? a : b;
  }
};

/// Integer ops chosen at run time (one kernel per dtype; the kernels are memory bound, so
/// the uniform switch costs nothing measurable). `bits` is the storage width (32 or 64;
/// I32 is computed in int64 and wrapped on store).
///   floor_divide: rounds toward -Inf (Python, torch); x // 0 = 0 (NumPy's rule; no trap);
///                 MIN // -1 wraps to MIN.
///   remainder:    the sign of the divisor (Python, torch); x % 0 = 0 (NumPy); MIN % -1 = 0.
///   shift_left:   counts outside [0, bits) give 0.
///   shift_right:  arithmetic; counts outside [0, bits) give -1 for negative x, else 0.
///   and/or/xor:   bitwise; on Bool the logical ops.
enum class IntegerOp : std::uint8_t { FloorDivide, Remainder, And, Or, Xor, ShiftLeft, ShiftRight };
struct IntegerFn {
  IntegerOp op;
  int bits;
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a, W b) const {
    if constexpr (std::is_same_v<W, bool>) {
      switch (op) {
        case IntegerOp::And: return a && b;
        case IntegerOp::Or: return a || b;
        default: return a != b;
      }
    } else {
      using U = std::make_unsigned_t<W>;
      switch (op) {
        case IntegerOp::FloorDivide: {
          if (b == 0) return W(0);
          if (b == -1) return SubFn{}(W(0), a);
          const W q = a / b;
          return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
        }
        case IntegerOp::Remainder: {
          if (b == 0 || b == -1) return W(0);
          const W r = a % b;
          return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
        }
        case IntegerOp::And: return a & b;
        case IntegerOp::Or: return a | b;
        case IntegerOp::Xor: return a ^ b;
        case IntegerOp::ShiftLeft:
          return (b < 0 || b >= bits) ? W(0) : wrapping<W>(static_cast<U>(static_cast<U>(a) << b));
        default:
          if (b < 0 || b >= bits) return a < 0 ? W(-1) : W(0);
          return a >> b;  // arithmetic for signed values (C++20)
      }
    }
  }
};

/// eq/ne/lt/le/gt/ge -> Bool. IEEE: every comparison with NaN is false except ne.
enum class CompareOp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
struct CompareFn {
  CompareOp op;
  template <class W>
  FERRITE_HOST_DEVICE bool operator()(W a, W b) const {
    switch (op) {
      case CompareOp::Eq: return a == b;
      case CompareOp::Ne: return a != b;
      case CompareOp::Lt: return a < b;
      case CompareOp::Le: return a <= b;
      case CompareOp::Gt: return a > b;
      default: return a >= b;
    }
  }
};

/// cond ? x : y, on raw storage values (where is instantiated per element size).
struct WhereFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(bool cond, W x, W y) const {
    return cond ? x : y;
  }
};

/// The identity on wide values: with narrowing on store this is a cast.
struct CastFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a) const {
    return a;
  }
};

}  // namespace ferrite::detail
