// The elementwise ops as small functors on wide values (see numeric.hpp). Both backends
// run these, so an op's meaning is written once; the CPU tests check it against exact or
// float64 truths and the CUDA tests check the GPU engine against the CPU.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

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

/// max(x, 0); NaN stays NaN as in PyTorch.
struct ReluFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W a) const {
    return a < W(0) ? W(0) : a;
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
