// One tile of one row-major product per call, through Eigen's blocked GEMM, single-threaded:
//   C[rows, cols] = alpha * op(A)[rows, :] * op(B)[:, cols] + beta * C[rows, cols]
// A is [m, k] (or [k, m] when transpose_a), B is [k, n] (or [n, k] when transpose_b).
// beta == 0 never reads C. Eigen's own threading is off (EIGEN_DONT_PARALLELIZE in
// eigen_gemm_impl.hpp): its blocking, and so the order of the k-sums, depends on the
// thread count, so cpu_matmul_ops.cpp parallelises over fixed tiles instead. Each scalar
// type lives in its own translation unit, because Eigen's GEMM instantiations are heavy to
// compile (design §5).
#pragma once

#include <cstdint>

namespace ferrite::cpu {

struct EigenGemmShape {
  std::int64_t m, n, k;
  bool transpose_a, transpose_b;
};

/// Rows [row, row + rows) and columns [col, col + cols) of C.
struct GemmTile {
  std::int64_t row, rows, col, cols;
};

void eigen_gemm(const EigenGemmShape& s, const GemmTile& t, const float* a, const float* b, float* c, float alpha,
                float beta);
void eigen_gemm(const EigenGemmShape& s, const GemmTile& t, const double* a, const double* b, double* c,
                double alpha, double beta);

}  // namespace ferrite::cpu
