// Overflow-checked arithmetic for shapes, strides and extents: the one place where the
// front ends multiply or add dims. Every product of dims of a valid shape fits in an int64
// (shape rule below), but the shapes that front ends build (cat's joined dim, repeat's
// tiles, matmul's [m, n]) are not checked yet, and that arithmetic must not overflow while
// they are being made.
//
// Shape rule (docs/families/shape.md, "Shapes"): every dim is >= 0 and the product of the
// non-zero dims fits in an int64. That is "every row-major stride fits", as PyTorch
// computes contiguous strides with max(dim, 1); so whether a shape is accepted does not
// depend on the order of its dims or on where a zero dim sits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::detail {

/// Throws Error(kind, message); kept out of line so the checks below stay small.
[[noreturn]] void throw_extent_overflow(ErrorKind kind, const std::string& message);

/// a * b; otherwise Error(kind, describe()). describe is called only on overflow, so its
/// message costs nothing on the normal path.
template <class Describe>
std::int64_t checked_mul(std::int64_t a, std::int64_t b, Describe&& describe,
                         ErrorKind kind = ErrorKind::InvalidArgument) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]]
    throw_extent_overflow(kind, describe());
  return r;
}

/// a + b; otherwise Error(kind, describe()).
template <class Describe>
std::int64_t checked_add(std::int64_t a, std::int64_t b, Describe&& describe,
                         ErrorKind kind = ErrorKind::InvalidArgument) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) [[unlikely]]
    throw_extent_overflow(kind, describe());
  return r;
}

/// a * b, or nothing where it overflows: for callers to whom an overflow is an answer (a
/// shape that cannot match, a step never taken), not an error.
inline std::optional<std::int64_t> mul_if_fits(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a + b, or nothing where it overflows.
inline std::optional<std::int64_t> add_if_fits(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// Checks the shape rule and returns the number of elements (0 when a dim is 0). Errors are
/// InvalidArgument, prefixed with "<op>: " when op is not null.
std::int64_t checked_numel(const Shape& shape, const char* op = nullptr);
/// Product of shape[begin, end), checked (outer and inner extents, matrix sizes).
std::int64_t checked_product(const Shape& shape, std::size_t begin, std::size_t end, const char* op);
/// Row-major element strides of `shape`, checked.
std::vector<std::int64_t> checked_contiguous_strides(const Shape& shape, const char* op);

}  // namespace ferrite::detail
