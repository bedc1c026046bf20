#include "ferrite/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/extent.hpp"
#include "core/host_scratch.hpp"
#include "core/scalar_convert.hpp"
#include "ferrite/backend.hpp"
#include "frontend/checks.hpp"
#include "frontend/strided.hpp"

namespace ferrite {

std::string shape_str(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::int64_t shape_numel(const Shape& shape) { return detail::checked_numel(shape); }

namespace {

// PyTorch's rule: row-major order with no gaps; dims of size 1 may have any stride, and an
// empty tensor is contiguous.
bool strides_are_contiguous(const Shape& shape, const Strides& strides, std::int64_t numel) {
  if (numel == 0) return true;
  std::int64_t expected = 1;
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] == 1) continue;
    if (strides[k] != expected) return false;
    expected *= shape[k];
  }
  return true;
}

}  // namespace

Tensor::Tensor(Buffer buffer, Shape shape)
    : storage_(buffer.storage()), dtype_(buffer.dtype()), shape_(std::move(shape)), offset_(buffer.offset()) {
  numel_ = shape_numel(shape_);
  FERRITE_CHECK(numel_ == buffer.numel(), ShapeMismatch, "Tensor: shape ", shape_str(shape_), " needs ", numel_,
                " elements but the buffer holds ", buffer.numel());
  strides_ = detail::checked_contiguous_strides(shape_, "Tensor");
}

Tensor::Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides, std::int64_t offset)
    : storage_(std::move(storage)), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)),
      offset_(offset) {
  numel_ = shape_numel(shape_);
  contiguous_ = strides_are_contiguous(shape_, strides_, numel_);
}

Device Tensor::device() const { return storage_ ? storage_->device() : Device::cpu(); }

std::int64_t Tensor::size(std::int64_t d) const {
  const std::int64_t rank = dim();
  FERRITE_CHECK(d >= -rank && d < rank, IndexOutOfRange, "size: dim ", d, " is out of range for ", description());
  return shape_[static_cast<std::size_t>(d < 0 ? d + rank : d)];
}

std::int64_t Tensor::stride(std::int64_t d) const {
  const std::int64_t rank = dim();
  FERRITE_CHECK(d >= -rank && d < rank, IndexOutOfRange, "stride: dim ", d, " is out of range for ", description());
  return strides_[static_cast<std::size_t>(d < 0 ? d + rank : d)];
}

const void* Tensor::data_ptr() const { return mutable_data_ptr(); }

void* Tensor::mutable_data_ptr() const {
  if (!storage_) return nullptr;
  return static_cast<char*>(storage_->data()) + static_cast<std::size_t>(offset_) * element_size();
}

Buffer Tensor::window() const {
  // Byte copies (transfers, clone) take any alignment.
  return numel_ == 0 ? Buffer(storage_, dtype_, 0, 0) : Buffer(storage_, dtype_, numel_, offset_);
}

Buffer Tensor::buffer() const {
  if (!storage_) return Buffer();
  // An empty view may carry an offset past the storage's end (a select of an empty dim).
  if (numel_ == 0) return Buffer(storage_, dtype_, 0, 0);
  // A contiguous view whose first element is off the 16-byte grid is copied too: kernels pick
  // their vector paths (and so their summation orders) by alignment, and a result must not
  // depend on where a view starts in its storage.
  if (contiguous_ && reinterpret_cast<std::uintptr_t>(mutable_data_ptr()) % 16 == 0)
    return Buffer(storage_, dtype_, numel_, offset_);
  return clone().buffer();
}

Tensor Tensor::contiguous() const {
  FERRITE_CHECK(defined(), InvalidArgument, "contiguous: tensor is undefined");
  if (contiguous_) return *this;
  Tensor out = frontend::allocate(shape_, dtype(), device());
  frontend::copy_elements(*this, out);
  return out;
}

std::string Tensor::description() const {
  if (!defined()) return "undefined tensor";
  return shape_str(shape_) + " " + std::string(dtype_name(dtype())) + " " + device().str();
}

void Tensor::check_host_type(DType requested, const char* what) const {
  FERRITE_CHECK(defined(), InvalidArgument, what, ": tensor is undefined");
  FERRITE_CHECK(is_complex(requested) || !is_complex(dtype()), DTypeMismatch, what, ": asked for ",
                dtype_name(requested), " elements but the tensor is ", description(),
                "; a complex value has no real conversion here (x.to(dtype) keeps the real part)");
}

