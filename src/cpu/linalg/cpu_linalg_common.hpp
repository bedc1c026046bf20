// Shared helpers of the CPU linear-algebra files: column-major (and row-major) Eigen maps, the dtype
// switch, and the OpenMP loop over the matrices of a batch.
#pragma once

#include <Eigen/Dense>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <new>

#include "ferrite/backend_families/linalg_ops.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cpu::linalg {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <class T>
using MatMap = Eigen::Map<Mat<T>>;
// The row-major matrices that cholesky and eigh receive (linalg_ops.hpp).
template <class T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using RowMap = Eigen::Map<RowMat<T>>;
template <class T>
using ConstRowMap = Eigen::Map<const RowMat<T>>;
template <class T>
using Real = typename Eigen::NumTraits<T>::Real;
template <class T>
using Complex = std::complex<Real<T>>;

/// NaN in every element of p[0, count) (complex: NaN real and imaginary parts): the outputs
/// of a matrix whose input holds a non-finite value (it never reaches Eigen's iterations).
template <class T>
void fill_nan(T* p, std::int64_t count) {
  const Real<T> nan = std::numeric_limits<Real<T>>::quiet_NaN();
  for (std::int64_t i = 0; i < count; ++i) p[i] = T(nan);
}

template <class T>
bool all_finite(const T* p, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i)
    if (!std::isfinite(std::real(p[i])) || !std::isfinite(std::imag(p[i]))) return false;
  return true;
}

/// Runs f(b) for every matrix b of the batch, spread over OpenMP threads when there is more
/// than one matrix and enough work (flops ~ size³ each). No exception may leave an OpenMP
/// region, so an allocation failure inside Eigen is recorded and thrown afterwards.
template <class F>
void for_each_matrix(const char* op, std::int64_t batch, std::int64_t size, F&& f) {
  const double work = static_cast<double>(batch) * static_cast<double>(size) * static_cast<double>(size) *
                      static_cast<double>(size);
  bool out_of_memory = false;
#pragma omp parallel for schedule(dynamic) if (batch > 1 && work >= 1e5)
  for (std::int64_t b = 0; b < batch; ++b) {
    try {
      f(b);
    } catch (const std::bad_alloc&) {
#pragma omp atomic write
      out_of_memory = true;
    }
  }
  FERRITE_CHECK(!out_of_memory, OutOfMemory, op, ": out of host memory in Eigen (batch ", batch, ", size ", size, ")");
}

/// Calls f(T{}) with T the host type of a linalg dtype (F32, F64, C64, C128).
template <class F>
void dispatch(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: f(float{}); return;
    case DType::F64: f(double{}); return;
    case DType::C64: f(std::complex<float>{}); return;
    case DType::C128: f(std::complex<double>{}); return;
    default: FERRITE_THROW(Unsupported, "linalg: dtype ", dtype_name(dtype), " is not supported on the CPU");
  }
}

}  // namespace ferrite::cpu::linalg
