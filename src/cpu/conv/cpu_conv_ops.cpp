// The CPU backend's convolution family: pooling and the fused recurrent cells through the
// per-element code of core/nn_conv_math.hpp (the same code the CUDA kernels run), parallel
// over planes / rows with OpenMP; conv2d lives in cpu_conv2d.cpp.
#include <cstdint>

#include "core/dtype_dispatch.hpp"
#include "core/nn_conv_math.hpp"
#include "cpu/conv/cpu_conv2d.hpp"
#include "cpu/cpu_families.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cpu {
namespace {

// Below this many output elements an op runs on the calling thread.
constexpr std::int64_t kParallelElements = 1 << 14;

template <class F>
void for_float_dtype(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::F32: return f(detail::TypeTag<float>{});
    case DType::F64: return f(detail::TypeTag<double>{});
    case DType::F16: return f(detail::TypeTag<Half>{});
    case DType::BF16: return f(detail::TypeTag<BFloat16>{});
    default: break;
  }
  FERRITE_THROW(Unsupported, op, ": dtype ", dtype_name(dtype), " is not supported on the cpu backend");
}

// Pooling's loop, one for all four ops: every element of a [planes, rows, cols] tensor (the
// output for the forwards, rows x cols = oh x ow; the input for the backwards, h x w), in
// parallel above kParallelElements, each handed to f(pd, e, plane, i, j) with pd the pooling in
// its narrowest index type (detail::with_pool_index) and i, j in that type.
template <class F>
void for_each_pool_element(const Pool2dDesc& d, std::int64_t rows, std::int64_t cols, F&& f) {
  detail::with_pool_index(d, [&](const auto& pd) {
    using I = decltype(pd.h);
    const std::int64_t per = rows * cols, total = d.planes * per;
#pragma omp parallel for schedule(static) if (total >= kParallelElements)
    for (std::int64_t e = 0; e < total; ++e) f(pd, e, e / per, I(e % per / cols), I(e % cols));
  });
}

template <class T>
const T* ptr_or_null(const Buffer* b) {
  return b ? b->data_as<const T>() : nullptr;
}

