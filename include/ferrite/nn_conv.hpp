// Convolution, pooling and fused recurrent cells (issue #17), PyTorch semantics, NCHW.
// Validation happens in src/frontend/nn_*.cpp; backends receive checked Buffers (ConvOps).
//
// Dtypes: F32, F64, F16 and BF16 for every op (half types accumulate in float and round once;
// conv2d's F32 may use TF32 when ferrite::allow_tf32() is on, as matmul). All tensors of one
// call share a dtype and a device. Inputs are [N, C, H, W] or unbatched [C, H, W]; the
// result keeps the input's rank. N == 0 gives empty results.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ferrite/tensor.hpp"

namespace ferrite::nn {

using Size2 = std::array<std::int64_t, 2>;  // (height, width)

// ---- pooling ----

struct MaxPool2dOptions {
  Size2 kernel_size = {1, 1};
  std::optional<Size2> stride = std::nullopt;  ///< default: kernel_size
  Size2 padding = {0, 0};                      ///< implicit -inf padding, at most kernel/2
  Size2 dilation = {1, 1};
  bool ceil_mode = false;  ///< ceil the output size (a window must still start inside the input or left padding)
};

struct MaxPool2dResult {
  Tensor values;
  Tensor indices;  ///< I64, the flat h * W + w position of the maximum within its plane
};

/// torch.nn.functional.max_pool2d(..., return_indices=True). NaN in a window wins (the last
/// NaN's index is kept), as PyTorch.
MaxPool2dResult max_pool2d(const Tensor& x, const MaxPool2dOptions& options);
/// The gradient w.r.t. x: grad is routed to the positions in `indices`, summed where windows
/// overlap. `x` only gives the input's shape, dtype and device.
Tensor max_pool2d_backward(const Tensor& grad, const Tensor& x, const Tensor& indices,
                           const MaxPool2dOptions& options);

struct AvgPool2dOptions {
  Size2 kernel_size = {1, 1};
  std::optional<Size2> stride = std::nullopt;  ///< default: kernel_size
  Size2 padding = {0, 0};                      ///< zero padding, at most kernel/2
  bool ceil_mode = false;
  bool count_include_pad = true;                 ///< the divisor counts padded taps
  std::optional<std::int64_t> divisor_override;  ///< a fixed divisor (nonzero)
};

Tensor avg_pool2d(const Tensor& x, const AvgPool2dOptions& options);
Tensor avg_pool2d_backward(const Tensor& grad, const Tensor& x, const AvgPool2dOptions& options);

/// Output (i, j) averages rows [floor(i*H/oh), ceil((i+1)*H/oh)) and the columns alike.
Tensor adaptive_avg_pool2d(const Tensor& x, Size2 output_size);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad, const Tensor& x);

// ---- convolution ----

struct Conv2dOptions {
  Size2 stride = {1, 1};
  Size2 padding = {0, 0};  ///< zero padding
  Size2 dilation = {1, 1};
  std::int64_t groups = 1;
};

/// torch.nn.functional.conv2d: x [N, C, H, W], weight [K, C/groups, R, S], bias [K] or none
/// -> [N, K, OH, OW] with OH = (H + 2*pad - dil*(R-1) - 1) / stride + 1.
Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              const Conv2dOptions& options = {});

struct Conv2dGrads {
  Tensor input, weight, bias;  ///< undefined where the mask asked for none
};

/// Gradients of conv2d w.r.t. input, weight and bias (mask: which to compute).
Conv2dGrads conv2d_backward(const Tensor& grad, const Tensor& x, const Tensor& weight,
                            const Conv2dOptions& options = {}, std::array<bool, 3> mask = {true, true, true});

// ---- fused recurrent cells (torch._thnn_fused_gru_cell / _thnn_fused_lstm_cell) ----

struct GruCellResult {
  Tensor hy;         ///< [B, H]
  Tensor workspace;  ///< [B, 5H]: r, z, n, hx, hn (hn: the hidden n gate with its bias)
};

/// input_gates = x·W_ihᵀ and hidden_gates = hx·W_hhᵀ, both [B, 3H] in PyTorch's gate order
/// r, z, n; biases [3H] (both or neither). r = σ(i_r + h_r), z = σ(i_z + h_z),
/// n = tanh(i_n + r * h_n), hy = (1 - z) * n + z * hx.
GruCellResult gru_cell(const Tensor& input_gates, const Tensor& hidden_gates, const Tensor& hx,
                       const std::optional<Tensor>& input_bias = std::nullopt,
                       const std::optional<Tensor>& hidden_bias = std::nullopt);

struct GruCellGrads {
  Tensor input_gates, hidden_gates, hx;
  Tensor input_bias, hidden_bias;  ///< [3H], defined when has_bias
};

GruCellGrads gru_cell_backward(const Tensor& grad_hy, const Tensor& workspace, bool has_bias);

struct LstmCellResult {
  Tensor hy, cy;     ///< [B, H]
  Tensor workspace;  ///< [B, 4H]: the activated gates i, f, g, o
};

/// Gates [B, 4H] in PyTorch's order i, f, g, o; cy = σ(f) * cx + σ(i) * tanh(g),
/// hy = σ(o) * tanh(cy).
LstmCellResult lstm_cell(const Tensor& input_gates, const Tensor& hidden_gates, const Tensor& cx,
                         const std::optional<Tensor>& input_bias = std::nullopt,
                         const std::optional<Tensor>& hidden_bias = std::nullopt);

struct LstmCellGrads {
  Tensor gates;  ///< [B, 4H]: the gradient of both input_gates and hidden_gates
  Tensor cx;
  Tensor bias;   ///< [4H], defined when has_bias (of each bias)
};

/// grad_hy / grad_cy may be absent (zero), as in PyTorch.
LstmCellGrads lstm_cell_backward(const std::optional<Tensor>& grad_hy, const std::optional<Tensor>& grad_cy,
                                 const Tensor& cx, const Tensor& cy, const Tensor& workspace, bool has_bias);

}  // namespace ferrite::nn
