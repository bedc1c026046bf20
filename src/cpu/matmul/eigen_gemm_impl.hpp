// The body shared by eigen_gemm_f32.cpp and eigen_gemm_f64.cpp (each instantiates it once).
// Row-major buffers are mapped, never copied; a transposed operand is the same map with
// .transpose(), and a tile is a block of those maps, all absorbed by Eigen's packing.
#pragma once

// Single-threaded Eigen (see eigen_gemm.hpp): these two translation units are the only ones
// that include Eigen, so the setting is the same for every instantiation.
#ifndef EIGEN_DONT_PARALLELIZE
#define EIGEN_DONT_PARALLELIZE
#endif
#include <Eigen/Core>

#include "cpu/matmul/eigen_gemm.hpp"

namespace ferrite::cpu::detail {

template <class T>
using RowMajorMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <class T>
using RowMajorOut = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <class T, class Out, class Lhs, class Rhs>
void accumulate(Out&& c, const Lhs& a, const Rhs& b, T alpha, T beta) {
  if (beta == T(0)) {
    c.noalias() = alpha * a * b;  // BLAS rule: C is not read when beta is 0
  } else {
    if (beta != T(1)) c *= beta;
    c.noalias() += alpha * a * b;
  }
}

template <class T>
void eigen_gemm_impl(const EigenGemmShape& s, const GemmTile& t, const T* a, const T* b, T* c, T alpha, T beta) {
  RowMajorOut<T> out(c, s.m, s.n);
  auto tile = out.block(t.row, t.col, t.rows, t.cols);
  const RowMajorMap<T> a_plain(a, s.transpose_a ? s.k : s.m, s.transpose_a ? s.m : s.k);
  const RowMajorMap<T> b_plain(b, s.transpose_b ? s.n : s.k, s.transpose_b ? s.k : s.n);
  // Rows [row, row + rows) of op(A) and columns [col, col + cols) of op(B).
  const auto a_rows = a_plain.middleRows(t.row, t.rows);
  const auto a_cols = a_plain.middleCols(t.row, t.rows);
  const auto b_cols = b_plain.middleCols(t.col, t.cols);
  const auto b_rows = b_plain.middleRows(t.col, t.cols);
  if (!s.transpose_a && !s.transpose_b) accumulate(tile, a_rows, b_cols, alpha, beta);
  else if (!s.transpose_a && s.transpose_b) accumulate(tile, a_rows, b_rows.transpose(), alpha, beta);
  else if (s.transpose_a && !s.transpose_b) accumulate(tile, a_cols.transpose(), b_cols, alpha, beta);
  else accumulate(tile, a_cols.transpose(), b_rows.transpose(), alpha, beta);
}

}  // namespace ferrite::cpu::detail
