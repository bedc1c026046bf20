// Single-precision GEMM (F32, and F16/BF16 widened to float by cpu_matmul_ops.cpp).
#include "cpu/matmul/eigen_gemm_impl.hpp"

namespace ferrite::cpu {

void eigen_gemm(const EigenGemmShape& s, const GemmTile& t, const float* a, const float* b, float* c, float alpha,
                float beta) {
  detail::eigen_gemm_impl<float>(s, t, a, b, c, alpha, beta);
}

}  // namespace ferrite::cpu