class CpuConvOps final : public ConvOps {
 public:
  void max_pool2d(const Pool2dDesc& d, const Buffer& x, const Buffer& out, const Buffer& indices) override {
    for_float_dtype(x.dtype(), "max_pool2d", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data_as<const T>();
      T* o = out.data_as<T>();
      std::int64_t* idx = indices.data_as<std::int64_t>();
      for_each_pool_element(d, d.oh, d.ow, [&](const auto& pd, std::int64_t e, std::int64_t p, auto i, auto j) {
        detail::max_pool_element(pd, in + p * d.h * d.w, i, j, o + e, idx + e);
      });
    });
  }

  void max_pool2d_backward(const Pool2dDesc& d, const Buffer& grad, const Buffer& indices,
                           const Buffer& grad_x) override {
    for_float_dtype(grad.dtype(), "max_pool2d_backward", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* g = grad.data_as<const T>();
      const std::int64_t* idx = indices.data_as<const std::int64_t>();
      T* gx = grad_x.data_as<T>();
      const std::int64_t out_per = d.oh * d.ow;
      for_each_pool_element(d, d.h, d.w, [&](const auto& pd, std::int64_t e, std::int64_t p, auto y, auto x) {
        gx[e] = detail::max_pool_backward_element(pd, g + p * out_per, idx + p * out_per, y, x);
      });
    });
  }

  void avg_pool2d(const Pool2dDesc& d, const Buffer& x, const Buffer& out) override {
    for_float_dtype(x.dtype(), "avg_pool2d", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data_as<const T>();
      T* o = out.data_as<T>();
      for_each_pool_element(d, d.oh, d.ow, [&](const auto& pd, std::int64_t e, std::int64_t p, auto i, auto j) {
        o[e] = detail::avg_pool_element(pd, in + p * d.h * d.w, i, j);
      });
    });
  }

  void avg_pool2d_backward(const Pool2dDesc& d, const Buffer& grad, const Buffer& grad_x) override {
    for_float_dtype(grad.dtype(), "avg_pool2d_backward", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* g = grad.data_as<const T>();
      T* gx = grad_x.data_as<T>();
      const std::int64_t out_per = d.oh * d.ow;
      for_each_pool_element(d, d.h, d.w, [&](const auto& pd, std::int64_t e, std::int64_t p, auto y, auto x) {
        gx[e] = detail::avg_pool_backward_element(pd, g + p * out_per, y, x);
      });
    });
  }

  void conv2d(const Conv2dDesc& d, const Buffer& x, const Buffer& weight, const Buffer* bias,
              const Buffer& out) override {
    cpu_conv2d_forward(d, x, weight, bias, out);
  }
  void conv2d_backward_input(const Conv2dDesc& d, const Buffer& grad, const Buffer& weight,
                             const Buffer& grad_x) override {
    cpu_conv2d_backward_input(d, grad, weight, grad_x);
  }
  void conv2d_backward_weight(const Conv2dDesc& d, const Buffer& grad, const Buffer& x,
                              const Buffer& grad_weight) override {
    cpu_conv2d_backward_weight(d, grad, x, grad_weight);
  }

  void gru_cell(std::int64_t b, std::int64_t h, const Buffer& ig, const Buffer& hg, const Buffer& hx,
                const Buffer* ib, const Buffer* hb, const Buffer& hy, const Buffer& ws) override {
    for_float_dtype(ig.dtype(), "gru_cell", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const std::int64_t total = b * h;
#pragma omp parallel for schedule(static) if (total >= kParallelElements)
      for (std::int64_t e = 0; e < total; ++e)
        detail::gru_element(h, e / h, e % h, ig.data_as<const T>(), hg.data_as<const T>(), hx.data_as<const T>(),
                            ptr_or_null<T>(ib), ptr_or_null<T>(hb), hy.data_as<T>(), ws.data_as<T>());
    });
  }

  void gru_cell_backward(std::int64_t b, std::int64_t h, const Buffer& grad_hy, const Buffer& ws, const Buffer& gig,
                         const Buffer& ghg, const Buffer& ghx) override {
    for_float_dtype(grad_hy.dtype(), "gru_cell_backward", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const std::int64_t total = b * h;
#pragma omp parallel for schedule(static) if (total >= kParallelElements)
      for (std::int64_t e = 0; e < total; ++e)
        detail::gru_backward_element(h, e / h, e % h, grad_hy.data_as<const T>(), ws.data_as<const T>(),
                                     gig.data_as<T>(), ghg.data_as<T>(), ghx.data_as<T>());
    });
  }

  void lstm_cell(std::int64_t b, std::int64_t h, const Buffer& ig, const Buffer& hg, const Buffer& cx,
                 const Buffer* ib, const Buffer* hb, const Buffer& hy, const Buffer& cy, const Buffer& ws) override {
    for_float_dtype(ig.dtype(), "lstm_cell", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const std::int64_t total = b * h;
#pragma omp parallel for schedule(static) if (total >= kParallelElements)
      for (std::int64_t e = 0; e < total; ++e)
        detail::lstm_element(h, e / h, e % h, ig.data_as<const T>(), hg.data_as<const T>(), cx.data_as<const T>(),
                             ptr_or_null<T>(ib), ptr_or_null<T>(hb), hy.data_as<T>(), cy.data_as<T>(),
                             ws.data_as<T>());
    });
  }

  void lstm_cell_backward(std::int64_t b, std::int64_t h, const Buffer* grad_hy, const Buffer* grad_cy,
                          const Buffer& cx, const Buffer& cy, const Buffer& ws, const Buffer& grad_gates,
                          const Buffer& grad_cx) override {
    for_float_dtype(cx.dtype(), "lstm_cell_backward", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const std::int64_t total = b * h;
#pragma omp parallel for schedule(static) if (total >= kParallelElements)
      for (std::int64_t e = 0; e < total; ++e)
        detail::lstm_backward_element(h, e / h, e % h, ptr_or_null<T>(grad_hy), ptr_or_null<T>(grad_cy),
                                      cx.data_as<const T>(), cy.data_as<const T>(), ws.data_as<const T>(),
                                      grad_gates.data_as<T>(), grad_cx.data_as<T>());
    });
  }
};

}  // namespace

std::unique_ptr<ConvOps> make_cpu_conv_ops() { return std::make_unique<CpuConvOps>(); }

}  // namespace ferrite::cpu
