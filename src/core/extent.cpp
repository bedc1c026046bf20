#include "core/extent.hpp"

namespace ferrite::detail {

void throw_extent_overflow(ErrorKind kind, const std::string& message) { throw_error(kind, message); }

namespace {
std::string prefix(const char* op) { return op ? std::string(op) + ": " : std::string(); }
}  // namespace

std::int64_t checked_numel(const Shape& shape, const char* op) {
  std::int64_t nonzero = 1;
  bool empty = false;
  for (std::int64_t d : shape) {
    FERRITE_CHECK(d >= 0, InvalidArgument, prefix(op), "shape ", shape_str(shape), " has a negative dim");
    if (d == 0) {
      empty = true;
      continue;
    }
    nonzero = checked_mul(nonzero, d, [&] {
      return prefix(op) + "shape " + shape_str(shape) +
             " has more elements than an int64 can count (zero dims count as 1, as in its row-major strides)";
    });
  }
  return empty ? 0 : nonzero;
}

std::int64_t checked_product(const Shape& shape, std::size_t begin, std::size_t end, const char* op) {
  std::int64_t p = 1;
  for (std::size_t k = begin; k < end; ++k)
    p = checked_mul(p, shape[k], [&] {
      return prefix(op) + "the product of dims " + std::to_string(begin) + ".." + std::to_string(end - 1) +
             " of shape " + shape_str(shape) + " is more than an int64 can count";
    });
  return p;
}

std::vector<std::int64_t> checked_contiguous_strides(const Shape& shape, const char* op) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t k = shape.size(); k-- > 0;) {
    strides[k] = s;
    if (k > 0)  // the product of every dim is the numel, not a stride
      s = checked_mul(s, shape[k], [&] {
        return prefix(op) + "a row-major stride of shape " + shape_str(shape) + " is more than an int64 can count";
      });
  }
  return strides;
}

}  // namespace ferrite::detail
