// The CUDA backend's convolution family. Pooling and the recurrent cells are own kernels
// (pool_kernels.cu, rnn_cell_kernels.cu). conv2d runs through cuDNN's graph API
// (cudnn_conv.cpp) when the build has the cuDNN frontend and an engine supports the case;
// otherwise through an explicit-column implicit GEMM: the receptive fields of a chunk of images
// are unfolded into pool memory (im2col) and multiplied by cuBLASLt (the strided-batched GEMM
// of the matmul family, plans cached per shape, TF32 as ferrite's switch); the input gradient
// is a GEMM into F32/own-dtype columns folded back by a gather (col2im), the weight gradient a
// GEMM per image accumulated in F32 (or F64). See docs/families/conv.md.
#include <algorithm>

#include "cuda/conv/conv_kernels.cuh"
#include "cuda/conv/cudnn_conv.hpp"
#include "cuda/cuda_families.hpp"
#include "cuda/matmul/strided_gemm.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"

namespace ferrite::cuda {
namespace {

// Column buffers are cut to at most this many bytes (whole images per chunk).
constexpr std::int64_t kColumnBudget = std::int64_t(2) << 30;

// Pool memory for the duration of one op, released stream-ordered.
class Scratch {
 public:
  Scratch(DeviceContext& ctx, std::size_t bytes, cudaStream_t stream)
      : ctx_(ctx), bytes_(bytes), stream_(stream), ptr_(bytes ? ctx.allocate(bytes, stream) : nullptr) {}
  ~Scratch() {
    if (ptr_) ctx_.release(ptr_, bytes_, stream_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  char* get() const { return static_cast<char*>(ptr_); }

 private:
  DeviceContext& ctx_;
  std::size_t bytes_;
  cudaStream_t stream_;
  void* ptr_;
};

struct Setup {
  DeviceGuard guard;
  DeviceContext& ctx;
  cudaStream_t stream;
  explicit Setup(const Buffer& b)
      : guard(b.device().index), ctx(DeviceContext::get(b.device().index)), stream(ctx.current_stream()) {}
};

struct Geometry {
  std::int64_t cg, kg, crs, ohw, col_per_image;  // col_per_image = c * r * s * ohw
};

Geometry geometry(const Conv2dDesc& d) {
  const std::int64_t cg = d.c / d.groups;
  return {cg, d.k / d.groups, cg * d.r * d.s, d.oh * d.ow, d.c * d.r * d.s * d.oh * d.ow};
}

std::int64_t chunk_images(const Conv2dDesc& d, std::int64_t per_image_bytes) {
  return std::clamp<std::int64_t>(kColumnBudget / std::max<std::int64_t>(per_image_bytes, 1), 1, std::max<std::int64_t>(d.n, 1));
}

class CudaConvOps final : public ConvOps {
 public:
  void max_pool2d(const Pool2dDesc& d, const Buffer& x, const Buffer& out, const Buffer& indices) override {
    Setup s(x);
    kernels::max_pool2d(d, x, out, indices, s.stream);
  }
  void max_pool2d_backward(const Pool2dDesc& d, const Buffer& grad, const Buffer& indices,
                           const Buffer& grad_x) override {
    Setup s(grad);
    kernels::max_pool2d_backward(d, grad, indices, grad_x, s.stream);
  }
  void avg_pool2d(const Pool2dDesc& d, const Buffer& x, const Buffer& out) override {
    Setup s(x);
    kernels::avg_pool2d(d, x, out, s.stream);
  }
  void avg_pool2d_backward(const Pool2dDesc& d, const Buffer& grad, const Buffer& grad_x) override {
    Setup s(grad);
    kernels::avg_pool2d_backward(d, grad, grad_x, s.stream);
  }

  void conv2d(const Conv2dDesc& d, const Buffer& x, const Buffer& weight, const Buffer* bias,
              const Buffer& out) override {
    Setup s(x);
    if (cudnn_conv::run(cudnn_conv::Pass::Forward, d, x.dtype(), s.ctx, s.stream, x.data(), weight.data(),
                        out.data())) {
      if (bias) kernels::fill_bias(d, x.dtype(), bias->data(), d.n, out.data(), s.stream, /*accumulate=*/true);
      return;
    }
    const Geometry m = geometry(d);
    const DType dt = x.dtype();
    const std::int64_t es = static_cast<std::int64_t>(dtype_size(dt));
    const std::int64_t chunk = chunk_images(d, m.col_per_image * es);
    Scratch col(s.ctx, static_cast<std::size_t>(chunk * m.col_per_image * es), s.stream);
    const auto* xb = static_cast<const char*>(x.data());
    auto* ob = static_cast<char*>(out.data());
    for (std::int64_t n0 = 0; n0 < d.n; n0 += chunk) {
      const std::int64_t nb = std::min(chunk, d.n - n0);
      kernels::im2col(d, dt, xb + n0 * d.c * d.h * d.w * es, nb, col.get(), s.stream);
      char* o = ob + n0 * d.k * m.ohw * es;
      if (bias) kernels::fill_bias(d, dt, bias->data(), nb, o, s.stream);
      for (std::int64_t g = 0; g < d.groups; ++g) {
        StridedGemm gm;
        gm.input = gm.output = dt;
        gm.m = m.kg;
        gm.n = m.ohw;
        gm.k = m.crs;
        gm.allow_tf32 = d.allow_tf32;
        gm.batch = nb;
        gm.a = static_cast<const char*>(weight.data()) + g * m.kg * m.crs * es;
        gm.stride_a = 0;
        gm.b = col.get() + g * m.crs * m.ohw * es;
        gm.stride_b = m.col_per_image;
        gm.c = o + g * m.kg * m.ohw * es;
        gm.stride_c = d.k * m.ohw;
        gm.beta = bias ? 1 : 0;
        strided_gemm(s.ctx, s.stream, gm);
      }
    }
  }

  void conv2d_backward_input(const Conv2dDesc& d, const Buffer& grad, const Buffer& weight,
                             const Buffer& grad_x) override {
    Setup s(grad);
    if (cudnn_conv::run(cudnn_conv::Pass::BackwardInput, d, grad.dtype(), s.ctx, s.stream, grad_x.data(),
                        weight.data(), grad.data()))
      return;
    const Geometry m = geometry(d);
    const DType dt = grad.dtype();
    const DType col_dt = is_half_precision(dt) ? DType::F32 : dt;  // columns keep float sums
    const std::int64_t es = static_cast<std::int64_t>(dtype_size(dt)), cs = static_cast<std::int64_t>(dtype_size(col_dt));
    const std::int64_t chunk = chunk_images(d, m.col_per_image * cs);
    Scratch col(s.ctx, static_cast<std::size_t>(chunk * m.col_per_image * cs), s.stream);
    const auto* gb = static_cast<const char*>(grad.data());
    auto* xb = static_cast<char*>(grad_x.data());
    for (std::int64_t n0 = 0; n0 < d.n; n0 += chunk) {
      const std::int64_t nb = std::min(chunk, d.n - n0);
      for (std::int64_t g = 0; g < d.groups; ++g) {
        StridedGemm gm;
        gm.input = dt;
        gm.output = col_dt;
        gm.m = m.crs;
        gm.n = m.ohw;
        gm.k = m.kg;
        gm.transpose_a = true;  // weight is stored [kg, crs]
        gm.allow_tf32 = d.allow_tf32;
        gm.batch = nb;
        gm.a = static_cast<const char*>(weight.data()) + g * m.kg * m.crs * es;
        gm.stride_a = 0;
        gm.b = gb + (n0 * d.k + g * m.kg) * m.ohw * es;
        gm.stride_b = d.k * m.ohw;
        gm.c = col.get() + g * m.crs * m.ohw * cs;
        gm.stride_c = m.col_per_image;
        strided_gemm(s.ctx, s.stream, gm);
      }
      kernels::col2im(d, dt, col.get(), nb, xb + n0 * d.c * d.h * d.w * es, s.stream);
    }
  }

  void conv2d_backward_weight(const Conv2dDesc& d, const Buffer& grad, const Buffer& x,
                              const Buffer& grad_weight) override {
    Setup s(grad);
    if (cudnn_conv::run(cudnn_conv::Pass::BackwardWeight, d, grad.dtype(), s.ctx, s.stream, x.data(),
                        grad_weight.data(), grad.data()))
      return;
    const Geometry m = geometry(d);
    const DType dt = grad.dtype();
    const bool half = is_half_precision(dt);
    const DType acc_dt = half ? DType::F32 : dt;  // the sum over images runs in F32 (F64)
    const std::int64_t es = static_cast<std::int64_t>(dtype_size(dt)), as = static_cast<std::int64_t>(dtype_size(acc_dt));
    const std::int64_t chunk = chunk_images(d, m.col_per_image * es);
    Scratch col(s.ctx, static_cast<std::size_t>(chunk * m.col_per_image * es), s.stream);
    Scratch acc(s.ctx, half ? static_cast<std::size_t>(d.k * m.crs * as) : 0, s.stream);
    char* accb = half ? acc.get() : static_cast<char*>(grad_weight.data());
    const auto* gb = static_cast<const char*>(grad.data());
    const auto* xb = static_cast<const char*>(x.data());
    for (std::int64_t n0 = 0; n0 < d.n; n0 += chunk) {
      const std::int64_t nb = std::min(chunk, d.n - n0);
      kernels::im2col(d, dt, xb + n0 * d.c * d.h * d.w * es, nb, col.get(), s.stream);
      for (std::int64_t i = 0; i < nb; ++i) {
        StridedGemm gm;  // all groups of one image in one batched call
        gm.input = dt;
        gm.output = acc_dt;
        gm.m = m.kg;
        gm.n = m.crs;
        gm.k = m.ohw;
        gm.transpose_b = true;  // columns are stored [crs, ohw]
        gm.allow_tf32 = d.allow_tf32;
        gm.batch = d.groups;
        gm.a = gb + (n0 + i) * d.k * m.ohw * es;
        gm.stride_a = m.kg * m.ohw;
        gm.b = col.get() + i * m.col_per_image * es;
        gm.stride_b = m.crs * m.ohw;
        gm.c = accb;
        gm.stride_c = m.kg * m.crs;
        gm.beta = n0 + i == 0 ? 0 : 1;
        strided_gemm(s.ctx, s.stream, gm);
      }
    }
    if (half) kernels::narrow_from_f32(dt, reinterpret_cast<const float*>(accb), d.k * m.crs, grad_weight.data(), s.stream);
  }

  void gru_cell(std::int64_t b, std::int64_t h, const Buffer& ig, const Buffer& hg, const Buffer& hx,
                const Buffer* ib, const Buffer* hb, const Buffer& hy, const Buffer& ws) override {
    Setup s(ig);
    kernels::gru_cell(b, h, ig, hg, hx, ib, hb, hy, ws, s.stream);
  }
  void gru_cell_backward(std::int64_t b, std::int64_t h, const Buffer& grad_hy, const Buffer& ws, const Buffer& gig,
                         const Buffer& ghg, const Buffer& ghx) override {
    Setup s(grad_hy);
    kernels::gru_cell_backward(b, h, grad_hy, ws, gig, ghg, ghx, s.stream);
  }
  void lstm_cell(std::int64_t b, std::int64_t h, const Buffer& ig, const Buffer& hg, const Buffer& cx,
                 const Buffer* ib, const Buffer* hb, const Buffer& hy, const Buffer& cy, const Buffer& ws) override {
    Setup s(ig);
    kernels::lstm_cell(b, h, ig, hg, cx, ib, hb, hy, cy, ws, s.stream);
  }
  void lstm_cell_backward(std::int64_t b, std::int64_t h, const Buffer* grad_hy, const Buffer* grad_cy,
                          const Buffer& cx, const Buffer& cy, const Buffer& ws, const Buffer& grad_gates,
                          const Buffer& grad_cx) override {
    Setup s(cx);
    kernels::lstm_cell_backward(b, h, grad_hy, grad_cy, cx, cy, ws, grad_gates, grad_cx, s.stream);
  }
};

}  // namespace

std::unique_ptr<ConvOps> make_cuda_conv_ops() { return std::make_unique<CudaConvOps>(); }

}  // namespace ferrite::cuda
