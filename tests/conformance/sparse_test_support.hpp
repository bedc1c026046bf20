// Helpers shared by the sparse conformance entries (sparse_entries.cpp,
// sparse_combine_entries.cpp): host values of any float or complex dtype as exact long double
// complexes, and integer-valued random matrices, so every reference sum is exact.
#pragma once

#include <complex>
#include <random>
#include <string>
#include <vector>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"

namespace ferrite::conformance::sparse_test {

using sparse::Layout;
using Value = std::complex<long double>;

inline const std::vector<DType> kValueDTypes = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::C64, DType::C128};
inline const Layout kLayouts[] = {Layout::CSR, Layout::CSC, Layout::COO};

/// Whether from_dense stores the value: x != 0, so NaN is stored and -0 is not.
inline bool is_stored(const Value& v) { return v != Value(0, 0) || std::isnan(v.real()) || std::isnan(v.imag()); }

// ---- host values of any float or complex dtype ----

inline std::vector<Value> host_values(const Tensor& t) {
  std::vector<Value> out;
  if (t.dtype() == DType::C64) {
    for (const auto& v : t.to_vector<std::complex<float>>()) out.push_back({v.real(), v.imag()});
  } else if (t.dtype() == DType::C128) {
    for (const auto& v : t.to_vector<std::complex<double>>()) out.push_back({v.real(), v.imag()});
  } else {
    for (long double v : reference::values(t)) out.push_back({v, 0});
  }
  return out;
}

inline Tensor tensor_of(const std::vector<Value>& v, const Shape& shape, DType dtype) {
  if (dtype == DType::C64 || dtype == DType::C128) {
    std::vector<std::complex<double>> c;
    for (const Value& x : v) c.push_back({static_cast<double>(x.real()), static_cast<double>(x.imag())});
    return from_vector(c, shape).to(dtype);
  }
  std::vector<long double> r;
  for (const Value& x : v) r.push_back(x.real());
  return reference::from_values(r, shape, dtype);
}

inline Tensor index_of(const std::vector<std::int64_t>& v, DType index) {
  return from_vector(v, {static_cast<std::int64_t>(v.size())}).to(index);
}

// A dense [rows, cols] matrix of small integers where a `density` fraction is nonzero (complex
// dtypes get an imaginary part too).
inline Tensor sparse_dense(std::int64_t rows, std::int64_t cols, double density, DType dtype, Rng& rng) {
  std::uniform_real_distribution<double> coin(0, 1);
  std::uniform_int_distribution<int> value(-4, 4);
  std::vector<Value> v(static_cast<std::size_t>(rows * cols));
  for (auto& x : v) {
    if (coin(rng) >= density) continue;
    const int re = value(rng);  // a stored entry is nonzero: 0 becomes 1
    x = {static_cast<long double>(re != 0 ? re : 1), static_cast<long double>(is_complex(dtype) ? value(rng) : 0)};
  }
  return tensor_of(v, {rows, cols}, dtype);
}

inline DType index_dtype(std::int64_t code) { return code == 0 ? DType::I32 : DType::I64; }

}  // namespace ferrite::conformance::sparse_test
