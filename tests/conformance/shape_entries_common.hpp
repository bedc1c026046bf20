// Helpers of the shape and indexing conformance entries (shape_entries.cpp,
// index_entries.cpp): host references that move raw element bytes by plain row-major index
// arithmetic (written apart from both backends), index tensors with negative and duplicate
// values, and an error-case wrapper that checks an in-place destination was left untouched.
#pragma once

#include <cstring>
#include <vector>

#include "conformance/conformance.hpp"

namespace ferrite::conformance::shape_test {

/// The element dtypes every data-movement entry runs: one per element size (1, 2, 4, 8, 16
/// bytes), Bool and the complex types.
inline const std::vector<DType> kMovementDTypes = {DType::Bool, DType::F16, DType::F32, DType::I64, DType::C64,
                                                   DType::C128};
/// The dtypes of the adding ops.
inline const std::vector<DType> kAddDTypes = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64};

/// An entry of a data-movement op: every element size, compared bit for bit.
inline Entry movement_entry(std::string op) {
  Entry e;
  e.op = std::move(op);
  e.dtypes = kMovementDTypes;
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  return e;
}

/// A host tensor as raw bytes.
struct Raw {
  std::vector<std::uint8_t> bytes;
  std::size_t esize;
  Shape shape;
  DType dtype;
  explicit Raw(const Tensor& t)
      : bytes(t.to(Device::cpu()).to_bytes()), esize(dtype_size(t.dtype())), shape(t.shape()), dtype(t.dtype()) {}
  Raw(Shape s, DType d)
      : bytes(static_cast<std::size_t>(shape_numel(s)) * dtype_size(d)), esize(dtype_size(d)), shape(s), dtype(d) {}
  const std::uint8_t* at(std::int64_t i) const { return bytes.data() + static_cast<std::size_t>(i) * esize; }
  std::uint8_t* at(std::int64_t i) { return bytes.data() + static_cast<std::size_t>(i) * esize; }
  void set(std::int64_t i, const std::uint8_t* from) { std::memcpy(at(i), from, esize); }
  Tensor tensor() const { return Tensor::from_bytes(bytes.data(), bytes.size(), dtype, shape); }
};

/// Multi-index of row-major element `flat` of `shape`.
inline std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    idx[k] = flat % shape[k];
    flat /= shape[k];
  }
  return idx;
}
/// Row-major element number of `idx` in `shape`.
inline std::int64_t ravel(const std::vector<std::int64_t>& idx, const Shape& shape) {
  std::int64_t flat = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) flat = flat * shape[k] + idx[k];
  return flat;
}

/// Index values in [-size, size) of `dtype` (I32/I64), uniformly: negatives and, for small
/// sizes, duplicates come naturally. (Out-of-range values are the error cases' business.)
inline Tensor random_index(Shape shape, std::int64_t size, DType dtype, Rng& rng) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(shape_numel(shape)));
  for (auto& x : v) x = size == 0 ? 0 : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(2 * size)) - size;
  return from_vector(v, std::move(shape)).to(dtype);
}
inline std::vector<std::int64_t> index_values(const Tensor& index) {
  return index.to(Device::cpu()).to(DType::I64).to_vector<std::int64_t>();
}
inline std::int64_t wrap(std::int64_t v, std::int64_t size) { return v < 0 ? v + size : v; }

/// Runs `call`, which must throw; rethrows its error unless `dst` changed, in which case it
/// throws an error of another kind (so the expected-kind check fails).
template <class F>
void expect_untouched(const Tensor& dst, F&& call) {
  const std::vector<std::uint8_t> before = dst.to_bytes();
  try {
    call();
  } catch (const Error&) {
    if (dst.to_bytes() != before) FERRITE_THROW(Numerical, "the destination was modified by a failing call");
    throw;
  }
}

}  // namespace ferrite::conformance::shape_test
