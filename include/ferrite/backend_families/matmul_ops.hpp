// The backend interface of the matrix products.
// A backend hands it out through Backend's accessor; each backend implements it in its
// own files (src/cpu/matmul/, src/cuda/matmul/). Like Backend, it receives validated, contiguous
// Buffers from the front end and may only assert.
#pragma once

#include <array>
#include <cstdint>

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"

namespace ferrite {

inline constexpr int kMaxGemmBatchDims = 8;

/// One (batched) row-major product C = alpha * op(A) * op(B) + beta * C, the whole
/// matrix-product family (matmul, bmm, broadcast batches, dot, mv, vm) in one descriptor.
///
/// Per batch element, A is [m, k] row-major, or [k, m] when transpose_a (A is stored
/// transposed); B is [k, n], or [n, k] when transpose_b (a Linear layer's weight); C is
/// [m, n] row-major. The batch is an index space of `batch_rank` dims (outermost first) with
/// element strides per operand; a stride of 0 means the operand is broadcast along that dim
/// (never materialised). C is contiguous: its strides are the row-major ones of
/// batch_sizes x [m, n]. The front end merges batch dims that are contiguous for every
/// operand, so bmm arrives with rank 1 and a plain 2-D product with rank 0.
struct GemmDesc {
  DType input = DType::F32;   // dtype of A and B
  DType output = DType::F32;  // dtype of C: the input's, or F32 for F16/BF16 inputs
  std::int64_t m = 0, n = 0, k = 0;
  bool transpose_a = false;
  bool transpose_b = false;
  /// F32 only: the backend may round A and B to TF32 (CUDA tensor cores). A permission,
  /// not a request: the CPU backend computes in full F32 regardless.
  bool allow_tf32 = false;
  double alpha = 1;
  /// 0: C is write-only (never read, so NaN garbage in it does not propagate), as in BLAS.
  double beta = 0;
  int batch_rank = 0;
  std::array<std::int64_t, kMaxGemmBatchDims> batch_sizes{};
  std::array<std::int64_t, kMaxGemmBatchDims> stride_a{}, stride_b{}, stride_c{};

  std::int64_t batch_count() const {
    std::int64_t count = 1;
    for (int i = 0; i < batch_rank; ++i) count *= batch_sizes[static_cast<std::size_t>(i)];
    return count;
  }
};

class MatmulOps {
 public:
  virtual ~MatmulOps() = default;
  /// Whether `op` (of this group) runs for `dtype` (the inputs' dtype) on this backend.
  virtual bool supports(Op op, DType dtype) const = 0;
  /// Runs `desc` on a, b and c (all on this backend's device; c already allocated).
  /// k == 0 gives C = beta * C (zeros when beta == 0); m, n or batch 0 do nothing.
  virtual void gemm(const GemmDesc& desc, const Buffer& a, const Buffer& b, const Buffer& c) = 0;
  /// gemm plus a bias (nn::linear, torch.addmm): C = op(A)·op(B) + bias, where `bias` holds n
  /// elements (its own dtype: the operands' before any compute rounding) added to every row of
  /// every C matrix in the accumulation precision, then rounded once to desc.output. desc has
  /// alpha = 1, beta = 0 and m, n, k, batch all >= 1; bias is 16-byte aligned.
  /// Returns false, having enqueued nothing, when this backend has no fused form for `desc`:
  /// the front end then fills C with the broadcast bias and runs gemm() with beta = 1, which
  /// gives the same single rounding in two passes. The default fuses nothing.
  virtual bool gemm_bias(const GemmDesc& /*desc*/, const Buffer& /*a*/, const Buffer& /*b*/,
                         const Buffer& /*bias*/, const Buffer& /*c*/) {
    return false;
  }
  /// gemm_bias with a residual (nn::linear's LinearOptions::residual): D = op(A)·op(B) + bias
  /// + R, the product, the bias (when `bias` is not null) and R summed in the accumulation
  /// precision and rounded once to desc.output. R (`residual`) has D's dtype and D's dense
  /// [m, n] layout; it is either D itself (accumulated in place) or a buffer sharing no memory
  /// with D, and is only read. desc has alpha = 1, beta = 1 (R's factor), batch_rank 0 (the
  /// front end folds linear's batch into m) and m, n, k all >= 1; bias and R are 16-byte
  /// aligned. Returns false, having enqueued nothing, when this backend has no fused form for
  /// this call: the front end then copies R into D, adds the bias and runs gemm() with
  /// beta = 1. The default fuses nothing.
  virtual bool gemm_residual(const GemmDesc& /*desc*/, const Buffer& /*a*/, const Buffer& /*b*/,
                             const Buffer* /*bias*/, const Buffer& /*residual*/, const Buffer& /*d*/) {
    return false;
  }
};

}  // namespace ferrite
