// The backend interface of the convolution family (issue #17): pooling, conv2d and the
// fused GRU/LSTM cells. A backend hands it out through Backend::conv_ops(); each backend
// implements it in its own folder (src/cpu/conv/, src/cuda/conv/). Like Backend, it receives
// validated, contiguous NCHW Buffers from the front end (src/frontend/nn_*.cpp) and may only
// assert. Every op takes F32, F64, F16 and BF16; half types compute in float.
#pragma once

#include <cstdint>

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"

namespace ferrite {

/// One 2-D pooling over `planes` = N*C independent [h, w] planes, output [oh, ow] each.
/// Window (i, j) of a fixed-kernel pool covers rows i*sh - ph + r*dh, r < kh (columns alike);
/// an adaptive pool's window covers rows [floor(i*h/oh), ceil((i+1)*h/oh)).
struct Pool2dDesc {
  std::int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool adaptive = false;            // avg only: adaptive windows (kernel fields unused)
  bool count_include_pad = true;    // avg only
  std::int64_t divisor = 0;         // avg only: divisor_override, 0 = none
};

/// conv2d on NCHW tensors: x [n, c, h, w], weight [k, c/groups, r, s], out [n, k, oh, ow].
struct Conv2dDesc {
  std::int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 1, s = 1, oh = 0, ow = 0;
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
  /// F32 only: the backend may round to TF32 (ferrite's allow_tf32 switch). A permission.
  bool allow_tf32 = false;
};

class ConvOps {
 public:
  virtual ~ConvOps() = default;

  // ---- pooling: x/out/grad in one float dtype, indices I64 (flat h*w index per plane) ----
  virtual void max_pool2d(const Pool2dDesc& d, const Buffer& x, const Buffer& out, const Buffer& indices) = 0;
  /// grad_x = Σ over outputs whose index points at the element (a gather; deterministic).
  virtual void max_pool2d_backward(const Pool2dDesc& d, const Buffer& grad, const Buffer& indices,
                                   const Buffer& grad_x) = 0;
  virtual void avg_pool2d(const Pool2dDesc& d, const Buffer& x, const Buffer& out) = 0;
  virtual void avg_pool2d_backward(const Pool2dDesc& d, const Buffer& grad, const Buffer& grad_x) = 0;

  // ---- conv2d (bias may be null) ----
  virtual void conv2d(const Conv2dDesc& d, const Buffer& x, const Buffer& weight, const Buffer* bias,
                      const Buffer& out) = 0;
  virtual void conv2d_backward_input(const Conv2dDesc& d, const Buffer& grad, const Buffer& weight,
                                     const Buffer& grad_x) = 0;
  virtual void conv2d_backward_weight(const Conv2dDesc& d, const Buffer& grad, const Buffer& x,
                                      const Buffer& grad_weight) = 0;

  // ---- fused recurrent cells, PyTorch's _thnn_fused_* layout; [b, 3h] / [b, 4h] gates ----
  /// GRU gates r, z, n; workspace [b, 5h] = r, z, n, hx, hn (hn = hidden n gate + its bias).
  virtual void gru_cell(std::int64_t b, std::int64_t h, const Buffer& input_gates, const Buffer& hidden_gates,
                        const Buffer& hx, const Buffer* input_bias, const Buffer* hidden_bias, const Buffer& hy,
                        const Buffer& workspace) = 0;
  virtual void gru_cell_backward(std::int64_t b, std::int64_t h, const Buffer& grad_hy, const Buffer& workspace,
                                 const Buffer& grad_input_gates, const Buffer& grad_hidden_gates,
                                 const Buffer& grad_hx) = 0;
  /// LSTM gates i, f, g, o; workspace [b, 4h] holds the activated gates.
  virtual void lstm_cell(std::int64_t b, std::int64_t h, const Buffer& input_gates, const Buffer& hidden_gates,
                         const Buffer& cx, const Buffer* input_bias, const Buffer* hidden_bias, const Buffer& hy,
                         const Buffer& cy, const Buffer& workspace) = 0;
  /// grad_hy / grad_cy may be null (zero).
  virtual void lstm_cell_backward(std::int64_t b, std::int64_t h, const Buffer* grad_hy, const Buffer* grad_cy,
                                  const Buffer& cx, const Buffer& cy, const Buffer& workspace,
                                  const Buffer& grad_gates, const Buffer& grad_cx) = 0;
};

}  // namespace ferrite
