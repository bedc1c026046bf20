// The body shared by eigen_gemm_f32.cpp and eigen_gemm_f64.cpp (each instantiates it once).
// Row-major buffers are mapped, never copied; a transposed operand is the same map with
// .transpose(), which Eigen's GEMM absorbs into its packing (no copy either).
#pragma once

#include <Eigen/Core>

#include "cpu/matmul/eigen_gemm.hpp"

namespace ferrite::cpu::detail {

template <class T>
using RowMajorMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <class T>
using RowMajorOut = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <class T, class Lhs, class Rhs>
void accumulate(RowMajorOut<T>& c, const Lhs& a, const Rhs& b, T alpha, T beta) {
  if (beta == T(0)) {
    c.noalias() = alpha * a * b;  // BLAS rule: C is not read when beta is 0
  } else {
    if (beta != T(1)) c *= beta;
    c.noalias() += alpha * a * b;
  }
}

template <class T>
void eigen_gemm_impl(const EigenGemmShape& s, const T* a, const T* b, T* c, T alpha, T beta) {
  RowMajorOut<T> out(c, s.m, s.n);
  const RowMajorMap<T> a_plain(a, s.transpose_a ? s.k : s.m, s.transpose_a ? s.m : s.k);
  const RowMajorMap<T> b_plain(b, s.transpose_b ? s.n : s.k, s.transpose_b ? s.k : s.n);
  if (!s.transpose_a && !s.transpose_b) accumulate(out, a_plain, b_plain, alpha, beta);
  else if (!s.transpose_a && s.transpose_b) accumulate(out, a_plain, b_plain.transpose(), alpha, beta);
  else if (s.transpose_a && !s.transpose_b) accumulate(out, a_plain.transpose(), b_plain, alpha, beta);
  else accumulate(out, a_plain.transpose(), b_plain.transpose(), alpha, beta);
}

}  // namespace ferrite::cpu::detail
