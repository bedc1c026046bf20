// Tensor: shared storage plus shape, strides and a storage offset (in elements), as in
// PyTorch. View ops (slice, select, transpose, expand, ...) return tensors that share the
// storage; ops read a strided tensor directly where their kernels take strides (elementwise
// ops, casts, copies; reductions of a transposed or permuted dense tensor, as its dense
// block) and through one dense copy otherwise (buffer()); results are contiguous.
// docs/api.md lists the views and what each op does with them.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
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
/// Element strides, one per dim (PyTorch's Tensor.stride()).
using Strides = std::vector<std::int64_t>;

/// "[3, 4]".
std::string shape_str(const Shape& shape);
/// Product of the dims (1 for rank 0). Throws InvalidArgument on a negative dim, or when the
/// product of the non-zero dims does not fit in an int64 (the shape rule, whatever the order
/// of the dims: docs/families/shape.md).
std::int64_t shape_numel(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  /// A contiguous tensor over `buffer`'s elements (its offset included); the shape's numel
  /// must equal the buffer's.
  Tensor(Buffer buffer, Shape shape);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const;
  const Shape& shape() const { return shape_; }
  /// Element strides (row-major ones for a contiguous tensor).
  const Strides& strides() const { return strides_; }
  /// Stride of dim `d`; negative d counts from the end.
  std::int64_t stride(std::int64_t d) const;
  /// Elements of dtype() between the storage's start and the first element.
  std::int64_t storage_offset() const { return offset_; }
  std::int64_t dim() const { return static_cast<std::int64_t>(shape_.size()); }
  /// Extent of dim `d`; negative d counts from the end.
  std::int64_t size(std::int64_t d) const;
  std::int64_t numel() const { return numel_; }
  std::size_t element_size() const { return dtype_size(dtype()); }
  /// Bytes of the elements (numel * element size), not of the storage.
  std::size_t nbytes() const { return static_cast<std::size_t>(numel_) * element_size(); }
  /// Whether the elements lie in row-major order with no gaps (PyTorch's rule: dims of
  /// size 1 may have any stride).
  bool is_contiguous() const { return contiguous_; }
  /// The storage this tensor views (shared by every view of it).
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  /// The elements in row-major order as one dense Buffer whose first element is 16-byte
  /// aligned: the storage window itself when the tensor is contiguous and aligned, else a
  /// contiguous copy made on the tensor's device (so no result depends on where a view starts
  /// in its storage). This is the one step through which ops whose kernels need dense input
  /// receive a strided tensor;
  /// bind the result once (each call on a strided tensor copies again). Never write through
  /// it: for a strided tensor the writes would land in the copy (in-place ops use
  /// contiguous() and copy_()).
  Buffer buffer() const;
  /// Pointer to the first element (storage offset applied). For a strided tensor the
  /// elements are not dense from here: use strides().
  const void* data_ptr() const;
  void* mutable_data_ptr() const;

  /// Copy to another device (pinned-staged for host <-> GPU); the copy is contiguous.
  /// Same device: the same tensor (shares storage).
  Tensor to(Device device) const;
  /// Element-wise conversion (NaN and out-of-range rules: docs/architecture.md).
  /// Same dtype: the same tensor (shares storage).
  Tensor to(DType dtype) const;
  /// A new contiguous tensor on the same device with the same values.
  Tensor clone() const;
  /// This tensor when it is contiguous, else a contiguous copy.
  Tensor contiguous() const;
  /// The same elements in a new shape (one dim may be -1): a view when the strides allow it
  /// (always for a contiguous tensor), else a copy, as torch.reshape.
  Tensor reshape(Shape shape) const;

  // ---- views: share the storage, as in PyTorch (docs/api.md) ----
  /// A view in a new shape; ShapeMismatch when the strides cannot express it (use reshape).
  Tensor view(Shape shape) const;
  /// Elements start, start + step, ... < end along `dim` (PyTorch's x[..., start:end:step]);
  /// start and end are clamped to [0, size] after negative values count from the end; step > 0.
  Tensor slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) const;
  /// `length` elements from `start` along `dim` (torch.narrow; start may be negative).
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  /// The sub-tensor at `index` of `dim`, which is removed (index may be negative).
  Tensor select(std::int64_t dim, std::int64_t index) const;
  /// A size-1 dim inserted at `dim` in [-(rank + 1), rank].
  Tensor unsqueeze(std::int64_t dim) const;
  /// Every size-1 dim removed.
  Tensor squeeze() const;
  /// `dim` removed when its size is 1 (else the same shape, as PyTorch).
  Tensor squeeze(std::int64_t dim) const;
  /// Dims start..end merged into one (a view when possible, else a copy, as torch.flatten).
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  /// `dim` split into `sizes` (one may be -1).
  Tensor unflatten(std::int64_t dim, Shape sizes) const;
  /// Size-1 dims repeated to `shape` with stride 0 (-1 keeps a dim; new leading dims may be
  /// added). The result must not be written in place (its elements overlap).
  Tensor expand(Shape shape) const;
  /// Dims d0 and d1 swapped.
  Tensor transpose(std::int64_t d0, std::int64_t d1) const;
  /// out.shape[k] = shape[dims[k]].
  Tensor permute(const std::vector<std::int64_t>& dims) const;
  /// transpose(0, 1) of a tensor of rank <= 2 (rank 0 and 1 unchanged), as torch.t.
  Tensor t() const;
  /// The last two dims swapped (rank >= 2), as Tensor.mT.
  Tensor mT() const;
  /// The diagonal of dims d1 and d2 (above it for offset > 0) as the last dim.
  Tensor diagonal(std::int64_t offset = 0, std::int64_t d1 = 0, std::int64_t d2 = 1) const;
  /// Windows of `size` elements every `step` along `dim`, as a new last dim (Tensor.unfold).
  Tensor unfold(std::int64_t dim, std::int64_t size, std::int64_t step) const;
  /// Any view of the storage: element i is storage[offset + sum_k i_k * strides[k]]. Strides
  /// must be >= 0 and every addressed element inside the storage (IndexOutOfRange otherwise).
  Tensor as_strided(Shape shape, Strides strides, std::int64_t storage_offset) const;
  /// as_strided with this tensor's storage offset.
  Tensor as_strided(Shape shape, Strides strides) const { return as_strided(std::move(shape), std::move(strides), offset_); }

  // ---- in place (ferrite/inplace.hpp has the rules): write through this tensor's strides ----
  const Tensor& copy_(const Tensor& src) const;
  const Tensor& fill_(Scalar value) const;
  const Tensor& zero_() const;
  const Tensor& add_(const Tensor& other) const;
  const Tensor& add_(Scalar other) const;
  const Tensor& sub_(const Tensor& other) const;
  const Tensor& sub_(Scalar other) const;
  const Tensor& mul_(const Tensor& other) const;
  const Tensor& mul_(Scalar other) const;
  const Tensor& div_(const Tensor& other) const;
  const Tensor& div_(Scalar other) const;
  const Tensor& clamp_(std::optional<double> lo, std::optional<double> hi) const;
  const Tensor& masked_fill_(const Tensor& mask, Scalar value) const;

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

  /// Raw little-endian element bytes (nbytes() of them, row-major), copied to the host.
  std::vector<std::uint8_t> to_bytes() const;
  /// A tensor of `dtype` and `shape` on `device` made from the host bytes at `data`;
  /// `nbytes` must equal numel * element size. Bool bytes are normalised: any nonzero byte
  /// becomes 1 (true), as the ops may only ever see 0 and 1.
  static Tensor from_bytes(const void* data, std::size_t nbytes, DType dtype, Shape shape,
                           Device device = Device::cpu());

  /// "[3, 4] F32 cuda:0", for messages.
  std::string description() const;

 private:
  // A view of `storage` (already checked by the caller).
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides, std::int64_t offset);
  void check_host_type(DType requested, const char* what) const;
  // The storage window of a contiguous tensor, at any alignment (for byte copies).
  Buffer window() const;
  Tensor view_as(const char* op, Shape shape, Strides strides, std::int64_t offset) const;

  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::F32;
  Shape shape_;
  Strides strides_;
  std::int64_t offset_ = 0;
  std::int64_t numel_ = 0;
  bool contiguous_ = true;
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
