// A host scalar that keeps integers exact (a double cannot hold every int64).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ferrite/error.hpp"

namespace ferrite {

class Scalar {
 public:
  enum class Kind { Float, Int, Bool };

  Scalar(double v) : kind_(Kind::Float), float_(v) {}
  Scalar(float v) : kind_(Kind::Float), float_(v) {}
  /// An unsigned value above INT64_MAX fits no integer dtype; it is kept as a Float (its
  /// magnitude survives), so that converting it to an integer is an overflow error instead
  /// of a silent wrap to a negative number.
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Scalar(I v)
      : kind_(fits_int64(v) ? Kind::Int : Kind::Float),
        int_(fits_int64(v) ? static_cast<std::int64_t>(v) : 0),
        float_(static_cast<double>(v)) {}
  Scalar(bool v) : kind_(Kind::Bool), int_(v), float_(v) {}

  Kind kind() const { return kind_; }
  double to_double() const { return float_; }
  /// The integer value; a Float truncates toward zero. NaN and values outside int64 throw
  /// InvalidArgument (as PyTorch's "cannot be converted to type int64 without overflow").
  std::int64_t to_int64() const {
    if (kind_ != Kind::Float) return int_;
    // -2^63 is exact as a double; 2^63 is the first value above the range.
    FERRITE_CHECK(float_ >= -9223372036854775808.0 && float_ < 9223372036854775808.0, InvalidArgument, "Scalar: value ",
                  float_, " cannot be converted to type int64 without overflow");
    return static_cast<std::int64_t>(float_);
  }
  bool is_integral() const { return kind_ != Kind::Float; }

 private:
  template <class I>
  static constexpr bool fits_int64(I v) {
    if constexpr (std::is_unsigned_v<I>)
      return static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    else
      return true;
  }

  Kind kind_;
  std::int64_t int_ = 0;
  double float_ = 0;
};

}  // namespace ferrite
