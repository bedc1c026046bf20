// layer_norm and rms_norm forward on the GPU (F32, F64, F16, BF16; float statistics for the
// half types). RMS norm is the layer norm with the mean fixed at 0 and no bias:
//   y = (x - mean) * rstd * weight + bias,  rstd = 1 / sqrt(mean((x - mean)^2) + eps).
// The variance is taken around the mean of the row held in registers (two passes over
// registers, not E[x^2] - E[x]^2), so it does not cancel catastrophically.
#include <algorithm>
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

// Rows in registers. The blocks stay resident and take rows in turn (the same number of
// turns for every block, since the turns synchronise the block), so weight and bias are
// loaded once per thread instead of once per row.
template <class T, int G, int N>
__global__ void __launch_bounds__(kRowThreads) norm_rows_kernel(NormArgs<T> a, std::int64_t turns, bool vec) {
  using A = acc_t<T>;
  constexpr int kGroups = kRowThreads / G;
  __shared__ A smem[kRowThreads / 32];
  const int t = threadIdx.x % G;
  A w[N], b[N];
#pragma unroll
  for (int n = 0; n < N; ++n) w[n] = 1, b[n] = 0;
  if (a.weight) load_items<T, G, N>(a.weight, a.cols, t, vec, w, A(1));
  if (a.bias) load_items<T, G, N>(a.bias, a.cols, t, vec, b, A(0));
  for (std::int64_t turn = 0; turn < turns; ++turn) {
    const std::int64_t row = (turn * gridDim.x + blockIdx.x) * kGroups + threadIdx.x / G;
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
    A d = 0;
#pragma unroll
    for (int n = 0; n < N; ++n)
      if (item_column<T, G, N>(n, t, vec) < a.cols) d += (v[n] - mu) * (v[n] - mu);
    d = group_reduce(d, G, smem, AddOp{});
    const A r = A(1) / sqrt(d / static_cast<A>(a.cols) + a.eps);
    if (!active) continue;
    if (t == 0) {
      if (a.mean) a.mean[row] = mu;
      a.rstd[row] = r;
    }
#pragma unroll
    for (int n = 0; n < N; ++n) v[n] = (v[n] - mu) * r * w[n] + b[n];
    store_items<T, G, N>(a.y + row * a.cols, a.cols, t, vec, v);
  }
}

// Long rows: one block per row, passes over memory for the mean, the variance and the output.
template <class T>
__global__ void __launch_bounds__(kRowThreads) norm_long_rows_kernel(NormArgs<T> a) {
  using A = acc_t<T>;
  __shared__ A smem[kRowThreads / 32];
  const std::int64_t row = blockIdx.x;
  const T* x = a.x + row * a.cols;
  A mu = 0;
  if (a.mean) {
    A s = 0;
    for (std::int64_t c = threadIdx.x; c < a.cols; c += kRowThreads) s += load_acc(x, c);
    mu = group_reduce(s, kRowThreads, smem, AddOp{}) / static_cast<A>(a.cols);
  }
  A d = 0;
  for (std::int64_t c = threadIdx.x; c < a.cols; c += kRowThreads) d += (load_acc(x, c) - mu) * (load_acc(x, c) - mu);
  d = group_reduce(d, kRowThreads, smem, AddOp{});
  const A r = A(1) / sqrt(d / static_cast<A>(a.cols) + a.eps);
  if (threadIdx.x == 0) {
    if (a.mean) a.mean[row] = mu;
    a.rstd[row] = r;
  }
  for (std::int64_t c = threadIdx.x; c < a.cols; c += kRowThreads) {
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
      const bool fits = with_row_shape(cols, 8192, [&](auto shape) {
        constexpr int G = decltype(shape)::kGroup, N = decltype(shape)::kItems;
        constexpr std::int64_t kMaxBlocks = 2048;
        const std::int64_t blocks = std::min<std::int64_t>(kMaxBlocks, blocks_for(rows, kRowThreads / G));
        const std::int64_t turns = (rows + blocks * (kRowThreads / G) - 1) / (blocks * (kRowThreads / G));
        norm_rows_kernel<T, G, N><<<static_cast<unsigned>(blocks), kRowThreads, 0, stream>>>(a, turns, vec);
      });
      if (!fits) norm_long_rows_kernel<T><<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(a);
      FERRITE_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace ferrite::cuda::reduction
