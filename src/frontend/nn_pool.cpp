// Front end of pooling: max_pool2d, avg_pool2d and adaptive_avg_pool2d with their backward
// passes. Shape rules are PyTorch's (pooling_output_shape / pool2d_shape_check).
#include <string>

#include "core/extent.hpp"
#include "frontend/nn_conv_common.hpp"

namespace ferrite::nn {
namespace {

using frontend::size2_str;

struct Planes {
  std::int64_t planes, h, w;
};

// [N, C, H, W] or [C, H, W] with nonzero C, H, W (N may be 0).
Planes planes_of(const char* op, const Tensor& x) {
  const Shape& s = x.shape();
  const bool ok = (s.size() == 3 || s.size() == 4) && s[s.size() - 1] > 0 && s[s.size() - 2] > 0 &&
                  s[s.size() - 3] > 0;
  FERRITE_CHECK(ok, ShapeMismatch, op, ": expected a 3-D [C, H, W] or 4-D [N, C, H, W] input with nonzero C, H, W, got ",
                x.description());
  const std::int64_t h = s[s.size() - 2], w = s[s.size() - 1];
  return {x.numel() / (h * w), h, w};
}

// What pooling parameters too large for int64 index arithmetic are refused with.
struct TooLarge {
  const char* op;
  const Tensor& x;
  std::string operator()() const {
    return std::string(op) + ": the pooling parameters on input " + x.description() +
           " overflow int64 index arithmetic (kernel_size, stride, dilation or output size too large)";
  }
};

std::int64_t pooled_size(std::int64_t in, std::int64_t k, std::int64_t pad, std::int64_t stride, std::int64_t dil,
                         bool ceil_mode, const TooLarge& too_large) {
  // in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), checked: a dilation
  // or kernel near 2^63 overflowed here before.
  const std::int64_t padded = detail::checked_add(in, detail::checked_mul(2, pad, too_large), too_large);
  const std::int64_t window = detail::checked_mul(dil, k - 1, too_large);
  const std::int64_t span = detail::checked_add(padded - 1 - window, ceil_mode ? stride - 1 : 0, too_large);
  // floor division (span may be negative when the kernel does not fit), written so that no
  // intermediate value overflows: for span < 0, floor(span / stride) = -1 - (-1 - span) / stride
  std::int64_t out = (span >= 0 ? span / stride : -1 - (-1 - span) / stride) + 1;
  // the last window must start inside the input or the left padding
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// The largest index values the kernels form (core/nn_conv_math.hpp: pool_fits_int's bounds,
// which cover every window start, end and tap, and the adaptive windows' (i + 1) * h) must
// fit in an int64. A stride or kernel near 2^62 passed the size rules but overflowed there:
// max_pool2d read out of bounds and avg_pool2d_backward divided by zero.
void check_index_extent(const Pool2dDesc& d, const TooLarge& too_large) {
  using detail::checked_add;
  using detail::checked_mul;
  const auto plus1 = [&](std::int64_t v) { return checked_add(v, 1, too_large); };
  (void)checked_add(checked_add(checked_mul(plus1(d.oh), d.sh, too_large), checked_mul(d.kh, d.dh, too_large), too_large),
                    d.ph, too_large);
  (void)checked_add(checked_add(checked_mul(plus1(d.ow), d.sw, too_large), checked_mul(d.kw, d.dw, too_large), too_large),
                    d.pw, too_large);
  (void)checked_add(checked_mul(plus1(d.h), d.oh, too_large), d.oh, too_large);
  (void)checked_add(checked_mul(plus1(d.w), d.ow, too_large), d.ow, too_large);
  (void)checked_mul(d.oh, d.ow, too_large);
}

Pool2dDesc fixed_desc(const char* op, const Tensor& x, Size2 kernel, const std::optional<Size2>& stride_opt,
                      Size2 padding, Size2 dilation, bool ceil_mode) {
  frontend::check_defined(op, {&x});
  frontend::check_float_input(op, x);
  const Planes p = planes_of(op, x);
  const Size2 stride = stride_opt.value_or(kernel);
  FERRITE_CHECK(kernel[0] > 0 && kernel[1] > 0, InvalidArgument, op, ": kernel_size must be positive, got ",
                size2_str(kernel));
  FERRITE_CHECK(stride[0] > 0 && stride[1] > 0, InvalidArgument, op, ": stride must be positive, got ",
                size2_str(stride));
  FERRITE_CHECK(dilation[0] > 0 && dilation[1] > 0, InvalidArgument, op, ": dilation must be positive, got ",
                size2_str(dilation));
  FERRITE_CHECK(padding[0] >= 0 && padding[1] >= 0 && padding[0] <= kernel[0] / 2 && padding[1] <= kernel[1] / 2,
                InvalidArgument, op, ": padding ", size2_str(padding),
                " must be non-negative and at most half of kernel_size ", size2_str(kernel));
  Pool2dDesc d;
  d.planes = p.planes;
  d.h = p.h;
  d.w = p.w;
  d.kh = kernel[0];
  d.kw = kernel[1];
  d.sh = stride[0];
  d.sw = stride[1];
  d.ph = padding[0];
  d.pw = padding[1];
  d.dh = dilation[0];
  d.dw = dilation[1];
  const TooLarge too_large{op, x};
  d.oh = pooled_size(d.h, d.kh, d.ph, d.sh, d.dh, ceil_mode, too_large);
  d.ow = pooled_size(d.w, d.kw, d.pw, d.sw, d.dw, ceil_mode, too_large);
  FERRITE_CHECK(d.oh >= 1 && d.ow >= 1, InvalidArgument, op, ": input ", x.description(), " with kernel_size ",
                size2_str(kernel), ", padding ", size2_str(padding), " and dilation ", size2_str(dilation),
                " gives output size ", d.oh, "x", d.ow, ", which is too small");
  check_index_extent(d, too_large);
  return d;
}

Shape pooled_shape(const Tensor& x, const Pool2dDesc& d) {
  Shape s = x.shape();
  s[s.size() - 2] = d.oh;
  s[s.size() - 1] = d.ow;
  return s;
}

// grad must have the forward output's shape and x's dtype and device.
void check_pool_grad(const char* op, const Tensor& grad, const Tensor& x, const Pool2dDesc& d) {
  frontend::check_defined(op, {&grad, &x});
  frontend::check_same_device(op, {&grad, &x});
  frontend::check_same_dtype(op, {&grad, &x});
  const Shape want = pooled_shape(x, d);
  FERRITE_CHECK(grad.shape() == want, ShapeMismatch, op, ": grad ", grad.description(),
                " does not have the forward output's shape ", shape_str(want));
}

Pool2dDesc max_desc(const char* op, const Tensor& x, const MaxPool2dOptions& o) {
  return fixed_desc(op, x, o.kernel_size, o.stride, o.padding, o.dilation, o.ceil_mode);
}

Pool2dDesc avg_desc(const char* op, const Tensor& x, const AvgPool2dOptions& o) {
  Pool2dDesc d = fixed_desc(op, x, o.kernel_size, o.stride, o.padding, {1, 1}, o.ceil_mode);
  d.count_include_pad = o.count_include_pad;
  if (o.divisor_override) {
    FERRITE_CHECK(*o.divisor_override != 0, InvalidArgument, op, ": divisor_override must be nonzero");
    d.divisor = *o.divisor_override;
  }
  return d;
}

Pool2dDesc adaptive_desc(const char* op, const Tensor& x, Size2 output_size) {
  frontend::check_defined(op, {&x});
  frontend::check_float_input(op, x);
  const Planes p = planes_of(op, x);
  FERRITE_CHECK(output_size[0] >= 0 && output_size[1] >= 0, InvalidArgument, op,
                ": output_size must be non-negative, got ", size2_str(output_size));
  Pool2dDesc d;
  d.adaptive = true;
  d.planes = p.planes;
  d.h = p.h;
  d.w = p.w;
  d.oh = output_size[0];
  d.ow = output_size[1];
  check_index_extent(d, TooLarge{op, x});
  return d;
}

}  // namespace

MaxPool2dResult max_pool2d(const Tensor& x, const MaxPool2dOptions& options) {
  const Pool2dDesc d = max_desc("max_pool2d", x, options);
  const Shape shape = pooled_shape(x, d);
  MaxPool2dResult r{frontend::allocate(shape, x.dtype(), x.device()),
                    frontend::allocate(shape, DType::I64, x.device())};
  if (r.values.numel() > 0) frontend::conv_ops_of(x).max_pool2d(d, x.buffer(), r.values.buffer(), r.indices.buffer());
  return r;
}

Tensor max_pool2d_backward(const Tensor& grad, const Tensor& x, const Tensor& indices,
                           const MaxPool2dOptions& options) {
  const char* op = "max_pool2d_backward";
  const Pool2dDesc d = max_desc(op, x, options);
  check_pool_grad(op, grad, x, d);
  frontend::check_defined(op, {&indices});
  frontend::check_same_device(op, {&grad, &indices});
  FERRITE_CHECK(indices.dtype() == DType::I64 && indices.shape() == grad.shape(), InvalidArgument, op,
                ": indices ", indices.description(), " must be I64 of the grad's shape ", shape_str(grad.shape()));
  Tensor out = frontend::allocate(x.shape(), x.dtype(), x.device());
  if (out.numel() > 0)
    frontend::conv_ops_of(x).max_pool2d_backward(d, grad.buffer(), indices.buffer(), out.buffer());
  return out;
}

Tensor avg_pool2d(const Tensor& x, const AvgPool2dOptions& options) {
  const Pool2dDesc d = avg_desc("avg_pool2d", x, options);
  Tensor out = frontend::allocate(pooled_shape(x, d), x.dtype(), x.device());
  if (out.numel() > 0) frontend::conv_ops_of(x).avg_pool2d(d, x.buffer(), out.buffer());
  return out;
}

Tensor avg_pool2d_backward(const Tensor& grad, const Tensor& x, const AvgPool2dOptions& options) {
  const char* op = "avg_pool2d_backward";
  const Pool2dDesc d = avg_desc(op, x, options);
  check_pool_grad(op, grad, x, d);
  Tensor out = frontend::allocate(x.shape(), x.dtype(), x.device());
  if (out.numel() > 0) frontend::conv_ops_of(x).avg_pool2d_backward(d, grad.buffer(), out.buffer());
  return out;
}

Tensor adaptive_avg_pool2d(const Tensor& x, Size2 output_size) {
  const Pool2dDesc d = adaptive_desc("adaptive_avg_pool2d", x, output_size);
  Tensor out = frontend::allocate(pooled_shape(x, d), x.dtype(), x.device());
  if (out.numel() > 0) frontend::conv_ops_of(x).avg_pool2d(d, x.buffer(), out.buffer());
  return out;
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad, const Tensor& x) {
  const char* op = "adaptive_avg_pool2d_backward";
  frontend::check_defined(op, {&grad, &x});
  FERRITE_CHECK(grad.dim() == x.dim() && grad.dim() >= 2, ShapeMismatch, op, ": grad ", grad.description(),
                " does not match the rank of input ", x.description());
  const Pool2dDesc d = adaptive_desc(op, x, {grad.shape()[grad.shape().size() - 2], grad.shape().back()});
  check_pool_grad(op, grad, x, d);
  Tensor out = frontend::allocate(x.shape(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  if (grad.numel() == 0) return out.zero_(), out;
  frontend::conv_ops_of(x).avg_pool2d_backward(d, grad.buffer(), out.buffer());
  return out;
}

}  // namespace ferrite::nn
