// ferrite.nn (convolution, pooling, fused recurrent cells): torch.nn.functional's argument
// names for conv2d and the pools (an int or a pair for each size), ferrite's results
// (max_pool2d's indices, the cells' workspaces) and backwards. ferrite/nn_conv.hpp.
#include "common.hpp"

#include <nanobind/stl/array.h>

#include <array>

namespace ferrite::py {

namespace {

// kernel_size=3 or (3, 2), as torch takes it.
nn::Size2 pair(nb::handle h, const char* what) {
  const auto v = int_list(h, what);
  FERRITE_CHECK(v.size() == 1 || v.size() == 2, InvalidArgument, what, ": expected an int or a pair, got ", v.size(),
                " numbers");
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}
// stride=None (or torch's empty list) means the kernel size.
std::optional<nn::Size2> stride_or_none(nb::handle h) {
  if (h.is_none() || (PySequence_Check(h.ptr()) && nb::len(h) == 0)) return std::nullopt;
  return pair(h, "stride");
}

nn::MaxPool2dOptions max_options(nb::handle kernel, nb::handle stride, nb::handle padding, nb::handle dilation,
                                 bool ceil_mode) {
  nn::MaxPool2dOptions o;
  o.kernel_size = pair(kernel, "kernel_size");
  o.stride = stride_or_none(stride);
  o.padding = pair(padding, "padding");
  o.dilation = pair(dilation, "dilation");
  o.ceil_mode = ceil_mode;
  return o;
}

nn::AvgPool2dOptions avg_options(nb::handle kernel, nb::handle stride, nb::handle padding, bool ceil_mode,
                                 bool count_include_pad, std::optional<std::int64_t> divisor_override) {
  nn::AvgPool2dOptions o;
  o.kernel_size = pair(kernel, "kernel_size");
  o.stride = stride_or_none(stride);
  o.padding = pair(padding, "padding");
  o.ceil_mode = ceil_mode;
  o.count_include_pad = count_include_pad;
  o.divisor_override = divisor_override;
  return o;
}

// padding='valid' is no padding; 'same' keeps H and W at stride 1, which ferrite's symmetric
// padding can do when dilation * (kernel - 1) is even (torch pads the odd remainder on one side).
nn::Conv2dOptions conv_options(const Tensor& weight, nb::handle stride, nb::handle padding, nb::handle dilation,
                               std::int64_t groups) {
  nn::Conv2dOptions o;
  o.stride = pair(stride, "stride");
  o.dilation = pair(dilation, "dilation");
  o.groups = groups;
  if (!PyUnicode_Check(padding.ptr())) {
    o.padding = pair(padding, "padding");
    return o;
  }
  const std::string mode = nb::cast<std::string>(padding);
  if (mode == "valid") {
    o.padding = {0, 0};
    return o;
  }
  FERRITE_CHECK(mode == "same", InvalidArgument, "conv2d: padding must be 'valid', 'same' or sizes, got '", mode, "'");
  FERRITE_CHECK(o.stride[0] == 1 && o.stride[1] == 1, InvalidArgument,
                "conv2d: padding='same' needs stride 1 (as torch), got stride (", o.stride[0], ", ", o.stride[1], ")");
  FERRITE_CHECK(weight.dim() == 4, ShapeMismatch, "conv2d: weight must be [K, C/groups, R, S], got ",
                weight.description());
  for (int i = 0; i < 2; ++i) {
    const std::int64_t total = o.dilation[i] * (weight.shape()[2 + i] - 1);
    FERRITE_CHECK(total % 2 == 0, Unsupported, "conv2d: padding='same' with dilation * (kernel - 1) odd (",
                  total, " in dim ", i, ") needs asymmetric padding, which ferrite does not implement");
    o.padding[i] = total / 2;
  }
  return o;
}

}  // namespace

void bind_nn_conv(nb::module_& m) {
  nb::module_ nn = submodule(m, "nn", "Neural-network ops.");
  const nb::object max_pool_t = result_type(m, "max_pool2d", "values indices");
  const nb::object conv_grads_t = result_type(m, "conv2d_backward", "grad_input grad_weight grad_bias");
  const nb::object gru_t = result_type(m, "gru_cell", "hy workspace");
  const nb::object gru_grads_t =
      result_type(m, "gru_cell_backward", "grad_input_gates grad_hidden_gates grad_hx grad_input_bias grad_hidden_bias");
  const nb::object lstm_t = result_type(m, "lstm_cell", "hy cy workspace");
  const nb::object lstm_grads_t = result_type(m, "lstm_cell_backward", "grad_gates grad_cx grad_bias");
  const auto stride = nb::arg("stride").none() = nb::none();
  const auto padding = nb::arg("padding") = 0;
  const auto dilation = nb::arg("dilation") = 1;
  const auto ceil_mode = nb::arg("ceil_mode") = false;

  nn.def("max_pool2d", [max_pool_t](const Tensor& x, nb::handle k, nb::handle s, nb::handle p, nb::handle d, bool c) {
        auto r = nn::max_pool2d(x, max_options(k, s, p, d, c));
        return named(max_pool_t, r.values, r.indices);
      }, nb::arg("input"), nb::arg("kernel_size"), stride, padding, dilation, ceil_mode,
      "(values, indices): int64 flat h * W + w positions of each window's maximum (NaN wins).");
  nn.def("max_pool2d_backward", [](const Tensor& g, const Tensor& x, const Tensor& indices, nb::handle k, nb::handle s,
                                   nb::handle p, nb::handle d, bool c) {
        return nn::max_pool2d_backward(g, x, indices, max_options(k, s, p, d, c));
      }, nb::arg("grad"), nb::arg("input"), nb::arg("indices"), nb::arg("kernel_size"), stride, padding, dilation,
      ceil_mode);
  nn.def("avg_pool2d", [](const Tensor& x, nb::handle k, nb::handle s, nb::handle p, bool c, bool cip,
                          std::optional<std::int64_t> div) {
        return nn::avg_pool2d(x, avg_options(k, s, p, c, cip, div));
      }, nb::arg("input"), nb::arg("kernel_size"), stride, padding, ceil_mode, nb::arg("count_include_pad") = true,
      nb::arg("divisor_override") = nb::none());
  nn.def("avg_pool2d_backward", [](const Tensor& g, const Tensor& x, nb::handle k, nb::handle s, nb::handle p, bool c,
                                   bool cip, std::optional<std::int64_t> div) {
        return nn::avg_pool2d_backward(g, x, avg_options(k, s, p, c, cip, div));
      }, nb::arg("grad"), nb::arg("input"), nb::arg("kernel_size"), stride, padding, ceil_mode,
      nb::arg("count_include_pad") = true, nb::arg("divisor_override") = nb::none());
  nn.def("adaptive_avg_pool2d", [](const Tensor& x, nb::handle output_size) {
        return nn::adaptive_avg_pool2d(x, pair(output_size, "output_size"));
      }, nb::arg("input"), nb::arg("output_size"));
  nn.def("adaptive_avg_pool2d_backward", &nn::adaptive_avg_pool2d_backward, nb::arg("grad"), nb::arg("input"));

  nn.def("conv2d", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, nb::handle s, nb::handle p,
                      nb::handle d, std::int64_t groups) {
        return nn::conv2d(x, w, b, conv_options(w, s, p, d, groups));
      }, nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::arg("stride") = 1, padding, dilation,
      nb::arg("groups") = 1,
      "x [N, C, H, W], weight [K, C/groups, R, S], bias [K] -> [N, K, OH, OW]; padding sizes, 'valid' or 'same'.");
  nn.def("conv2d_backward", [conv_grads_t](const Tensor& g, const Tensor& x, const Tensor& w, nb::handle s,
                                           nb::handle p, nb::handle d, std::int64_t groups,
                                           std::array<bool, 3> output_mask) {
        auto r = nn::conv2d_backward(g, x, w, conv_options(w, s, p, d, groups), output_mask);
        return named(conv_grads_t, none_if_undefined(r.input), none_if_undefined(r.weight),
                     none_if_undefined(r.bias));
      }, nb::arg("grad"), nb::arg("input"), nb::arg("weight"), nb::arg("stride") = 1, padding, dilation,
      nb::arg("groups") = 1, nb::arg("output_mask") = std::array<bool, 3>{true, true, true},
      "(grad_input, grad_weight, grad_bias), None where output_mask is False.");

