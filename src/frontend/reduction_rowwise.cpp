// Front end of softmax, log-softmax and the norms (forward and backward).
#include <optional>

#include "core/reduction_support.hpp"
#include "ferrite/reduction.hpp"
#include "frontend/checks.hpp"
#include "frontend/reduction_common.hpp"
#include "frontend/strided.hpp"

namespace ferrite {
namespace {

const char* name_of(Op op) { return op_name(op).data(); }

Tensor softmax_impl(Op op, const Tensor& x, std::int64_t dim, std::optional<DType> dtype = std::nullopt) {
  const char* name = name_of(op);
  frontend::check_defined(name, {&x});
  frontend::check_supported(op, x.dtype(), x.device());
  const std::int64_t d = frontend::wrap_dim(name, x, dim);
  const DType out_dtype = dtype.value_or(x.dtype());
  FERRITE_CHECK(out_dtype == x.dtype() || (is_half_precision(x.dtype()) && out_dtype == DType::F32), Unsupported, name,
                ": dtype ", dtype_name(out_dtype), " requested for input ", x.description(),
                "; only the input's dtype or F32 from an F16/BF16 input is supported");
  Tensor out = frontend::allocate(x.shape(), out_dtype, x.device());
  if (out.numel() > 0) backend(x.device()).reductions().softmax(op, x.buffer(), out.buffer(), frontend::extents_around(x, d));
  return out;
}

Tensor softmax_backward_impl(Op op, const Tensor& grad, const Tensor& y, std::int64_t dim) {
  const char* name = name_of(op);
  frontend::check_grad(name, grad, y, "the forward output");
  frontend::check_supported(op, y.dtype(), y.device());
  const std::int64_t d = frontend::wrap_dim(name, y, dim);
  Tensor dx = frontend::allocate(y.shape(), y.dtype(), y.device());
  if (dx.numel() > 0)
    backend(y.device()).reductions().softmax_backward(op, grad.buffer(), y.buffer(), dx.buffer(),
                                                      frontend::extents_around(y, d));
  return dx;
}

// Norms normalise the last dim: rows = every other element, cols = its extent.
struct RowsCols {
  std::int64_t rows, cols;
  Shape stat_shape;
};

RowsCols rows_cols(const char* name, const Tensor& x) {
  FERRITE_CHECK(x.dim() >= 1, InvalidArgument, name, ": input ", x.description(),
                " has no dim to normalise (rank 0)");
  const std::int64_t cols = x.shape().back();
  FERRITE_CHECK(cols >= 1, InvalidArgument, name, ": input ", x.description(), " has an empty last dim");
  Shape stat(x.shape().begin(), x.shape().end() - 1);
  return {x.numel() / cols, cols, stat};
}

void check_affine(const char* name, const char* what, const Tensor& p, const Tensor& x, std::int64_t cols) {
  if (!p.defined()) return;
  frontend::check_same_device(name, {&x, &p});
  FERRITE_CHECK(p.dtype() == x.dtype(), DTypeMismatch, name, ": ", what, " is ", p.description(), ", expected dtype ",
                dtype_name(x.dtype()), " (input ", x.description(), ")");
  FERRITE_CHECK(p.dim() == 1 && p.numel() == cols, ShapeMismatch, name, ": ", what, " is ", p.description(),
                ", expected [", cols, "] (input ", x.description(), ")");
}

void check_stat(const char* name, const char* what, const Tensor& s, const Tensor& x, const RowsCols& rc) {
  frontend::check_defined(name, {&s});
  frontend::check_same_device(name, {&x, &s});
  const DType want = detail::norm_stat_dtype(x.dtype());
  FERRITE_CHECK(s.dtype() == want, DTypeMismatch, name, ": ", what, " is ", s.description(), ", expected dtype ",
                dtype_name(want), " (input ", x.description(), ")");
  FERRITE_CHECK(s.numel() == rc.rows, ShapeMismatch, name, ": ", what, " is ", s.description(), ", expected ",
                rc.rows, " elements, one per row (input ", x.description(), ")");
}

// The mixed-precision options (LayerNormOptions, LayerNormBackwardOptions; the same for the RMS
// norm): an F32 input may have an F16/BF16 output, or an F16/BF16 gradient; a residual adds to
// dx in F32 or F64 only (the two-byte kernels store their dx through a path of their own, and
// the training step this serves keeps its residual stream in F32).
DType norm_out_dtype(const char* name, const Tensor& x, std::optional<DType> out_dtype) {
  const DType out = out_dtype.value_or(x.dtype());
  FERRITE_CHECK(out == x.dtype() || (x.dtype() == DType::F32 && is_half_precision(out)), Unsupported, name,
                ": out_dtype ", dtype_name(out), " requested for input ", x.description(),
                "; allowed: the input's dtype, or F16/BF16 from an F32 input");
  return out;
}

void check_norm_grad(const char* name, const Tensor& grad, const Tensor& x) {
  frontend::check_defined(name, {&grad, &x});
  frontend::check_same_device(name, {&grad, &x});
  FERRITE_CHECK(grad.dtype() == x.dtype() || (x.dtype() == DType::F32 && is_half_precision(grad.dtype())),
                DTypeMismatch, name, ": grad is ", grad.description(), " for input ", x.description(),
                "; allowed: the input's dtype, or F16/BF16 for an F32 input");
  FERRITE_CHECK(grad.shape() == x.shape(), ShapeMismatch, name, ": grad is ", grad.description(), " but input is ",
                x.description(), " (shapes must match)");
}

void check_residual(const char* name, const Tensor& residual, const Tensor& x) {
  if (!residual.defined()) return;
  frontend::check_same_device(name, {&x, &residual});
  FERRITE_CHECK(residual.dtype() == x.dtype(), DTypeMismatch, name, ": residual is ", residual.description(),
                ", expected dtype ", dtype_name(x.dtype()), " (input ", x.description(), ")");
  FERRITE_CHECK(residual.shape() == x.shape(), ShapeMismatch, name, ": residual is ", residual.description(),
                ", expected the input's shape (input ", x.description(), ")");
  FERRITE_CHECK(x.dtype() == DType::F32 || x.dtype() == DType::F64, Unsupported, name, ": residual with input ",
                x.description(), "; a residual is added in the kernel for F32 and F64 inputs only");
}

// LayerNormBackwardOptions::dx_cast (and the RMS norm's): a second, F16/BF16 copy of the F32
// dx, each element rounded once from the F32 value stored in dx (the half x has no F32 dx to
// round; an F64 dx is not what a BF16 matmul reads).
std::optional<DType> check_dx_cast(const char* name, const Tensor& x, std::optional<DType> dx_cast) {
  if (!dx_cast) return dx_cast;
  FERRITE_CHECK(is_half_precision(*dx_cast), Unsupported, name, ": dx_cast ", dtype_name(*dx_cast),
                " requested for input ", x.description(), "; allowed: F16 or BF16 (for an F32 input)");
  FERRITE_CHECK(x.dtype() == DType::F32, Unsupported, name, ": dx_cast ", dtype_name(*dx_cast),
                " requested for input ", x.description(), "; allowed for an F32 input only (F16 or BF16)");
  return dx_cast;
}

// What both norms' forward share once the input and affine parameters are checked: the eps and
// output dtype checks, then y and rstd (the layer norm adds its mean).
template <class Result>
Result norm_result(const char* name, const Tensor& x, double eps, std::optional<DType> out_dtype, const RowsCols& rc) {
  FERRITE_CHECK(eps >= 0, InvalidArgument, name, ": eps ", eps, " must be a number >= 0");
  const DType y_dtype = norm_out_dtype(name, x, out_dtype);
  Result r;
  r.y = frontend::allocate(x.shape(), y_dtype, x.device());
  r.rstd = frontend::allocate(rc.stat_shape, detail::norm_stat_dtype(x.dtype()), x.device());
  return r;
}

// What both norms' backward share once their statistics are checked: the weight, residual and
// dx_cast checks (in that order, so both report the same first error), then dx, dx_cast when
// asked, and dweight when there is a weight (zeros with no rows: nothing flows back).
template <class Grads, class Options>
Grads norm_grads(const char* name, const Tensor& x, const Tensor& weight, const Options& options,
                 const RowsCols& rc) {
  check_affine(name, "weight", weight, x, rc.cols);
  check_residual(name, options.residual, x);
  const std::optional<DType> dx_cast = check_dx_cast(name, x, options.dx_cast);
  Grads g;
  g.dx = frontend::allocate(x.shape(), x.dtype(), x.device());
  if (dx_cast) g.dx_cast = frontend::allocate(x.shape(), *dx_cast, x.device());
  if (weight.defined())
    g.dweight = rc.rows == 0 ? zeros({rc.cols}, x.dtype(), x.device())
                             : frontend::allocate({rc.cols}, x.dtype(), x.device());
  return g;
}

// The norms' inputs come through Tensor::buffer(), which is 16-byte aligned (a view off the
// grid, such as a weight one element into its storage, is copied): the CUDA norm kernels take
// vector loads only when every row and parameter is aligned, and otherwise a scalar layout
// whose sums run in another order.
Buffer aligned(const Tensor& t) { return t.buffer(); }
Buffer aligned_or_none(const Tensor& t) { return t.defined() ? t.buffer() : Buffer(); }

}  // namespace

Tensor softmax(const Tensor& x, std::int64_t dim) { return softmax_impl(Op::Softmax, x, dim); }
Tensor log_softmax(const Tensor& x, std::int64_t dim) { return softmax_impl(Op::LogSoftmax, x, dim); }
Tensor softmax(const Tensor& x, std::int64_t dim, DType dtype) { return softmax_impl(Op::Softmax, x, dim, dtype); }
Tensor log_softmax(const Tensor& x, std::int64_t dim, DType dtype) {
  return softmax_impl(Op::LogSoftmax, x, dim, dtype);
}
Tensor softmax_backward(const Tensor& grad, const Tensor& y, std::int64_t dim) {
  return softmax_backward_impl(Op::SoftmaxBackward, grad, y, dim);
}
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y, std::int64_t dim) {
  return softmax_backward_impl(Op::LogSoftmaxBackward, grad, y, dim);
}

