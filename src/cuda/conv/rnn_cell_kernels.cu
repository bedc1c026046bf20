// Fused GRU/LSTM cell kernels: one thread per (batch row, hidden unit), running the
// per-element code of core/nn_conv_math.hpp (the CPU backend runs the same code).
#include "core/nn_conv_math.hpp"
#include "cuda/conv/conv_kernels.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"

namespace ferrite::cuda::kernels {
namespace {

constexpr int kThreads = 256;

template <class T>
const T* opt(const Buffer* b) {
  return b ? b->data_as<const T>() : nullptr;
}

#define FERRITE_CELL_LOOP                                                                         \
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < b * h;           \
       e += std::int64_t(gridDim.x) * blockDim.x)

template <class T>
__global__ void gru_kernel(std::int64_t b, std::int64_t h, const T* ig, const T* hg, const T* hx, const T* ib,
                           const T* hb, T* hy, T* ws) {
  FERRITE_CELL_LOOP detail::gru_element(h, e / h, e % h, ig, hg, hx, ib, hb, hy, ws);
}

template <class T>
__global__ void gru_backward_kernel(std::int64_t b, std::int64_t h, const T* ghy, const T* ws, T* gig, T* ghg,
                                    T* ghx) {
  FERRITE_CELL_LOOP detail::gru_backward_element(h, e / h, e % h, ghy, ws, gig, ghg, ghx);
}

template <class T>
__global__ void lstm_kernel(std::int64_t b, std::int64_t h, const T* ig, const T* hg, const T* cx, const T* ib,
                            const T* hb, T* hy, T* cy, T* ws) {
  FERRITE_CELL_LOOP detail::lstm_element(h, e / h, e % h, ig, hg, cx, ib, hb, hy, cy, ws);
}

template <class T>
__global__ void lstm_backward_kernel(std::int64_t b, std::int64_t h, const T* ghy, const T* gcy, const T* cx,
                                     const T* cy, const T* ws, T* gg, T* gcx) {
  FERRITE_CELL_LOOP detail::lstm_backward_element(h, e / h, e % h, ghy, gcy, cx, cy, ws, gg, gcx);
}

template <class F>
void dispatch(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::F16: return f(Half{});
    case DType::BF16: return f(BFloat16{});
    default: break;
  }
  FERRITE_THROW(Unsupported, op, ": dtype ", dtype_name(dtype), " is not supported on the cuda backend");
}

unsigned grid(std::int64_t total) { return grid_stride_blocks(total, kThreads, std::int64_t(1) << 20); }

}  // namespace

void gru_cell(std::int64_t b, std::int64_t h, const Buffer& ig, const Buffer& hg, const Buffer& hx, const Buffer* ib,
              const Buffer* hb, const Buffer& hy, const Buffer& ws, cudaStream_t s) {
  dispatch(ig.dtype(), "gru_cell", [&](auto v) {
    using T = decltype(v);
    gru_kernel<T><<<grid(b * h), kThreads, 0, s>>>(b, h, ig.data_as<const T>(), hg.data_as<const T>(),
                                                    hx.data_as<const T>(), opt<T>(ib), opt<T>(hb), hy.data_as<T>(),
                                                    ws.data_as<T>());
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

void gru_cell_backward(std::int64_t b, std::int64_t h, const Buffer& grad_hy, const Buffer& ws, const Buffer& gig,
                       const Buffer& ghg, const Buffer& ghx, cudaStream_t s) {
  dispatch(grad_hy.dtype(), "gru_cell_backward", [&](auto v) {
    using T = decltype(v);
    gru_backward_kernel<T><<<grid(b * h), kThreads, 0, s>>>(b, h, grad_hy.data_as<const T>(), ws.data_as<const T>(),
                                                             gig.data_as<T>(), ghg.data_as<T>(), ghx.data_as<T>());
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

void lstm_cell(std::int64_t b, std::int64_t h, const Buffer& ig, const Buffer& hg, const Buffer& cx, const Buffer* ib,
               const Buffer* hb, const Buffer& hy, const Buffer& cy, const Buffer& ws, cudaStream_t s) {
  dispatch(ig.dtype(), "lstm_cell", [&](auto v) {
    using T = decltype(v);
    lstm_kernel<T><<<grid(b * h), kThreads, 0, s>>>(b, h, ig.data_as<const T>(), hg.data_as<const T>(),
                                                     cx.data_as<const T>(), opt<T>(ib), opt<T>(hb), hy.data_as<T>(),
                                                     cy.data_as<T>(), ws.data_as<T>());
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

void lstm_cell_backward(std::int64_t b, std::int64_t h, const Buffer* grad_hy, const Buffer* grad_cy,
                        const Buffer& cx, const Buffer& cy, const Buffer& ws, const Buffer& grad_gates,
                        const Buffer& grad_cx, cudaStream_t s) {
  dispatch(cx.dtype(), "lstm_cell_backward", [&](auto v) {
    using T = decltype(v);
    lstm_backward_kernel<T><<<grid(b * h), kThreads, 0, s>>>(b, h, opt<T>(grad_hy), opt<T>(grad_cy),
                                                              cx.data_as<const T>(), cy.data_as<const T>(),
                                                              ws.data_as<const T>(), grad_gates.data_as<T>(),
                                                              grad_cx.data_as<T>());
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace ferrite::cuda::kernels