  nn.def("gru_cell", [gru_t](const Tensor& ig, const Tensor& hg, const Tensor& hx, std::optional<Tensor> ib,
                             std::optional<Tensor> hb) {
        auto r = nn::gru_cell(ig, hg, hx, ib, hb);
        return named(gru_t, r.hy, r.workspace);
      }, nb::arg("input_gates"), nb::arg("hidden_gates"), nb::arg("hx"), nb::arg("input_bias") = nb::none(),
      nb::arg("hidden_bias") = nb::none(),
      "torch._thnn_fused_gru_cell: gates [B, 3H] in the order r, z, n -> (hy, workspace).");
  nn.def("gru_cell_backward", [gru_grads_t](const Tensor& grad_hy, const Tensor& workspace, bool has_bias) {
        auto r = nn::gru_cell_backward(grad_hy, workspace, has_bias);
        return named(gru_grads_t, r.input_gates, r.hidden_gates, r.hx, none_if_undefined(r.input_bias),
                     none_if_undefined(r.hidden_bias));
      }, nb::arg("grad_hy"), nb::arg("workspace"), nb::arg("has_bias"));
  nn.def("lstm_cell", [lstm_t](const Tensor& ig, const Tensor& hg, const Tensor& cx, std::optional<Tensor> ib,
                               std::optional<Tensor> hb) {
        auto r = nn::lstm_cell(ig, hg, cx, ib, hb);
        return named(lstm_t, r.hy, r.cy, r.workspace);
      }, nb::arg("input_gates"), nb::arg("hidden_gates"), nb::arg("cx"), nb::arg("input_bias") = nb::none(),
      nb::arg("hidden_bias") = nb::none(),
      "torch._thnn_fused_lstm_cell: gates [B, 4H] in the order i, f, g, o -> (hy, cy, workspace).");
  nn.def("lstm_cell_backward", [lstm_grads_t](std::optional<Tensor> grad_hy, std::optional<Tensor> grad_cy,
                                              const Tensor& cx, const Tensor& cy, const Tensor& workspace,
                                              bool has_bias) {
        auto r = nn::lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias);
        return named(lstm_grads_t, r.gates, r.cx, none_if_undefined(r.bias));
      }, nb::arg("grad_hy").none(), nb::arg("grad_cy").none(), nb::arg("cx"), nb::arg("cy"), nb::arg("workspace"),
      nb::arg("has_bias"), "grad_hy / grad_cy may be None (zero).");
}

}  // namespace ferrite::py