LayerNormResult layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                           const LayerNormOptions& options) {
  const char* name = "layer_norm";
  frontend::check_defined(name, {&x});
  frontend::check_supported(Op::LayerNorm, x.dtype(), x.device());
  const RowsCols rc = rows_cols(name, x);
  check_affine(name, "weight", weight, x, rc.cols);
  check_affine(name, "bias", bias, x, rc.cols);
  LayerNormResult r = norm_result<LayerNormResult>(name, x, eps, options.out_dtype, rc);
  r.mean = frontend::allocate(rc.stat_shape, detail::norm_stat_dtype(x.dtype()), x.device());
  if (rc.rows > 0)
    backend(x.device()).reductions().layer_norm(aligned(x), aligned_or_none(weight), aligned_or_none(bias), r.y.buffer(),
                                                r.mean.buffer(), r.rstd.buffer(), rc.rows, rc.cols, eps);
  return r;
}

LayerNormGrads layer_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                   const Tensor& weight, const LayerNormBackwardOptions& options) {
  const char* name = "layer_norm_backward";
  check_norm_grad(name, grad, x);
  frontend::check_supported(Op::LayerNormBackward, x.dtype(), x.device());
  const RowsCols rc = rows_cols(name, x);
  check_stat(name, "mean", mean, x, rc);
  check_stat(name, "rstd", rstd, x, rc);
  LayerNormGrads g = norm_grads<LayerNormGrads>(name, x, weight, options, rc);
  if (rc.rows == 0) {  // nothing flows back: the parameter gradients are zero
    g.dbias = zeros({rc.cols}, x.dtype(), x.device());
    return g;
  }
  g.dbias = frontend::allocate({rc.cols}, x.dtype(), x.device());
  backend(x.device()).reductions().layer_norm_backward(
      aligned(grad), aligned(x), mean.buffer(), rstd.buffer(), aligned_or_none(weight),
      aligned_or_none(options.residual), g.dx.buffer(), g.dx_cast.defined() ? g.dx_cast.buffer() : Buffer(),
      g.dweight.defined() ? g.dweight.buffer() : Buffer(), g.dbias.buffer(), rc.rows, rc.cols);
  return g;
}

