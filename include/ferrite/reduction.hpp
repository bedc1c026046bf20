// Reductions, scans, softmax, log-softmax, layer norm and RMS norm (issue #4).
// Validation happens here (src/frontend/reduction*.cpp); backends receive checked Buffers.
//
// Semantics follow PyTorch: `dim` may be negative; keepdim keeps the reduced dim with size 1;
// integer and Bool sums and products give I64; argmax/argmin give I64 indices of the first
// occurrence (a NaN counts as the maximum and the minimum); amin/amax/argmax/argmin of an
// empty extent are errors, sum of nothing is 0, prod 1, mean NaN, any False, all True.
// Every floating op accumulates in float for F16/BF16/F32 and in double for F64.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ferrite/tensor.hpp"

namespace ferrite {

// ---- reductions over every element (rank-0 result) or along one dim ----
Tensor sum(const Tensor& x);
Tensor sum(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// Over a list of dims (torch's dim=[...]): each dim may be negative and may appear once;
/// an empty list reduces every dim, as torch.sum(x, dim=[]). One reduction over the listed
/// dims moved to the end (a copy only when they are not already the trailing dims), so the
/// result rounds once, as the single-dim op does.
Tensor sum(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim = false);
Tensor amax(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim = false);
Tensor any(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim = false);
Tensor all(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim = false);
/// torch.max(x, dim) / torch.min(x, dim): {values, I64 indices} along `dim`; the index is the
/// first occurrence of the extreme, and a NaN is both the maximum and the minimum (amax/argmax).
std::pair<Tensor, Tensor> max(const Tensor& x, std::int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// Mixed precision (PyTorch's `dtype=`): an F32 result from an F16 or BF16 input, accumulated
/// in float and never rounded to the input dtype. `dtype` equal to the plain result dtype
/// is the plain op; other combinations are Unsupported.
Tensor sum(const Tensor& x, DType dtype);
Tensor sum(const Tensor& x, std::int64_t dim, bool keepdim, DType dtype);
Tensor mean(const Tensor& x, DType dtype);
Tensor mean(const Tensor& x, std::int64_t dim, bool keepdim, DType dtype);
Tensor prod(const Tensor& x);
Tensor prod(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor amin(const Tensor& x);
Tensor amin(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& x);
Tensor amax(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// Bool only.
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// I64 index into the flattened tensor (rank 0), or along `dim`.
Tensor argmax(const Tensor& x);
Tensor argmax(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x);
Tensor argmin(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// Extreme over the elements where the Bool `mask` (shape of x) is true. An empty
/// selection gives the identity: +Inf for amin and -Inf for amax (integer dtypes: their
/// max and min), as torch.masked does, so no host round trip is needed to report it.
Tensor masked_amin(const Tensor& x, const Tensor& mask);
Tensor masked_amin(const Tensor& x, const Tensor& mask, std::int64_t dim, bool keepdim = false);
Tensor masked_amax(const Tensor& x, const Tensor& mask);
Tensor masked_amax(const Tensor& x, const Tensor& mask, std::int64_t dim, bool keepdim = false);
/// Gradient of prod(x) (one-element grad) or prod(x, dim, keepdim) (grad of its shape):
/// grad * product of the other elements, exact when x holds zeros (no division).
Tensor prod_backward(const Tensor& grad, const Tensor& x);
Tensor prod_backward(const Tensor& grad, const Tensor& x, std::int64_t dim, bool keepdim = false);

// ---- inclusive scans along a dim ----
Tensor cumsum(const Tensor& x, std::int64_t dim);
Tensor cumprod(const Tensor& x, std::int64_t dim);
/// Numerically stable: log(sum(exp)) of running values without overflow.
Tensor logcumsumexp(const Tensor& x, std::int64_t dim);
/// Running maximum / minimum and the I64 index where it was found (the last of equal
/// values, and a NaN sticks, as PyTorch).
std::pair<Tensor, Tensor> cummax(const Tensor& x, std::int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& x, std::int64_t dim);

// ---- softmax ----
Tensor softmax(const Tensor& x, std::int64_t dim = -1);
Tensor log_softmax(const Tensor& x, std::int64_t dim = -1);
/// Mixed precision (PyTorch's `dtype=`): an F32 result from an F16 or BF16 input, computed in
/// float and never rounded to the input dtype (the seed's softmax_bf16_f32).
Tensor softmax(const Tensor& x, std::int64_t dim, DType dtype);
Tensor log_softmax(const Tensor& x, std::int64_t dim, DType dtype);
/// From the forward output y: dx = y * (grad - sum(grad * y)).
Tensor softmax_backward(const Tensor& grad, const Tensor& y, std::int64_t dim = -1);
/// From the forward output y: dx = grad - exp(y) * sum(grad).
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y, std::int64_t dim = -1);

// ---- norms over the last dim ----
struct LayerNormResult {
  Tensor y;
  Tensor mean;  // x.shape without its last dim; F32 (F64 for F64 input)
  Tensor rstd;  // 1 / sqrt(biased variance + eps), same shape and dtype as mean
};
struct LayerNormGrads {
  Tensor dx;
  Tensor dweight;  // undefined when no weight was given
  Tensor dbias;    // column sums of grad (what the bias receives)
  Tensor dx_cast;  // dx.to(options.dx_cast), written by the same pass; undefined when not asked
};
struct RmsNormResult {
  Tensor y;
  Tensor rstd;  // 1 / sqrt(mean(x^2) + eps)
};
struct RmsNormGrads {
  Tensor dx;
  Tensor dweight;  // undefined when no weight was given
  Tensor dx_cast;  // dx.to(options.dx_cast), written by the same pass; undefined when not asked
};

/// Mixed-precision forward (a BF16 training step keeps its residual stream in F32 and feeds the
/// norm's output to a BF16 matmul): out_dtype F16 or BF16 for an F32 input writes y in that
/// dtype directly, each element computed in float exactly as for an F32 y and rounded once, so
/// y is bit for bit layer_norm(x, ...).y.to(out_dtype) without the F32 y ever being stored
/// (one pass less over memory). Unset or x's dtype: the ordinary call. Any other combination
/// throws (Unsupported). mean and rstd are unchanged (F32).
struct LayerNormOptions {
  std::optional<DType> out_dtype;
};
/// Mixed-precision backward, the two fusions the forward options call for:
///  * grad may be F16 or BF16 when x is F32 (the gradient of a y made with out_dtype): it is
///    widened as it is read, the same values as passing grad.to(F32); dx, dweight and dbias
///    stay in x's dtype.
///  * residual (optional; x's shape and dtype, F32 or F64 only): dx = residual + the norm's
///    input gradient, added before the single store (one rounding: F32 results are bit for bit
///    residual + layer_norm_backward(...).dx), which saves the separate add of the residual
///    stream's gradient and its pass over memory. It must not share memory with the outputs.
///  * dx_cast (optional; F16 or BF16, for an F32 x only): the pass also writes dx rounded to
///    that dtype, returned as the grads' dx_cast: bit for bit dx.to(dx_cast) (each stored F32
///    value of dx, residual included, rounded once, nearest even, NaN as .to() writes it), so
///    the next BF16 matmul's input comes without a cast that re-reads the F32 dx. dx is still
///    written (the residual stream's gradient). Any other combination throws (Unsupported).
struct LayerNormBackwardOptions {
  Tensor residual;
  std::optional<DType> dx_cast;
};
/// The same options for rms_norm / rms_norm_backward.
struct RmsNormOptions {
  std::optional<DType> out_dtype;
};
struct RmsNormBackwardOptions {
  Tensor residual;
  std::optional<DType> dx_cast;
};

/// weight and bias are optional (pass Tensor()); each has x.size(-1) elements and x's dtype.
LayerNormResult layer_norm(const Tensor& x, const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5,
                           const LayerNormOptions& options = {});
LayerNormGrads layer_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                   const Tensor& weight = {}, const LayerNormBackwardOptions& options = {});
RmsNormResult rms_norm(const Tensor& x, const Tensor& weight = {}, double eps = 1e-6, const RmsNormOptions& options = {});
RmsNormGrads rms_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& rstd, const Tensor& weight = {},
                               const RmsNormBackwardOptions& options = {});

}  // namespace ferrite
