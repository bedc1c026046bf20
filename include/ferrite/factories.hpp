// Factories beyond empty/zeros/full/arange/from_vector (tensor.hpp), with PyTorch's names and
// semantics: ones, the *_like family, eye, linspace, logspace, arange's dtype inference,
// from_blob, and tensor({...}) from initializer lists.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "ferrite/tensor.hpp"

namespace ferrite {

/// torch.arange's dtype inference: integer start, end and step give I64 (`arange(0, 5)`), any
/// floating one F32 (`arange(0, 1, 0.25)`). Pass a DType to the double overload (tensor.hpp)
/// to choose another.
template <class A, class B, class C = std::int64_t,
          class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && std::is_arithmetic_v<C>>>
Tensor arange(A start, B end, C step = 1, Device device = Device::cpu()) {
  constexpr bool integral = std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<C>;
  return arange(static_cast<double>(start), static_cast<double>(end), static_cast<double>(step),
                integral ? DType::I64 : DType::F32, device);
}

/// Wraps memory the caller owns as a tensor, without a copy (torch.from_blob): `data` holds
/// elements of `dtype` on `device` (host memory for Device::cpu(), device memory of that GPU
/// for Device::cuda(i)), laid out with `strides` (row-major when omitted). The memory must stay
/// valid until the last tensor sharing it is gone; `deleter`, when given, is called with
/// `data` then. Ops treat it like any tensor (in-place ops write into it).
Tensor from_blob(void* data, Shape shape, DType dtype, Device device = Device::cpu(),
                 std::function<void(void*)> deleter = {});
Tensor from_blob(void* data, Shape shape, Strides strides, DType dtype, Device device = Device::cpu(),
                 std::function<void(void*)> deleter = {});

Tensor ones(Shape shape, DType dtype = DType::F32, Device device = Device::cpu());

/// x's shape, dtype and device (or the dtype given); x must be defined.
Tensor empty_like(const Tensor& x);
Tensor empty_like(const Tensor& x, DType dtype);
Tensor zeros_like(const Tensor& x);
Tensor zeros_like(const Tensor& x, DType dtype);
Tensor ones_like(const Tensor& x);
Tensor ones_like(const Tensor& x, DType dtype);
/// The value follows full()'s rules (an integer dtype refuses values it cannot hold).
Tensor full_like(const Tensor& x, Scalar value);
Tensor full_like(const Tensor& x, Scalar value, DType dtype);

/// torch.eye: an [n, m] tensor with ones on the main diagonal (m = n when negative, as
/// torch's m=None). n or m below zero otherwise is InvalidArgument.
Tensor eye(std::int64_t n, std::int64_t m = -1, DType dtype = DType::F32, Device device = Device::cpu());

/// torch.linspace: `steps` values from start to end inclusive, with torch's formula (the
/// first half counted up from start, the second half down from end, so both ends are exact):
/// step = (end - start) / (steps - 1) in the dtype's arithmetic (double for integer dtypes,
/// whose start and end are truncated to integers first, as torch's Scalar conversion does).
/// steps 0 gives an empty tensor, steps 1 gives [start]; steps < 0 is InvalidArgument.
/// Real dtypes (F32, F64, F16, BF16, I32, I64).
Tensor linspace(double start, double end, std::int64_t steps, DType dtype = DType::F32,
                Device device = Device::cpu());
/// torch.logspace: base ** linspace(start, end, steps), each power taken in double
/// (std::pow) and rounded once to the dtype; integer dtypes refuse a power they cannot hold.
Tensor logspace(double start, double end, std::int64_t steps, double base = 10.0, DType dtype = DType::F32,
                Device device = Device::cpu());

namespace detail {
/// The dtype tensor({...}) gives a C++ element type: its own for float, double, Half,
/// BFloat16, bool and complex; I32 or I64 for a signed integer of 4 or 8 bytes.
template <class T>
constexpr DType deduced_dtype() {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && !std::is_same_v<T, bool>) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "tensor({...}): integer elements must be 32 or 64 bits");
    return sizeof(T) == 4 ? DType::I32 : DType::I64;
  } else {
    return dtype_of<T>;  // a compile error for a type without a dtype (unsigned, char, ...)
  }
}
template <class T>
Tensor tensor_from(const std::vector<T>& values, Shape shape, Device device) {
  constexpr DType dtype = deduced_dtype<T>();
  if constexpr (std::is_same_v<T, bool>) {
    return from_vector(std::vector<bool>(values.begin(), values.end()), std::move(shape), device);
  } else {
    // A 4- or 8-byte signed integer has the bytes of int32_t/int64_t.
    return Tensor::from_bytes(values.data(), values.size() * sizeof(T), dtype, std::move(shape), device);
  }
}
}  // namespace detail

/// A 1-D tensor of the values, its dtype from the C++ element type (tensor({1.f, 2.f}) is
/// F32, tensor({1.0, 2.0}) F64, tensor({1, 2}) I32, tensor({true, false}) Bool). Built on
/// the host and copied to `device`, as torch::tensor(...).to(device) does.
template <class T>
Tensor tensor(std::initializer_list<T> values, Device device = Device::cpu()) {
  std::vector<T> v(values.begin(), values.end());
  return detail::tensor_from(v, {static_cast<std::int64_t>(v.size())}, device);
}
/// A 2-D tensor from rows of equal length (ShapeMismatch otherwise).
template <class T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows, Device device = Device::cpu()) {
  std::vector<T> v;
  const std::size_t cols = rows.size() ? rows.begin()->size() : 0;
  std::int64_t r = 0;
  for (const auto& row : rows) {
    FERRITE_CHECK(row.size() == cols, ShapeMismatch, "tensor: row ", r, " has ", row.size(),
                  " elements but row 0 has ", cols, " (rows must have equal lengths)");
    v.insert(v.end(), row.begin(), row.end());
    ++r;
  }
  return detail::tensor_from(v, {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(cols)}, device);
}
/// A rank-0 tensor holding `value`, with the same dtype rule.
template <class T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>,
                                    int> = 0>
Tensor tensor(T value, Device device = Device::cpu()) {
  return detail::tensor_from(std::vector<T>{value}, {}, device);
}

}  // namespace ferrite
