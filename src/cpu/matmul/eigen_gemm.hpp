// One row-major product per call, through Eigen's blocked, multi-threaded GEMM:
//   C[m, n] = alpha * op(A) * op(B) + beta * C
// A is [m, k] (or [k, m] when transpose_a), B is [k, n] (or [n, k] when transpose_b).
// beta == 0 never reads C. Each scalar type lives in its own translation unit, because
// Eigen's GEMM instantiations are heavy to compile (design §5).
#pragma once

#include <cstdint>

namespace ferrite::cpu {

struct EigenGemmShape {
  std::int64_t m, n, k;
  bool transpose_a, transpose_b;
};

void eigen_gemm(const EigenGemmShape& s, const float* a, const float* b, float* c, float alpha, float beta);
void eigen_gemm(const EigenGemmShape& s, const double* a, const double* b, double* c, double alpha, double beta);

}  // namespace ferrite::cpu
