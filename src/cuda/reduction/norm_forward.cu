// layer_norm and rms_norm forward on the GPU (F32, F64, F16, BF16; float statistics for the
// half types). RMS norm is the layer norm with the mean fixed at 0 and no bias:
//   y = (x - mean) * rstd * weight + bias,  rstd = 1 / sqrt(mean((x - mean)^2) + eps).
// The variance is taken around the mean of the row held in registers (two passes over
// registers, not E[x^2] - E[x]^2), so it does not cancel catastrophically.
#include <cmath>

#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduction_kernels.cuh"
#include "cuda/reduction/rowwise_common.cuh"

namespace ferrite::cuda::reduction {
namespace {

template <class T>
struct NormArgs {
  using A = acc_t<T>;
  const T* x;
  const T* weight;  // null when absent
  const T* bias;    // null when absent
  T* y;
  A* mean;  // null for RMS norm
  A* rstd;
  std::int64_t rows, cols;
  A eps;
};

// Rows in registers: one row per group of G threads, read once and written once. Weight
// and bias are applied one vector at a time at the end (they are the same for every row,
// so they come from L1/L2), which keeps few registers live and many blocks resident.
template <class T, int G, int N>
__global__ void __launch_bounds__(kRowThreads) norm_rows_kernel(NormArgs<T> a, bool vec) {
  using A = acc_t<T>;
  constexpr int kV = Vec16<T>::kSize;
  __shared__ A smem[kRowThreads / 32];
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kRowThreads / G) + threadIdx.x / G;
  const int t = threadIdx.x % G;
  const bool active = row < a.rows;
  A v[N];
#pragma unroll
  for (int n = 0; n < N; ++n) v[n] = 0;
  if (active) load_items<T, G, N>(a.x + row * a.cols, a.cols, t, vec, v, A(0));
  A mu = 0;
  if (a.mean) {
    A s = 0;
#pragma unroll
    for (int n = 0; n < N; ++n) s += v[n];
    mu = group_reduce(s, G, smem, AddOp{}) / static_cast<A>(a.cols);
  }
  // Items past the row's end hold 0 and stay out of the variance. Columns grow with n, so a
  // thread whose last item is inside the row (every thread, when the row fills the shape)
  // skips the per-item test: the BF16 norms are bound by instruction issue. Same order of
  // additions either way.
  A d = 0;
  if (item_column<T, G, N>(N - 1, t, vec) < a.cols) {
#pragma unroll
    for (int n = 0; n < N; ++n) d += (v[n] - mu) * (v[n] - mu);
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n)
      if (item_column<T, G, N>(n, t, vec) < a.cols) d += (v[n] - mu) * (v[n] - mu);
  }
  d = group_reduce(d, G, smem, AddOp{});
  const A r = A(1) / sqrt(d / static_cast<A>(a.cols) + a.eps);
  if (!active) return;
  if (t == 0) {
    if (a.mean) a.mean[row] = mu;
    a.rstd[row] = r;
  }
  T* y = a.y + row * a.cols;
  if (N % kV == 0 && vec) {
#pragma unroll
    for (int q = 0; q < N / kV; ++q) {
      const std::int64_t first = (static_cast<std::int64_t>(q) * G + t) * kV;
      if (first >= a.cols) continue;
      Vec16<T> w, b, out;
      if (a.weight) w = *reinterpret_cast<const Vec16<T>*>(a.weight + first);
      if (a.bias) b = *reinterpret_cast<const Vec16<T>*>(a.bias + first);
#pragma unroll
      for (int k = 0; k < kV; ++k) {
        A value = (v[q * kV + k] - mu) * r;
        if (a.weight) value *= static_cast<A>(detail::widen(w.v[k]));
        if (a.bias) value += static_cast<A>(detail::widen(b.v[k]));
        out.v[k] = detail::narrow<T>(value);
      }
      *reinterpret_cast<Vec16<T>*>(y + first) = out;
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const std::int64_t c = static_cast<std::int64_t>(n) * G + t;
      if (c >= a.cols) continue;
      A value = (v[n] - mu) * r;
      if (a.weight) value *= load_acc(a.weight, c);
      if (a.bias) value += load_acc(a.bias, c);
      y[c] = detail::narrow<T>(value);
    }
  }
}

// Long rows: one block per row, passes over memory for the mean, the variance and the output.
template <class T>
__global__ void __launch_bounds__(kLongRowThreads) norm_long_rows_kernel(NormArgs<T> a) {
  using A = acc_t<T>;
  __shared__ A smem[kLongRowThreads / 32];
  const std::int64_t row = blockIdx.x;
  const T* x = a.x + row * a.cols;
  A mu = 0;
  if (a.mean) {
    A s = 0;
    for (std::int64_t c = threadIdx.x; c < a.cols; c += kLongRowThreads) s += load_acc(x, c);
    mu = group_reduce(s, kLongRowThreads, smem, AddOp{}) / static_cast<A>(a.cols);
  }
  A d = 0;
  for (std::int64_t c = threadIdx.x; c < a.cols; c += kLongRowThreads) d += (load_acc(x, c) - mu) * (load_acc(x, c) - mu);
  d = group_reduce(d, kLongRowThreads, smem, AddOp{});
  const A r = A(1) / sqrt(d / static_cast<A>(a.cols) + a.eps);
  if (threadIdx.x == 0) {
    if (a.mean) a.mean[row] = mu;
    a.rstd[row] = r;
  }
  for (std::int64_t c = threadIdx.x; c < a.cols; c += kLongRowThreads) {
    A out = (load_acc(x, c) - mu) * r;
    if (a.weight) out *= load_acc(a.weight, c);
    if (a.bias) out += load_acc(a.bias, c);
    a.y[row * a.cols + c] = detail::narrow<T>(out);
  }
}

}  // namespace

void norm_forward(bool centred, const Buffer& x, const Buffer& weight, const Buffer& bias, const Buffer& y,
                  const Buffer& mean, const Buffer& rstd, std::int64_t rows, std::int64_t cols, double eps,
                  cudaStream_t stream) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<acc_t<T>> || detail::is_complex_v<T>) {
      FERRITE_THROW(Unsupported, centred ? "layer_norm: " : "rms_norm: ", dtype_name(x.dtype()), " on cuda");
    } else {
      using A = acc_t<T>;
      NormArgs<T> a{x.data_as<const T>(),
                    weight.defined() ? weight.data_as<const T>() : nullptr,
                    bias.defined() ? bias.data_as<const T>() : nullptr,
                    y.data_as<T>(),
                    centred ? mean.data_as<A>() : nullptr,
                    rstd.data_as<A>(),
                    rows,
                    cols,
                    static_cast<A>(eps)};
      const bool vec = rows_vectorisable<T>(cols, {a.x, a.weight, a.bias, a.y});
      const bool fits = with_row_shape_for<T>(cols, 8192, [&](auto shape) {
        constexpr int G = decltype(shape)::kGroup, N = decltype(shape)::kItems;
        norm_rows_kernel<T, G, N><<<blocks_for(rows, kRowThreads / G), kRowThreads, 0, stream>>>(a, vec);
      });
      if (!fits) norm_long_rows_kernel<T><<<static_cast<unsigned>(rows), kLongRowThreads, 0, stream>>>(a);
      FERRITE_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace ferrite::cuda::reduction
