// The dtype table. One X-macro line per dtype drives the enum, its name, its size and
// the host type used by from_vector/to_vector. Adding a dtype means adding one line here
// and teaching the backends what to do with it.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ferrite/half.hpp"

namespace ferrite {

//            enum  host type              bytes  floating  complex  integer
#define FERRITE_FOR_EACH_DTYPE(X)                                  \
  X(F32,  float,                4,  true,  false, false)           \
  X(F64,  double,               8,  true,  false, false)           \
  X(F16,  ::ferrite::Half,      2,  true,  false, false)           \
  X(BF16, ::ferrite::BFloat16,  2,  true,  false, false)           \
  X(I32,  std::int32_t,         4,  false, false, true)            \
  X(I64,  std::int64_t,         8,  false, false, true)            \
  X(Bool, bool,                 1,  false, false, false)           \
  X(C64,  std::complex<float>,  8,  false, true,  false)           \
  X(C128, std::complex<double>, 16, false, true,  false)

enum class DType : std::uint8_t {
#define FERRITE_DTYPE_ENUM(name, type, bytes, fl, cx, in) name,
  FERRITE_FOR_EACH_DTYPE(FERRITE_DTYPE_ENUM)
#undef FERRITE_DTYPE_ENUM
};

inline constexpr int kNumDTypes = 9;

inline constexpr DType kAllDTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32,
                                       DType::I64, DType::Bool, DType::C64, DType::C128};
inline constexpr DType kFloatDTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16};

constexpr std::string_view dtype_name(DType d) {
  switch (d) {
#define FERRITE_DTYPE_NAME(name, type, bytes, fl, cx, in) \
  case DType::name:                                     \
    return #name;
    FERRITE_FOR_EACH_DTYPE(FERRITE_DTYPE_NAME)
#undef FERRITE_DTYPE_NAME
  }
  return "?";
}

constexpr std::size_t dtype_size(DType d) {
  switch (d) {
#define FERRITE_DTYPE_SIZE(name, type, bytes, fl, cx, in) \
  case DType::name:                                     \
    return bytes;
    FERRITE_FOR_EACH_DTYPE(FERRITE_DTYPE_SIZE)
#undef FERRITE_DTYPE_SIZE
  }
  return 0;
}

constexpr bool is_floating(DType d) {
  switch (d) {
#define FERRITE_DTYPE_FLOAT(name, type, bytes, fl, cx, in) \
  case DType::name:                                      \
    return fl;
    FERRITE_FOR_EACH_DTYPE(FERRITE_DTYPE_FLOAT)
#undef FERRITE_DTYPE_FLOAT
  }
  return false;
}

/// Whether `d` is one of the table's dtypes (a DType made by static_cast may not be).
constexpr bool is_valid_dtype(DType d) { return static_cast<int>(d) < kNumDTypes; }  // the enum is unsigned
constexpr bool is_complex(DType d) { return d == DType::C64 || d == DType::C128; }
constexpr bool is_integral(DType d) { return d == DType::I32 || d == DType::I64; }
constexpr bool is_half_precision(DType d) { return d == DType::F16 || d == DType::BF16; }
/// Numeric: takes part in arithmetic (everything except Bool).
constexpr bool is_numeric(DType d) { return d != DType::Bool; }

/// dtype_of<T>: the dtype whose host type is T (compile error for other types).
template <class T>
struct DTypeOf;
#define FERRITE_DTYPE_OF(name, type, bytes, fl, cx, in) \
  template <>                                         \
  struct DTypeOf<type> {                              \
    static constexpr DType value = DType::name;       \
  };
FERRITE_FOR_EACH_DTYPE(FERRITE_DTYPE_OF)
#undef FERRITE_DTYPE_OF
template <class T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace ferrite
