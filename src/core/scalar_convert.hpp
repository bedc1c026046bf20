// A host Scalar converted to a storage type by the documented rules: integers stay exact
// for integer dtypes; everything else goes through double and numeric.hpp's narrowing.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <iomanip>
#include <sstream>
#include <type_traits>

#include "core/numeric.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/error.hpp"
#include "ferrite/scalar.hpp"

namespace ferrite::detail {

/// PyTorch's overflow check for a value stored into an integer dtype (full, masked_fill): NaN
/// or a value outside I32/I64 is InvalidArgument "<op>: value V cannot be converted to type
/// I32 without overflow", never a wrap or a saturation. Floats truncate toward zero.
inline void check_fill_value(const char* op, Scalar value, DType dtype) {
  if (!is_integral(dtype)) return;
  const bool i32 = dtype == DType::I32;
  bool fits;
  if (value.is_integral()) {
    const std::int64_t v = value.to_int64();
    fits = !i32 || (v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max());
  } else {
    const double lo = i32 ? -2147483648.0 : -9223372036854775808.0, hi = i32 ? 2147483648.0 : 9223372036854775808.0;
    fits = std::trunc(value.to_double()) >= lo && value.to_double() < hi;  // NaN compares false
  }
  if (fits) return;
  std::ostringstream text;
  if (value.is_integral())
    text << value.to_int64();
  else
    text << std::setprecision(17) << value.to_double();
  FERRITE_THROW(InvalidArgument, op, ": value ", text.str(), " cannot be converted to type ", dtype_name(dtype),
                " without overflow");
}

template <class T>
T scalar_to(Scalar value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (value.is_integral()) return static_cast<T>(value.to_int64());
  }
  return narrow<T>(value.to_double());
}

}  // namespace ferrite::detail
