// The CUDA backend's matrix products. Every product is one strided-batched GEMM per
// combination of the outer batch dims (cublaslt_gemm.cpp): the innermost batch dim runs
// inside cuBLASLt, with a zero stride for an operand broadcast along it, and the outer
// dims (only left after merging when both operands broadcast, as in
// [b1, 1, m, k] x [1, b2, k, n]) are a host loop over pointer offsets. Nothing is copied.
// nn::linear's bias rides in the same GEMM through cuBLASLt's bias epilogue (gemm_bias), and
// its residual as cuBLASLt's C matrix, read from a buffer other than the output D
// (gemm_residual).
#include <climits>
#include <cstdint>

#include "core/op_support.hpp"
#include "cuda/cuda_families.hpp"
#include "cuda/matmul/matmul_kernels.cuh"
#include "cuda/matmul/strided_gemm.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda {
namespace {

// The part of a StridedGemm that is the same for every batch element.
StridedGemm unbatched(const GemmDesc& d) {
  StridedGemm g;
  g.input = d.input;
  g.output = d.output;
  g.m = d.m;
  g.n = d.n;
  g.k = d.k;
  g.transpose_a = d.transpose_a;
  g.transpose_b = d.transpose_b;
  g.allow_tf32 = d.allow_tf32;
  g.alpha = d.alpha;
  g.beta = d.beta;
  return g;
}

class CudaMatmulOps final : public MatmulOps {
 public:
  bool supports(Op op, DType dtype) const override { return detail::matmul_supported(op, dtype); }

  void gemm(const GemmDesc& d, const Buffer& a, const Buffer& b, const Buffer& c) override {
    const std::int64_t count = d.batch_count();
    if (d.m == 0 || d.n == 0 || count == 0) return;
    const int device = c.device().index;
    DeviceGuard guard(device);
    DeviceContext& ctx = DeviceContext::get(device);
    const cudaStream_t stream = ctx.current_stream();
    if (d.k == 0) {  // cuBLAS(Lt) wants k >= 1; the product is empty, so C = beta * C
      kernels::scale_gemm_output(c, d.beta, stream);
      return;
    }

    StridedGemm g = unbatched(d);
    const int inner = d.batch_rank - 1;
    if (inner >= 0) {
      const auto u = static_cast<std::size_t>(inner);
      g.batch = d.batch_sizes[u];
      g.stride_a = d.stride_a[u];
      g.stride_b = d.stride_b[u];
      g.stride_c = d.stride_c[u];
      FERRITE_CHECK(g.batch <= INT_MAX, Unsupported, "matmul: a batch of ", g.batch,
                    " products exceeds cuBLASLt's 32-bit batch count");
    }
    const std::size_t in_size = dtype_size(d.input), out_size = dtype_size(d.output);
    const auto* a_base = static_cast<const char*>(a.data());
    const auto* b_base = static_cast<const char*>(b.data());
    auto* c_base = static_cast<char*>(c.data());
    const std::int64_t outer = count / g.batch;
    for (std::int64_t i = 0; i < outer; ++i) {
      std::int64_t rest = i, off_a = 0, off_b = 0, off_c = 0;
      for (int dim = inner - 1; dim >= 0; --dim) {
        const auto u = static_cast<std::size_t>(dim);
        const std::int64_t coordinate = rest % d.batch_sizes[u];
        rest /= d.batch_sizes[u];
        off_a += coordinate * d.stride_a[u];
        off_b += coordinate * d.stride_b[u];
        off_c += coordinate * d.stride_c[u];
      }
      g.a = a_base + off_a * static_cast<std::int64_t>(in_size);
      g.b = b_base + off_b * static_cast<std::int64_t>(in_size);
      g.c = c_base + off_c * static_cast<std::int64_t>(out_size);
      strided_gemm(ctx, stream, g);
    }
  }

  // The bias fused into one cuBLASLt call (nn::linear, whose batch the front end always folds
  // into m). Not fused, so left to the front end's bias-filled output and beta = 1: batched
  // products, F64 (compute-bound on the GPU, where a separate pass over C costs little; it
  // also keeps that path exercised on every GPU), and whatever cuBLASLt has no epilogue
  // algorithm for (strided_gemm returns false before launching anything).
  bool gemm_bias(const GemmDesc& d, const Buffer& a, const Buffer& b, const Buffer& bias, const Buffer& c) override {
    if (d.beta != 0) return false;
    return fused_gemm(d, a, b, &bias, nullptr, c);
  }

  // linear's residual as cuBLASLt's C (D = A·B + C + bias, C ≠ D), so that the new residual
  // stream comes out of the GEMM directly. Not fused, under the same rules as gemm_bias (F64,
  // batches, alpha ≠ 1, unaligned bias) and wherever cuBLASLt offers no algorithm: the front
  // end then writes the residual and bias into D and accumulates onto it (beta = 1). A residual
  // that is D itself (linear_out into its residual) is passed as c_in = c too, so that it gets
  // the residual plans' candidate rule (no split-K) rather than the plain beta = 1 plans.
  bool gemm_residual(const GemmDesc& d, const Buffer& a, const Buffer& b, const Buffer* bias, const Buffer& residual,
                     const Buffer& c) override {
    if (d.beta != 1 || residual.dtype() != d.output) return false;
    return fused_gemm(d, a, b, bias, residual.data(), c);
  }

 private:
  // What gemm_bias and gemm_residual share: the rules for fusing at all (one unbatched,
  // non-empty product with alpha = 1, not F64, a 16-byte aligned bias if any) and one
  // strided_gemm with the optional bias epilogue and the optional separate C (`c_in`; null
  // reads C from `c`, which beta = 0 then ignores). Each caller checks its own beta and C.
  // Returns false, having launched nothing, where the product is not fused.
  static bool fused_gemm(const GemmDesc& d, const Buffer& a, const Buffer& b, const Buffer* bias, const void* c_in,
                         const Buffer& c) {
    if (d.batch_rank != 0 || d.input == DType::F64 || d.alpha != 1 || d.m == 0 || d.n == 0 || d.k == 0 ||
        (bias != nullptr && reinterpret_cast<std::uintptr_t>(bias->data()) % 16 != 0))
      return false;
    const int device = c.device().index;
    DeviceGuard guard(device);
    DeviceContext& ctx = DeviceContext::get(device);
    StridedGemm g = unbatched(d);
    g.a = a.data();
    g.b = b.data();
    g.c = c.data();
    g.c_in = c_in;
    if (bias != nullptr) {
      g.bias = bias->data();
      g.bias_dtype = bias->dtype();
    }
    return strided_gemm(ctx, ctx.current_stream(), g);
  }
};

}  // namespace

std::unique_ptr<MatmulOps> make_cuda_matmul_ops() { return std::make_unique<CudaMatmulOps>(); }

}  // namespace ferrite::cuda