Tensor Tensor::to(Device target) const {
  FERRITE_CHECK(defined(), InvalidArgument, "to(device): tensor is undefined");
  if (target == device()) return *this;
  // A transposed or permuted tensor moves as its dense block and keeps its layout (as
  // PyTorch's .to()); other strided tensors are made dense on their own device first.
  if (const auto order = frontend::memory_order(*this))
    return permute(*order).to(target).permute(frontend::inverse_permutation(*order));
  if (!contiguous_) return contiguous().to(target);
  Tensor out = frontend::allocate(shape_, dtype(), target);
  if (numel() == 0) return out;
  if (device().is_cpu()) {
    backend(target).copy_from_host(data_ptr(), out.buffer(), nbytes());
  } else if (target.is_cpu()) {
    backend(device()).copy_to_host(window(), out.mutable_data_ptr(), nbytes());
  } else {
    FERRITE_CHECK(device().kind == target.kind, Unsupported, "to(device): no direct path from ", device().str(),
                  " to ", target.str());
    backend(device()).copy(window(), out.buffer());
  }
  return out;
}

Tensor Tensor::to(DType target) const {
  FERRITE_CHECK(defined(), InvalidArgument, "to(dtype): tensor is undefined");
  if (target == dtype()) return *this;
  frontend::check_supported(Op::Cast, dtype(), device());
  frontend::check_supported(Op::Cast, target, device());
  // A transposed or permuted tensor is converted in memory order and keeps its layout.
  if (const auto order = frontend::memory_order(*this))
    return permute(*order).to(target).permute(frontend::inverse_permutation(*order));
  Tensor out = frontend::allocate(shape_, target, device());
  if (numel() > 0) frontend::cast_elements(*this, out);
  return out;
}

Tensor Tensor::clone() const {
  FERRITE_CHECK(defined(), InvalidArgument, "clone: tensor is undefined");
  if (!contiguous_) return contiguous();  // already a new tensor
  Tensor out = frontend::allocate(shape_, dtype(), device());
  if (numel() > 0) backend(device()).copy(window(), out.buffer());
  return out;
}

Tensor Tensor::reshape(Shape target) const {
  FERRITE_CHECK(defined(), InvalidArgument, "reshape: tensor is undefined");
  int inferred = -1;
  // The shape rule (core/extent.hpp) on the dims given, zero dims counted as 1, so that
  // whether a target is refused does not depend on where its zeros are.
  std::int64_t nonzero = 1;
  bool has_zero = false;
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      FERRITE_CHECK(inferred < 0, InvalidArgument, "reshape: more than one -1 in ", shape_str(target));
      inferred = static_cast<int>(i);
    } else {
      FERRITE_CHECK(target[i] >= 0, InvalidArgument, "reshape: negative dim in ", shape_str(target));
      has_zero = has_zero || target[i] == 0;
      nonzero = detail::checked_mul(
          nonzero, std::max<std::int64_t>(target[i], 1),
          [&] {
            return "reshape: " + description() + " cannot become " + shape_str(target) +
                   " (more elements than an int64 can count)";
          },
          ErrorKind::ShapeMismatch);
    }
  }
  const std::int64_t known = has_zero ? 0 : nonzero;
  if (inferred >= 0) {
    FERRITE_CHECK(known != 0 && numel() % known == 0, ShapeMismatch, "reshape: cannot infer -1 in ",
                  shape_str(target), " for ", description());
    target[static_cast<std::size_t>(inferred)] = numel() / known;
  }
  FERRITE_CHECK(shape_numel(target) == numel(), ShapeMismatch, "reshape: ", description(), " cannot become ",
                shape_str(target), " (", numel(), " vs ", shape_numel(target), " elements)");
  // A view when the strides allow one (always for a contiguous tensor), else a copy.
  if (auto strides = frontend::view_strides(shape_, strides_, target))
    return Tensor(storage_, dtype_, std::move(target), std::move(*strides), offset_);
  return contiguous().reshape(std::move(target));
}

