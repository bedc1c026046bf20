// softmax and log_softmax on the GPU (F32, F64, F16, BF16; float accumulation for the
// half types). out = exp(x - max) / sum, or x - max - log(sum), per row of the middle extent.
#include <cmath>

#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduction_kernels.cuh"
#include "cuda/reduction/rowwise_common.cuh"

namespace ferrite::cuda::reduction {
namespace {

// Rows in registers: one read, one write.
template <class T, class O, int G, int N>
__global__ void __launch_bounds__(kRowThreads)
    softmax_rows_kernel(const T* x, O* y, std::int64_t rows, std::int64_t cols, bool log_out, bool vec) {
  using A = acc_t<T>;
  __shared__ A smem[kRowThreads / 32];
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kRowThreads / G) + threadIdx.x / G;
  const int t = threadIdx.x % G;
  const bool active = row < rows;
  constexpr A kNegInf = -std::numeric_limits<A>::infinity();
  A v[N];
  if (active)
    load_items<T, G, N>(x + row * cols, cols, t, vec, v, kNegInf);
  else
#pragma unroll
    for (int n = 0; n < N; ++n) v[n] = kNegInf;
  A m = kNegInf;
#pragma unroll
  for (int n = 0; n < N; ++n) m = MaxOp{}(m, v[n]);
  m = group_reduce(m, G, smem, MaxOp{});
  A s = 0;
  if (log_out) {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      v[n] -= m;
      s += exp(v[n]);
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      v[n] = exp(v[n] - m);
      s += v[n];
    }
  }
  s = group_reduce(s, G, smem, AddOp{});
  if (!active) return;
  if (log_out) {
    const A log_s = log(s);
#pragma unroll
    for (int n = 0; n < N; ++n) v[n] -= log_s;
  } else {
    const A inverse = A(1) / s;
#pragma unroll
    for (int n = 0; n < N; ++n) v[n] *= inverse;
  }
  if constexpr (std::is_same_v<T, O>)
    store_items<T, G, N>(y + row * cols, cols, t, vec, v);
  else
    store_items_widened<T, O, G, N>(y + row * cols, cols, t, vec, v);
}

// Long rows: one block of 1024 threads per row, three passes (max, sum, write); the row is
// read three times.
template <class T, class O>
__global__ void __launch_bounds__(kLongRowThreads)
    softmax_long_rows_kernel(const T* x, O* y, std::int64_t cols, bool log_out) {
  using A = acc_t<T>;
  __shared__ A smem[kLongRowThreads / 32];
  const T* in = x + static_cast<std::int64_t>(blockIdx.x) * cols;
  O* out = y + static_cast<std::int64_t>(blockIdx.x) * cols;
  A m = -std::numeric_limits<A>::infinity();
  for (std::int64_t c = threadIdx.x; c < cols; c += kLongRowThreads) m = MaxOp{}(m, load_acc(in, c));
  m = group_reduce(m, kLongRowThreads, smem, MaxOp{});
  A s = 0;
  for (std::int64_t c = threadIdx.x; c < cols; c += kLongRowThreads) s += exp(load_acc(in, c) - m);
  s = group_reduce(s, kLongRowThreads, smem, AddOp{});
  const A log_s = log(s), inverse = A(1) / s;
  for (std::int64_t c = threadIdx.x; c < cols; c += kLongRowThreads) {
    const A d = load_acc(in, c) - m;
    out[c] = detail::narrow<O>(log_out ? d - log_s : exp(d) * inverse);
  }
}

// The dim is not the last: one thread per (outer, inner) column, three passes down it.
template <class T, class O>
__global__ void __launch_bounds__(kRowThreads)
    softmax_columns_kernel(const T* x, O* y, std::int64_t outer, std::int64_t dim, std::int64_t inner, bool log_out) {
  using A = acc_t<T>;
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kRowThreads + threadIdx.x;
  if (k >= outer * inner) return;
  const std::int64_t base = (k / inner) * dim * inner + k % inner;
  A m = -std::numeric_limits<A>::infinity();
  for (std::int64_t j = 0; j < dim; ++j) m = MaxOp{}(m, load_acc(x, base + j * inner));
  A s = 0;
  for (std::int64_t j = 0; j < dim; ++j) s += exp(load_acc(x, base + j * inner) - m);
  const A log_s = log(s), inverse = A(1) / s;
  for (std::int64_t j = 0; j < dim; ++j) {
    const A d = load_acc(x, base + j * inner) - m;
    y[base + j * inner] = detail::narrow<O>(log_out ? d - log_s : exp(d) * inverse);
  }
}

// Output O: T, or float for an F32 result of F16/BF16 input.
template <class T, class O>
void launch_softmax(bool log_out, const T* in, O* o, const ReduceExtents& e, cudaStream_t stream) {
  if (e.inner > 1) {
    softmax_columns_kernel<T, O><<<blocks_for(e.outer * e.inner, kRowThreads), kRowThreads, 0, stream>>>(
        in, o, e.outer, e.dim, e.inner, log_out);
  } else {
    const std::int64_t rows = e.outer, cols = e.dim;
    const bool vec = rows_vectorisable<T>(cols, {in}) && rows_vectorisable<O>(cols, {o});
    const bool fits = with_row_shape_for<T>(cols, 8192, [&](auto shape) {
      constexpr int G = decltype(shape)::kGroup, N = decltype(shape)::kItems;
      softmax_rows_kernel<T, O, G, N><<<blocks_for(rows, kRowThreads / G), kRowThreads, 0, stream>>>(in, o, rows, cols,
                                                                                                  log_out, vec);
    });
    if (!fits)
      softmax_long_rows_kernel<T, O><<<static_cast<unsigned>(rows), kLongRowThreads, 0, stream>>>(in, o, cols, log_out);
  }
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void softmax(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e, cudaStream_t stream) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<acc_t<T>> || detail::is_complex_v<T>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cuda");
    } else {
      const bool log_out = op == Op::LogSoftmax;
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        if (out.dtype() == DType::F32)
          return launch_softmax(log_out, x.data_as<const T>(), out.data_as<float>(), e, stream);
      }
      launch_softmax(log_out, x.data_as<const T>(), out.data_as<T>(), e, stream);
    }
  });
}

}  // namespace ferrite::cuda::reduction
