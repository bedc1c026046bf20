// The backend interface of the reductions, scans, softmax, log-softmax, layer and RMS norm, forward and backward (issue #4).
// A backend hands it out through Backend's accessor; each backend implements it in its
// own files (src/cpu/reduction/, src/cuda/reduction/). Like Backend, it receives validated, contiguous
// Buffers from the front end and may only assert.
//
// Every op works on a tensor viewed as [outer, dim, inner] (row-major): `dim` is the extent
// reduced, scanned or normalised; outer and inner are the products of the dims before and
// after it. Outputs of reductions are [outer, inner]. Norms take [rows, cols] (cols = dim,
// inner = 1). Optional operands (weight, bias, dweight) are undefined Buffers when absent.
#pragma once

#include <cstdint>

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"

namespace ferrite {

struct ReduceExtents {
  std::int64_t outer = 1;
  std::int64_t dim = 1;
  std::int64_t inner = 1;
  std::int64_t numel() const { return outer * dim * inner; }
};

class ReductionOps {
 public:
  virtual ~ReductionOps() = default;
  /// Whether `op` (of this group) runs for `dtype` on this backend.
  virtual bool supports(Op op, DType dtype) const = 0;

  /// Sum, Mean, Prod, Amin, Amax, Any, All over the middle extent. `out` has outer * inner
  /// elements; its dtype is the op's result dtype (I64 for integer and Bool sums and products;
  /// F32 for Sum and Mean of F16/BF16 when the caller asked for it).
  /// dim may be 0 (the op's identity; the front end rejects amin/amax there).
  virtual void reduce(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e) = 0;
  /// Argmax, Argmin: I64 indices into the middle extent (first occurrence; NaN wins). dim >= 1.
  virtual void arg_reduce(Op op, const Buffer& x, const Buffer& indices, const ReduceExtents& e) = 0;
  /// MaskedAmin, MaskedAmax: the extreme of the elements whose Bool mask (same numel as x) is
  /// true; an empty selection gives the identity (+Inf / -Inf, or the integer limits).
  virtual void masked_reduce(Op op, const Buffer& x, const Buffer& mask, const Buffer& out,
                             const ReduceExtents& e) = 0;
  /// d prod / d x: out[o, j, i] = grad[o, i] * prod_{k != j} x[o, k, i], without dividing by x.
  virtual void prod_backward(const Buffer& grad, const Buffer& x, const Buffer& out, const ReduceExtents& e) = 0;

  /// Cumsum, Cumprod, Logcumsumexp, Cummax, Cummin (inclusive) along the middle extent.
  /// `indices` (I64, same numel) is written by Cummax/Cummin only; undefined otherwise.
  virtual void scan(Op op, const Buffer& x, const Buffer& out, const Buffer& indices, const ReduceExtents& e) = 0;

  /// Softmax or LogSoftmax along the middle extent; `out` is x's dtype, or F32 for F16/BF16 x.
  virtual void softmax(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e) = 0;
  /// SoftmaxBackward or LogSoftmaxBackward from the forward output y.
  virtual void softmax_backward(Op op, const Buffer& grad, const Buffer& y, const Buffer& dx,
                                const ReduceExtents& e) = 0;

  /// y = (x - mean) * rstd * weight + bias per row; mean and rstd (F32, F64 for F64 input)
  /// have one element per row. y is x's dtype, or F16/BF16 for an F32 x (each element computed
  /// as for an F32 y, then rounded once to y's dtype).
  virtual void layer_norm(const Buffer& x, const Buffer& weight, const Buffer& bias, const Buffer& y,
                          const Buffer& mean, const Buffer& rstd, std::int64_t rows, std::int64_t cols,
                          double eps) = 0;
  /// dx always; dweight when weight is defined; dbias (the column sums of grad) always. grad is
  /// x's dtype, or F16/BF16 for an F32 x (widened as read). residual (x's dtype, F32 or F64;
  /// undefined when absent) is added to dx before its one rounding. dx_cast (F16/BF16 for an
  /// F32 x; undefined when not asked) receives each stored dx value rounded to its dtype, the
  /// bits of dx.to(dx_cast's dtype).
  virtual void layer_norm_backward(const Buffer& grad, const Buffer& x, const Buffer& mean, const Buffer& rstd,
                                   const Buffer& weight, const Buffer& residual, const Buffer& dx,
                                   const Buffer& dx_cast, const Buffer& dweight, const Buffer& dbias,
                                   std::int64_t rows, std::int64_t cols) = 0;
  /// y = x * rstd * weight, rstd = 1 / sqrt(mean(x^2) + eps) per row; y's dtype as for layer_norm.
  virtual void rms_norm(const Buffer& x, const Buffer& weight, const Buffer& y, const Buffer& rstd,
                        std::int64_t rows, std::int64_t cols, double eps) = 0;
  /// dx always; dweight when weight is defined; grad, residual and dx_cast as for
  /// layer_norm_backward.
  virtual void rms_norm_backward(const Buffer& grad, const Buffer& x, const Buffer& rstd, const Buffer& weight,
                                 const Buffer& residual, const Buffer& dx, const Buffer& dx_cast,
                                 const Buffer& dweight, std::int64_t rows, std::int64_t cols) = 0;
};

}  // namespace ferrite
