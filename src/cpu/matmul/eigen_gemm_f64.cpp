// Double-precision GEMM.
#include "cpu/matmul/eigen_gemm_impl.hpp"

namespace ferrite::cpu {

void eigen_gemm(const EigenGemmShape& s, const GemmTile& t, const double* a, const double* b, double* c, double alpha,
                double beta) {
  detail::eigen_gemm_impl<double>(s, t, a, b, c, alpha, beta);
}

}  // namespace ferrite::cpu
