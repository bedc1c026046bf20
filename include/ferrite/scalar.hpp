// A host scalar that keeps integers exact (a double cannot hold every int64).
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

namespace ferrite {

class Scalar {
 public:
  enum class Kind { Float, Int, Bool };

  Scalar(double v) : kind_(Kind::Float), float_(v) {}
  Scalar(float v) : kind_(Kind::Float), float_(v) {}
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Scalar(I v) : kind_(Kind::Int), int_(static_cast<std::int64_t>(v)), float_(static_cast<double>(v)) {}
  Scalar(bool v) : kind_(Kind::Bool), int_(v), float_(v) {}

  Kind kind() const { return kind_; }
  double to_double() const { return float_; }
  std::int64_t to_int64() const { return kind_ == Kind::Float ? static_cast<std::int64_t>(float_) : int_; }
  bool is_integral() const { return kind_ != Kind::Float; }

 private:
  Kind kind_;
  std::int64_t int_ = 0;
  double float_ = 0;
};

}  // namespace ferrite
