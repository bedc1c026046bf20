// Matrix products: matmul, bmm, dot, mv, vm (issue #6), row-major, PyTorch semantics.
// Validation happens here (src/frontend/matmul*.cpp); backends receive checked Buffers.
//
// Dtypes: F32, F64, F16 and BF16 (half types accumulate in F32 and round once on store).
// Operands must share a dtype (never promoted: cast with .to(dtype)). Mixed precision is a
// parameter, not an op name (docs/families/matmul.md):
//   matmul(a16, b16, {.out_dtype = DType::F32})        BF16/F16 in, F32 out
//   matmul(a32, b32, {.compute = MatmulCompute::BF16})  F32 in and out through BF16 (or F16)
//   matmul(a32, b32, {.compute = MatmulCompute::TF32})  F32 on TF32 tensor cores (CUDA)
//   matmul(x, w, {.transpose_b = true})                 x·wᵀ with w stored [n, k]
#pragma once

#include <cstdint>
#include <optional>

#include "ferrite/tensor.hpp"

namespace ferrite {

/// The precision a product of F32 operands computes in. Other dtypes take only Default.
enum class MatmulCompute : std::uint8_t {
  Default,  ///< the inputs' precision; F32 may use TF32 when allow_tf32() is on
  F32,      ///< full single precision even when allow_tf32() is on
  TF32,     ///< F32 through TF32 tensor cores (CUDA; the CPU computes in full F32)
  BF16,     ///< inputs rounded to BF16, products accumulated in F32, F32 out
  F16,      ///< inputs rounded to F16, products accumulated in F32, F32 out
};

struct MatmulOptions {
  /// The last two dims of `a` hold Aᵀ: a is [..., k, m] and the product uses its transpose.
  bool transpose_a = false;
  /// The last two dims of `b` hold Bᵀ: b is [..., n, k] (a Linear weight); A·Bᵀ.
  bool transpose_b = false;
  /// The result's dtype: the inputs' (default) or F32 for F16/BF16 inputs.
  std::optional<DType> out_dtype = std::nullopt;
  MatmulCompute compute = MatmulCompute::Default;
};

/// torch.matmul: 1-D x 1-D is a dot product (0-d result); 2-D x 2-D a matrix product;
/// a 1-D operand gets a 1 prepended (left) or appended (right) that is removed again; ≥ 3-D
/// operands broadcast their batch dims NumPy-style ([2, 1, m, k] x [3, k, n] -> [2, 3, m, n]).
/// Transpose flags apply to operands of rank ≥ 2 (a vector is its own transpose).
Tensor matmul(const Tensor& a, const Tensor& b, const MatmulOptions& options = {});
/// out = alpha * matmul(a, b) + beta * out. `out` must have matmul's result shape, dtype and
/// device and must not overlap a or b. beta == 0 never reads out (NaN in it is overwritten).
/// Returns out.
const Tensor& matmul_out(const Tensor& out, const Tensor& a, const Tensor& b, double alpha = 1, double beta = 0,
                         const MatmulOptions& options = {});
/// torch.mm: matmul restricted to two 2-D operands, [m, k] x [k, n] -> [m, n] (InvalidArgument
/// for any other rank, where matmul would broadcast or take vectors).
Tensor mm(const Tensor& a, const Tensor& b, const MatmulOptions& options = {});
/// Batched product of 3-D operands with equal batch: [b, m, k] x [b, k, n] -> [b, m, n].
Tensor bmm(const Tensor& a, const Tensor& b, const MatmulOptions& options = {});
/// Σ a[i]·b[i] of two 1-D tensors of equal length: a 0-d tensor on their device.
Tensor dot(const Tensor& a, const Tensor& b, const MatmulOptions& options = {});
/// [m, k] x [k] -> [m].
Tensor mv(const Tensor& a, const Tensor& x, const MatmulOptions& options = {});
/// [k] x [k, n] -> [n].
Tensor vm(const Tensor& x, const Tensor& b, const MatmulOptions& options = {});

/// Process-wide permission for F32 products with MatmulCompute::Default to use TF32 (off
/// by default, as torch.backends.cuda.matmul.allow_tf32). Thread-safe.
void set_allow_tf32(bool allow);
bool allow_tf32();

}  // namespace ferrite
