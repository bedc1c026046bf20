// Front end of conv2d and its backward passes: PyTorch's shape rules, the descriptor handed
// to ConvOps, and the bias gradient as a sum of grad over N, OH, OW.
#include <string>

#include "core/extent.hpp"
#include "ferrite/matmul.hpp"
#include "ferrite/reduction.hpp"
#include "frontend/nn_conv_common.hpp"

namespace ferrite::nn {
namespace {

using frontend::size2_str;

// The descriptor of conv2d(x, weight) after every check; `unbatched` for a 3-D x.
Conv2dDesc conv_desc(const char* op, const Tensor& x, const Tensor& weight, const Conv2dOptions& o) {
  frontend::check_defined(op, {&x, &weight});
  frontend::check_float_input(op, x);
  frontend::check_same_device(op, {&x, &weight});
  frontend::check_same_dtype(op, {&x, &weight});
  FERRITE_CHECK(x.dim() == 3 || x.dim() == 4, ShapeMismatch, op,
                ": expected a 3-D [C, H, W] or 4-D [N, C, H, W] input, got ", x.description());
  FERRITE_CHECK(weight.dim() == 4, ShapeMismatch, op, ": expected a 4-D weight [K, C/groups, R, S], got ",
                weight.description());
  FERRITE_CHECK(o.groups > 0, InvalidArgument, op, ": groups must be positive, got ", o.groups);
  FERRITE_CHECK(o.stride[0] > 0 && o.stride[1] > 0, InvalidArgument, op, ": stride must be positive, got ",
                size2_str(o.stride));
  FERRITE_CHECK(o.dilation[0] > 0 && o.dilation[1] > 0, InvalidArgument, op, ": dilation must be positive, got ",
                size2_str(o.dilation));
  FERRITE_CHECK(o.padding[0] >= 0 && o.padding[1] >= 0, InvalidArgument, op, ": padding must be non-negative, got ",
                size2_str(o.padding));
  const Shape& s = x.shape();
  const std::size_t r = s.size();
  Conv2dDesc d;
  d.n = r == 4 ? s[0] : 1;
  d.c = s[r - 3];
  d.h = s[r - 2];
  d.w = s[r - 1];
  d.k = weight.shape()[0];
  d.r = weight.shape()[2];
  d.s = weight.shape()[3];
  d.groups = o.groups;
  FERRITE_CHECK(d.k > 0 && weight.shape()[1] > 0 && d.r > 0 && d.s > 0, ShapeMismatch, op, ": weight ",
                weight.description(), " must have nonzero sizes");
  FERRITE_CHECK(d.k % o.groups == 0 && weight.shape()[1] * o.groups == d.c, ShapeMismatch, op,
                ": weight ", weight.description(), " with groups ", o.groups, " does not fit input ",
                x.description(), " (weight must be [K, C/groups, R, S] with K divisible by groups)");
  d.stride_h = o.stride[0];
  d.stride_w = o.stride[1];
  d.pad_h = o.padding[0];
  d.pad_w = o.padding[1];
  d.dil_h = o.dilation[0];
  d.dil_w = o.dilation[1];
  // Checked: a padding or dilation near 2^63 overflowed these (undefined behaviour, found by
  // api_fuzz_test under UBSan).
  const auto too_large = [&] {
    return std::string(op) + ": padding " + size2_str(o.padding) + " and dilation " + size2_str(o.dilation) +
           " on input " + x.description() + " and weight " + weight.description() + " overflow int64";
  };
  using detail::checked_add;
  using detail::checked_mul;
  const std::int64_t eh = checked_add(checked_mul(d.dil_h, d.r - 1, too_large), 1, too_large),
                     ew = checked_add(checked_mul(d.dil_w, d.s - 1, too_large), 1, too_large);
  const std::int64_t ph = checked_add(d.h, checked_mul(2, d.pad_h, too_large), too_large),
                     pw = checked_add(d.w, checked_mul(2, d.pad_w, too_large), too_large);
  FERRITE_CHECK(ph >= eh && pw >= ew, ShapeMismatch, op, ": the dilated kernel (", eh, "x", ew,
                ") is larger than the padded input (", ph, "x", pw, ") of input ", x.description());
  d.oh = (ph - eh) / d.stride_h + 1;
  d.ow = (pw - ew) / d.stride_w + 1;
  d.allow_tf32 = x.dtype() == DType::F32 && allow_tf32();
  return d;
}

Shape out_shape(const Tensor& x, const Conv2dDesc& d) {
  return x.dim() == 4 ? Shape{d.n, d.k, d.oh, d.ow} : Shape{d.k, d.oh, d.ow};
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias, const Conv2dOptions& options) {
  const char* op = "conv2d";
  const Conv2dDesc d = conv_desc(op, x, weight, options);
  Buffer bias_buffer;
  if (bias) {
    frontend::check_defined(op, {&*bias});
    frontend::check_same_device(op, {&x, &*bias});
    frontend::check_same_dtype(op, {&x, &*bias});
    FERRITE_CHECK(bias->shape() == (Shape{d.k}), ShapeMismatch, op, ": bias ", bias->description(), " must be [",
                  d.k, "]");
    bias_buffer = bias->buffer();
  }
  Tensor out = frontend::allocate(out_shape(x, d), x.dtype(), x.device());
  if (out.numel() > 0)
    frontend::conv_ops_of(x).conv2d(d, x.buffer(), weight.buffer(), bias ? &bias_buffer : nullptr, out.buffer());
  return out;
}

Conv2dGrads conv2d_backward(const Tensor& grad, const Tensor& x, const Tensor& weight, const Conv2dOptions& options,
                            std::array<bool, 3> mask) {
  const char* op = "conv2d_backward";
  const Conv2dDesc d = conv_desc(op, x, weight, options);
  frontend::check_defined(op, {&grad});
  frontend::check_same_device(op, {&x, &grad});
  frontend::check_same_dtype(op, {&x, &grad});
  const Shape want = out_shape(x, d);
  FERRITE_CHECK(grad.shape() == want, ShapeMismatch, op, ": grad ", grad.description(),
                " does not have the forward output's shape ", shape_str(want));
  ConvOps& ops = frontend::conv_ops_of(x);
  // grad made dense once (a copy only for a view), for both kernels and for the bias sum: a
  // sum over a transposed view would add in its memory order, and this op's results must not
  // depend on grad's layout.
  const Buffer grad_buffer = grad.buffer();
  const Tensor dense_grad(grad_buffer, grad.shape());
  Conv2dGrads g;
  if (mask[0]) {
    g.input = frontend::allocate(x.shape(), x.dtype(), x.device());
    if (g.input.numel() > 0) ops.conv2d_backward_input(d, grad_buffer, weight.buffer(), g.input.buffer());
  }
  if (mask[1]) {
    g.weight = frontend::allocate(weight.shape(), x.dtype(), x.device());
    if (grad.numel() == 0) g.weight.zero_();
    else ops.conv2d_backward_weight(d, grad_buffer, x.buffer(), g.weight.buffer());
  }
  if (mask[2]) {
    if (grad.numel() == 0) g.bias = zeros({d.k}, x.dtype(), x.device());
    else
      g.bias = x.dim() == 4 ? sum(dense_grad, std::vector<std::int64_t>{0, 2, 3})
                            : sum(dense_grad, std::vector<std::int64_t>{1, 2});
  }
  return g;
}

}  // namespace ferrite::nn