RmsNormResult rms_norm(const Tensor& x, const Tensor& weight, double eps, const RmsNormOptions& options) {
  const char* name = "rms_norm";
  frontend::check_defined(name, {&x});
  frontend::check_supported(Op::RmsNorm, x.dtype(), x.device());
  const RowsCols rc = rows_cols(name, x);
  check_affine(name, "weight", weight, x, rc.cols);
  RmsNormResult r = norm_result<RmsNormResult>(name, x, eps, options.out_dtype, rc);
  if (rc.rows > 0)
    backend(x.device()).reductions().rms_norm(aligned(x), aligned_or_none(weight), r.y.buffer(), r.rstd.buffer(), rc.rows,
                                              rc.cols, eps);
  return r;
}

RmsNormGrads rms_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& rstd, const Tensor& weight,
                               const RmsNormBackwardOptions& options) {
  const char* name = "rms_norm_backward";
  check_norm_grad(name, grad, x);
  frontend::check_supported(Op::RmsNormBackward, x.dtype(), x.device());
  const RowsCols rc = rows_cols(name, x);
  check_stat(name, "rstd", rstd, x, rc);
  RmsNormGrads g = norm_grads<RmsNormGrads>(name, x, weight, options, rc);
  if (rc.rows == 0) return g;
  backend(x.device()).reductions().rms_norm_backward(
      aligned(grad), aligned(x), rstd.buffer(), aligned_or_none(weight), aligned_or_none(options.residual),
      g.dx.buffer(), g.dx_cast.defined() ? g.dx_cast.buffer() : Buffer(),
      g.dweight.defined() ? g.dweight.buffer() : Buffer(), rc.rows, rc.cols);
  return g;
}

}  // namespace ferrite
