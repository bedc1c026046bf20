#include "frontend/checks.hpp"

#include <limits>
#include <string>

namespace ferrite::frontend {

Tensor allocate(const Shape& shape, DType dtype, Device device) {
  // Every tensor is made here: a DType made by static_cast stops before dtype_size() is 0.
  FERRITE_CHECK(is_valid_dtype(dtype), InvalidArgument, "dtype value ", static_cast<int>(dtype),
                " is not a DType (shape ", shape_str(shape), ", ", device.str(), ")");
  const std::int64_t numel = shape_numel(shape);
  // The byte count must not wrap (2^61 C128 elements would ask for 0 bytes), and backends add
  // alignment and guard bytes to it: keep a mebibyte of headroom below 2^63.
  const auto elem = static_cast<std::int64_t>(dtype_size(dtype));
  FERRITE_CHECK(numel <= (std::numeric_limits<std::int64_t>::max() - (std::int64_t(1) << 20)) / elem, InvalidArgument,
                "shape ", shape_str(shape), " of ", dtype_name(dtype), " needs more bytes than an int64 can count");
  Backend& b = backend(device);
  auto storage = b.allocate(static_cast<std::size_t>(numel) * dtype_size(dtype), device);
  return Tensor(Buffer(std::move(storage), dtype, numel), shape);
}

namespace {
std::string describe_all(std::initializer_list<const Tensor*> tensors) {
  std::string text;
  for (const Tensor* t : tensors) {
    if (!text.empty()) text += ", ";
    text += t->defined() ? t->description() : std::string("undefined");
  }
  return text;
}
}  // namespace

void check_defined(const char* op, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    FERRITE_CHECK(t->defined(), InvalidArgument, op, ": an operand is an undefined (default-constructed) tensor");
}

void check_grad(const char* op, const Tensor& grad, const Tensor& forward, const char* forward_name) {
  check_defined(op, {&grad, &forward});
  check_same_device(op, {&grad, &forward});
  check_same_dtype(op, {&grad, &forward});
  FERRITE_CHECK(grad.shape() == forward.shape(), ShapeMismatch, op, ": grad is ", grad.description(), " but ",
                forward_name, " is ", forward.description(), " (shapes must match)");
}

void check_same_device(const char* op, std::initializer_list<const Tensor*> tensors) {
  const Device first = (*tensors.begin())->device();
  for (const Tensor* t : tensors)
    FERRITE_CHECK(t->device() == first, DeviceMismatch, op, ": operands are on different devices (",
                  describe_all(tensors), ")");
}

void check_same_dtype(const char* op, std::initializer_list<const Tensor*> tensors) {
  const DType first = (*tensors.begin())->dtype();
  for (const Tensor* t : tensors)
    FERRITE_CHECK(t->dtype() == first, DTypeMismatch, op, ": operand dtypes differ (", describe_all(tensors),
                  "); ferrite never promotes, cast one with .to(dtype)");
}

void check_supported(Op op, DType dtype, Device device) {
  FERRITE_CHECK(is_valid_dtype(dtype), InvalidArgument, op_name(op), ": dtype value ", static_cast<int>(dtype),
                " is not a DType");
  Backend& b = backend(device);
  FERRITE_CHECK(b.supports(op, dtype), Unsupported, op_name(op), ": dtype ", dtype_name(dtype),
                " is not supported on ", device.str(), " (", b.name(), " backend)");
}

std::int64_t wrap_dim(const char* op, const Tensor& x, std::int64_t dim) {
  const std::int64_t rank = x.dim();
  const std::int64_t span = rank == 0 ? 1 : rank;
  FERRITE_CHECK(dim >= -span && dim < span, IndexOutOfRange, op, ": dim ", dim, " is out of range for input ",
                x.description(), " (expected a dim in [", -span, ", ", span - 1, "])");
  return dim < 0 ? dim + span : dim;
}

}  // namespace ferrite::frontend
