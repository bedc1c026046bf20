// Backward of softmax and log_softmax on the GPU, from the forward output y:
//   softmax:     dx = y * (grad - sum(grad * y))
//   log_softmax: dx = grad - exp(y) * sum(grad)
#include <cmath>

#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduction_kernels.cuh"
#include "cuda/reduction/rowwise_common.cuh"

namespace ferrite::cuda::reduction {
namespace {

template <class A>
__device__ __forceinline__ A softmax_grad(bool log_out, A g, A y, A s) {
  return log_out ? g - exp(y) * s : y * (g - s);
}

template <class T, int G, int N>
__global__ void __launch_bounds__(kRowThreads)
    softmax_backward_rows_kernel(const T* grad, const T* y, T* dx, std::int64_t rows, std::int64_t cols,
                                 bool log_out, bool vec) {
  using A = acc_t<T>;
  __shared__ A smem[kRowThreads / 32];
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kRowThreads / G) + threadIdx.x / G;
  const int t = threadIdx.x % G;
  const bool active = row < rows;
  A g[N], v[N];
#pragma unroll
  for (int n = 0; n < N; ++n) g[n] = v[n] = 0;
  if (active) {
    load_items<T, G, N>(grad + row * cols, cols, t, vec, g, A(0));
    load_items<T, G, N>(y + row * cols, cols, t, vec, v, A(0));
  }
  A s = 0;
#pragma unroll
  for (int n = 0; n < N; ++n) s += log_out ? g[n] : g[n] * v[n];
  s = group_reduce(s, G, smem, AddOp{});
  if (!active) return;
#pragma unroll
  for (int n = 0; n < N; ++n) g[n] = softmax_grad(log_out, g[n], v[n], s);
  store_items<T, G, N>(dx + row * cols, cols, t, vec, g);
}

template <class T>
__global__ void __launch_bounds__(kLongRowThreads)
    softmax_backward_long_rows_kernel(const T* grad, const T* y, T* dx, std::int64_t cols, bool log_out) {
  using A = acc_t<T>;
  __shared__ A smem[kLongRowThreads / 32];
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * cols;
  A s = 0;
  for (std::int64_t c = threadIdx.x; c < cols; c += kLongRowThreads)
    s += log_out ? load_acc(grad, base + c) : load_acc(grad, base + c) * load_acc(y, base + c);
  s = group_reduce(s, kLongRowThreads, smem, AddOp{});
  for (std::int64_t c = threadIdx.x; c < cols; c += kLongRowThreads)
    dx[base + c] = detail::narrow<T>(softmax_grad(log_out, load_acc(grad, base + c), load_acc(y, base + c), s));
}

template <class T>
__global__ void __launch_bounds__(kRowThreads)
    softmax_backward_columns_kernel(const T* grad, const T* y, T* dx, std::int64_t outer, std::int64_t dim,
                                    std::int64_t inner, bool log_out) {
  using A = acc_t<T>;
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kRowThreads + threadIdx.x;
  if (k >= outer * inner) return;
  const std::int64_t base = (k / inner) * dim * inner + k % inner;
  A s = 0;
  for (std::int64_t j = 0; j < dim; ++j) {
    const std::int64_t at = base + j * inner;
    s += log_out ? load_acc(grad, at) : load_acc(grad, at) * load_acc(y, at);
  }
  for (std::int64_t j = 0; j < dim; ++j) {
    const std::int64_t at = base + j * inner;
    dx[at] = detail::narrow<T>(softmax_grad(log_out, load_acc(grad, at), load_acc(y, at), s));
  }
}

}  // namespace

void softmax_backward(Op op, const Buffer& grad, const Buffer& y, const Buffer& dx, const ReduceExtents& e,
                      cudaStream_t stream) {
  detail::visit_dtype(y.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<acc_t<T>> || detail::is_complex_v<T>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(y.dtype()), " on cuda");
    } else {
      const bool log_out = op == Op::LogSoftmaxBackward;
      const T *g = grad.data_as<const T>(), *yy = y.data_as<const T>();
      T* o = dx.data_as<T>();
      if (e.inner > 1) {
        softmax_backward_columns_kernel<T><<<blocks_for(e.outer * e.inner, kRowThreads), kRowThreads, 0, stream>>>(
            g, yy, o, e.outer, e.dim, e.inner, log_out);
      } else {
        const std::int64_t rows = e.outer, cols = e.dim;
        const bool vec = rows_vectorisable<T>(cols, {g, yy, o});
        const bool fits = with_row_shape_for<T>(cols, 4096, [&](auto shape) {
          constexpr int G = decltype(shape)::kGroup, N = decltype(shape)::kItems;
          softmax_backward_rows_kernel<T, G, N><<<blocks_for(rows, kRowThreads / G), kRowThreads, 0, stream>>>(
              g, yy, o, rows, cols, log_out, vec);
        });
        if (!fits)
          softmax_backward_long_rows_kernel<T><<<static_cast<unsigned>(rows), kLongRowThreads, 0, stream>>>(g, yy, o, cols,
                                                                                                       log_out);
      }
      FERRITE_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace ferrite::cuda::reduction
