// Tensor: a shared Buffer plus a row-major contiguous shape. Small on purpose: views,
// autograd and strides live above ferrite; reshape is free, transposes copy.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "ferrite/buffer.hpp"
#include "ferrite/device.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/error.hpp"
#include "ferrite/scalar.hpp"

namespace ferrite {

using Shape = std::vector<std::int64_t>;

/// "[3, 4]".
std::string shape_str(const Shape& shape);
/// Product of the dims (1 for rank 0). Throws InvalidArgument on a negative dim, or when the
/// product of the non-zero dims does not fit in an int64 (the shape rule, whatever the order
/// of the dims: docs/families/shape.md).
std::int64_t shape_numel(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  Tensor(Buffer buffer, Shape shape);

  bool defined() const { return buffer_.defined(); }
  DType dtype() const { return buffer_.dtype(); }
  Device device() const { return buffer_.device(); }
  const Shape& shape() const { return shape_; }
  std::int64_t dim() const { return static_cast<std::int64_t>(shape_.size()); }
  /// Extent of dim `d`; negative d counts from the end.
  std::int64_t size(std::int64_t d) const;
  std::int64_t numel() const { return buffer_.numel(); }
  std::size_t element_size() const { return dtype_size(dtype()); }
  std::size_t nbytes() const { return buffer_.nbytes(); }
  const Buffer& buffer() const { return buffer_; }
  const void* data_ptr() const { return buffer_.data(); }
  void* mutable_data_ptr() const { return buffer_.data(); }

  /// Copy to another device (pinned-staged for host <-> GPU). Same device: shares storage.
  Tensor to(Device device) const;
  /// Element-wise conversion (NaN and out-of-range rules: docs/architecture.md).
  /// Same dtype: shares storage.
  Tensor to(DType dtype) const;
  /// A new buffer on the same device with the same contents.
  Tensor clone() const;
  /// Same storage, new shape with the same numel. One dim may be -1.
  Tensor reshape(Shape shape) const;

  /// Copies the elements to the host as T, one of the dtype table's host types (float,
  /// double, ferrite::Half, ferrite::BFloat16, int32_t, int64_t, bool, std::complex<float>,
  /// std::complex<double>). When T is not dtype()'s own host type, the elements are
  /// converted on the host by the CPU backend's cast, with the rules of to(dtype)
  /// (docs/architecture.md: floats to integers truncate, NaN -> 0, out of range saturates;
  /// to Bool is x != 0; narrowing floats round to nearest even), so
  /// `f32.item<double>()` and `i64.to_vector<float>()` work. A complex tensor read as a real
  /// type is a DTypeMismatch (the imaginary part would be lost; .to(dtype) keeps the real part).
  template <class T>
  std::vector<T> to_vector() const;
  /// The single element of a one-element tensor, converted as to_vector<T>() does.
  template <class T>
  T item() const;

  /// Raw little-endian element bytes (nbytes() of them), copied to the host.
  std::vector<std::uint8_t> to_bytes() const;
  /// A tensor of `dtype` and `shape` on `device` made from the host bytes at `data`;
  /// `nbytes` must equal numel * element size. Bool bytes are normalised: any nonzero byte
  /// becomes 1 (true), as the ops may only ever see 0 and 1.
  static Tensor from_bytes(const void* data, std::size_t nbytes, DType dtype, Shape shape,
                           Device device = Device::cpu());

  /// "[3, 4] F32 cuda:0", for messages.
  std::string description() const;

 private:
  void check_host_type(DType requested, const char* what) const;

  Buffer buffer_;
  Shape shape_;
};

// ---- factories ----
Tensor empty(Shape shape, DType dtype = DType::F32, Device device = Device::cpu());
Tensor zeros(Shape shape, DType dtype = DType::F32, Device device = Device::cpu());
/// An I32/I64 fill checks the value's range, as PyTorch: InvalidArgument "value ... cannot be
/// converted to type I64 without overflow" for NaN or a value outside the dtype (a float
/// truncates toward zero). Float dtypes round as a cast does.
Tensor full(Shape shape, Scalar value, DType dtype = DType::F32, Device device = Device::cpu());
/// [start, end) in steps of `step`, as a 1-D tensor. A step whose sign walks away from `end`
/// is InvalidArgument, as torch.arange ("upper bound and lower bound inconsistent with step
/// sign"); start == end is empty.
Tensor arange(double start, double end, double step = 1, DType dtype = DType::F32,
              Device device = Device::cpu());
Tensor arange(std::int64_t n, DType dtype = DType::I64, Device device = Device::cpu());

template <class T>
Tensor from_vector(const std::vector<T>& values, Shape shape, Device device = Device::cpu()) {
  return Tensor::from_bytes(values.data(), values.size() * sizeof(T), dtype_of<T>, std::move(shape), device);
}
/// std::vector<bool> packs bits, so it has its own overload.
Tensor from_vector(const std::vector<bool>& values, Shape shape, Device device = Device::cpu());

// ---- template members ----
template <class T>
std::vector<T> Tensor::to_vector() const {
  check_host_type(dtype_of<T>, "to_vector");
  // Another dtype: copied to the host first, so the cast runs there (one copy of numel()
  // elements either way) and never touches the tensor's own device.
  if (dtype_of<T> != dtype()) return to(Device::cpu()).to(dtype_of<T>).template to_vector<T>();
  const std::vector<std::uint8_t> bytes = to_bytes();
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<bool> out(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) out[i] = bytes[i] != 0;
    return out;
  } else {
    std::vector<T> out(static_cast<std::size_t>(numel()));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
}

template <class T>
T Tensor::item() const {
  FERRITE_CHECK(defined(), InvalidArgument, "item: tensor is undefined");
  FERRITE_CHECK(numel() == 1, InvalidArgument, "item: tensor ", description(), " has ", numel(),
                " elements, expected exactly 1");
  return to_vector<T>()[0];
}

}  // namespace ferrite