std::vector<std::uint8_t> Tensor::to_bytes() const {
  FERRITE_CHECK(defined(), InvalidArgument, "to_bytes: tensor is undefined");
  if (!contiguous_) return contiguous().to_bytes();
  std::vector<std::uint8_t> bytes = detail::host_scratch<std::uint8_t>(static_cast<std::int64_t>(nbytes()), "to_bytes");
  if (bytes.empty()) return bytes;
  if (device().is_cpu()) {
    std::memcpy(bytes.data(), data_ptr(), bytes.size());
  } else {
    backend(device()).copy_to_host(window(), bytes.data(), bytes.size());
  }
  return bytes;
}

Tensor Tensor::from_bytes(const void* data, std::size_t nbytes, DType dtype, Shape shape, Device device) {
  const std::int64_t numel = shape_numel(shape);
  FERRITE_CHECK(nbytes == static_cast<std::size_t>(numel) * dtype_size(dtype), ShapeMismatch, "from_bytes: ",
                nbytes, " bytes given but shape ", shape_str(shape), " of ", dtype_name(dtype), " needs ",
                static_cast<std::size_t>(numel) * dtype_size(dtype));
  FERRITE_CHECK(nbytes == 0 || data != nullptr, InvalidArgument, "from_bytes: null data pointer");
  Tensor out = frontend::allocate(shape, dtype, device);
  if (nbytes == 0) return out;
  // A Bool byte must be 0 or 1: the ops load it as a C++ bool, and any other byte is
  // undefined behaviour there (any() false for {2, 0}, sum({2, 3}) = 5). Normalise at the
  // boundary, as a cast to bool does: every nonzero byte is true.
  std::vector<std::uint8_t> normalised;
  if (dtype == DType::Bool) {
    normalised = detail::host_scratch<std::uint8_t>(static_cast<std::int64_t>(nbytes), "from_bytes");
    const auto* in = static_cast<const std::uint8_t*>(data);
    for (std::size_t i = 0; i < nbytes; ++i) normalised[i] = in[i] != 0;
    data = normalised.data();
  }
  if (device.is_cpu()) {
    std::memcpy(out.mutable_data_ptr(), data, nbytes);
  } else {
    backend(device).copy_from_host(data, out.buffer(), nbytes);
  }
  return out;
}

// ---- factories ----

Tensor empty(Shape shape, DType dtype, Device device) { return frontend::allocate(shape, dtype, device); }

Tensor full(Shape shape, Scalar value, DType dtype, Device device) {
  frontend::check_supported(Op::Fill, dtype, device);
  detail::check_fill_value("full", value, dtype);
  Tensor out = frontend::allocate(shape, dtype, device);
  if (out.numel() > 0) backend(device).fill(out.buffer(), value);
  return out;
}

Tensor zeros(Shape shape, DType dtype, Device device) { return full(std::move(shape), 0, dtype, device); }

Tensor arange(double start, double end, double step, DType dtype, Device device) {
  FERRITE_CHECK(step != 0 && std::isfinite(step) && std::isfinite(start) && std::isfinite(end), InvalidArgument,
                "arange: start ", start, ", end ", end, " and step ", step, " must be finite with step != 0");
  // As torch.arange: an interval that the step walks away from is an error, not empty.
  FERRITE_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), InvalidArgument, "arange: start ", start,
                ", end ", end, ", step ", step, ": upper bound and lower bound inconsistent with step sign");
  const double count = std::ceil((end - start) / step);
  FERRITE_CHECK(count < 9.0e18, InvalidArgument, "arange: ", count, " elements is too many");
  const auto n = static_cast<std::int64_t>(count > 0 ? count : 0);
  frontend::check_supported(Op::Arange, dtype, device);
  Tensor out = frontend::allocate({n}, dtype, device);
  if (n > 0) backend(device).arange(out.buffer(), start, step);
  return out;
}

Tensor arange(std::int64_t n, DType dtype, Device device) {
  FERRITE_CHECK(n >= 0, InvalidArgument, "arange: negative length ", n);
  return arange(0.0, static_cast<double>(n), 1.0, dtype, device);
}

Tensor from_vector(const std::vector<bool>& values, Shape shape, Device device) {
  std::vector<std::uint8_t> bytes =
      detail::host_scratch<std::uint8_t>(static_cast<std::int64_t>(values.size()), "from_vector");
  std::copy(values.begin(), values.end(), bytes.begin());
  return Tensor::from_bytes(bytes.data(), bytes.size(), DType::Bool, std::move(shape), device);
}

}  // namespace ferrite
