// A host Scalar converted to a storage type by the documented rules: integers stay exact
// for integer dtypes; everything else goes through double and numeric.hpp's narrowing.
#pragma once

#include <type_traits>

#include "core/numeric.hpp"
#include "ferrite/scalar.hpp"

namespace ferrite::detail {

template <class T>
T scalar_to(Scalar value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (value.is_integral()) return static_cast<T>(value.to_int64());
  }
  return narrow<T>(value.to_double());
}

}  // namespace ferrite::detail
