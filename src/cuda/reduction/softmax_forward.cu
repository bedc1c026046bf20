// softmax and log_softmax on the GPU (F32, F64, F16, BF16; float accumulation for the
// half types). out = exp(x - max) / sum, or x - max - log(sum), per row of the middle extent.
#include <cmath>

#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduction_kernels.cuh"
#include "cuda/reduction/rowwise_common.cuh"

namespace ferrite::cuda::reduction {
namespace {

// exp for a result of type O: F16 and BF16 results take the hardware's ex2 (__expf: a few
// float ulps, about 1e-6 relative for |x| < 100, far under their rounding of 2^-9 and 2^-12,
// and a fifth of expf's instructions: the BF16 kernels were bound by instruction issue);
// F32 and F64 results keep the accurate exp. exp(-Inf) is 0 and exp(NaN) NaN either way.
template <class O, class A>
__device__ __forceinline__ A softmax_exp(A x) {
  if constexpr (sizeof(O) == 2)
    return __expf(x);
  else
    return exp(x);
}

constexpr float kLog2e = 1.4426950408889634f;

// 2^x by the special-function unit (ex2.approx.ftz: about 2 float ulps; 2^-Inf = 0).
__device__ __forceinline__ float ex2_approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// The row maximum ignores NaN (one instruction instead of a NaN-propagating compare and
// select): a NaN in the row still makes the sum, and so every output, NaN.
struct FmaxOp {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return fmax(a, b);
  }
};

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
  for (int n = 0; n < N; ++n) m = fmax(m, v[n]);
  m = group_reduce(m, G, smem, FmaxOp{});
  A s = 0;
  if constexpr (sizeof(O) == 2) {
    // exp(v - m) as ex2(v·log2(e) - m·log2(e)): one FFMA and one MUFU per element, no
    // subtraction pass. Rounding m·log2(e) costs about 1e-7·|m| relative, far under F16's and
    // BF16's rounding. The NaN rules hold: m = ±Inf gives Inf - Inf for the infinite elements.
    const A m_log2e = m * kLog2e;
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const A e = ex2_approx(fma(v[n], kLog2e, -m_log2e));
      if (!log_out) v[n] = e;
      s += e;
    }
  } else if (log_out) {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      v[n] -= m;
      s += softmax_exp<O>(v[n]);
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      v[n] = softmax_exp<O>(v[n] - m);
      s += v[n];
    }
  }
  s = group_reduce(s, G, smem, AddOp{});
  if (!active) return;
  if (log_out) {
    // F16/BF16: v still holds x, so the shift is m + log(s).
    const A shift = sizeof(O) == 2 ? m + log(s) : log(s);
#pragma unroll
    for (int n = 0; n < N; ++n) v[n] -= shift;
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

// The maximum of part of a row and the sum of exp(x - maximum) over that part (online
// softmax: one pass over memory for both).
template <class A>
struct MaxSum {
  A m, s;
};

// Adds the K elements of v. A larger maximum first rescales the sum by exp(old - new) (0 from
// -Inf); then each element adds exp(v - m), except -Inf, which adds nothing (with m = -Inf,
// exp(-Inf + Inf) would be NaN). The NaN rules are the three-pass formula's: a NaN, or a +Inf
// (exp(Inf - Inf)), makes the sum NaN; a part of -Inf only keeps m = -Inf and s = 0.
template <class O, class A, int K>
__device__ __forceinline__ void add_to_max_sum(MaxSum<A>& a, const A (&v)[K]) {
  A local = v[0];
#pragma unroll
  for (int k = 1; k < K; ++k) local = fmax(local, v[k]);
  if (local > a.m) {
    a.s *= softmax_exp<O>(a.m - local);
    a.m = local;
  }
#pragma unroll
  for (int k = 0; k < K; ++k) a.s += v[k] == -std::numeric_limits<A>::infinity() ? A(0) : softmax_exp<O>(v[k] - a.m);
}

// Commutative (the same bits either way round): a part with s = 0 (only -Inf, or nothing)
// adds nothing, where its exp(m - m) could be exp(-Inf + Inf).
template <class O>
struct MergeMaxSum {
  template <class A>
  __device__ __forceinline__ MaxSum<A> operator()(MaxSum<A> a, MaxSum<A> b) const {
    const A m = fmax(a.m, b.m);
    const A sa = a.s == A(0) ? A(0) : a.s * softmax_exp<O>(a.m - m);
    const A sb = b.s == A(0) ? A(0) : b.s * softmax_exp<O>(b.m - m);
    return {m, sa + sb};
  }
};

// Long rows: one block of 1024 threads per row, two passes over memory: the maximum and the
// sum together (online), then the output. With 16-byte vectors (aligned rows), two vectors
// per thread in flight. The three-pass version (max, sum, write) read each row three times
// and reached 1.7 TB/s on [256, 262144] F32 against PyTorch's 2.0.
template <class T, class O>
__global__ void __launch_bounds__(kLongRowThreads)
    softmax_long_rows_kernel(const T* x, O* y, std::int64_t cols, bool log_out, bool vec) {
  using A = acc_t<T>;
  constexpr int kV = Vec16<T>::kSize, kThreads = kLongRowThreads;
  constexpr A kNegInf = -std::numeric_limits<A>::infinity();
  __shared__ MaxSum<A> smem[kThreads / 32];
  const T* in = x + static_cast<std::int64_t>(blockIdx.x) * cols;
  O* out = y + static_cast<std::int64_t>(blockIdx.x) * cols;
  MaxSum<A> ms{kNegInf, A(0)};
  const std::int64_t vectors = vec ? cols / kV : 0;
  auto load_vector = [&](std::int64_t q, A (&v)[kV]) {
    const Vec16<T> pack = reinterpret_cast<const Vec16<T>*>(in)[q];
#pragma unroll
    for (int k = 0; k < kV; ++k) v[k] = static_cast<A>(detail::widen(pack.v[k]));
  };
  for (std::int64_t q = threadIdx.x; q < vectors; q += 2 * kThreads) {
    A v0[kV], v1[kV];
    load_vector(q, v0);
    const bool second = q + kThreads < vectors;
    if (second) load_vector(q + kThreads, v1);
    add_to_max_sum<O>(ms, v0);
    if (second) add_to_max_sum<O>(ms, v1);
  }
  for (std::int64_t c = vectors * kV + threadIdx.x; c < cols; c += kThreads) {
    const A v[1] = {load_acc(in, c)};
    add_to_max_sum<O>(ms, v);
  }
  ms = group_reduce(ms, kThreads, smem, MergeMaxSum<O>{});
  const A m = ms.m, log_s = log(ms.s), inverse = A(1) / ms.s;
  auto result = [&](A v) {
    const A d = v - m;
    return log_out ? d - log_s : softmax_exp<O>(d) * inverse;
  };
  if (vec && Vec16<O>::kSize == kV) {  // same element size: one output vector per input vector
    for (std::int64_t q = threadIdx.x; q < vectors; q += 2 * kThreads) {
      A v0[kV], v1[kV];
      load_vector(q, v0);
      const bool second = q + kThreads < vectors;
      if (second) load_vector(q + kThreads, v1);
#pragma unroll
      for (int k = 0; k < kV; ++k) v0[k] = result(v0[k]);
      reinterpret_cast<Vec16<O>*>(out)[q] = narrow_vector<O>(v0);
      if (second) {
#pragma unroll
        for (int k = 0; k < kV; ++k) v1[k] = result(v1[k]);
        reinterpret_cast<Vec16<O>*>(out)[q + kThreads] = narrow_vector<O>(v1);
      }
    }
  } else {
    for (std::int64_t c = threadIdx.x; c < vectors * kV; c += kThreads)
      out[c] = detail::narrow<O>(result(load_acc(in, c)));
  }
  for (std::int64_t c = vectors * kV + threadIdx.x; c < cols; c += kThreads)
    out[c] = detail::narrow<O>(result(load_acc(in, c)));
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
  for (std::int64_t j = 0; j < dim; ++j) m = fmax(m, load_acc(x, base + j * inner));
  A s = 0;
  for (std::int64_t j = 0; j < dim; ++j) s += softmax_exp<O>(load_acc(x, base + j * inner) - m);
  const A log_s = log(s), inverse = A(1) / s;
  for (std::int64_t j = 0; j < dim; ++j) {
    const A d = load_acc(x, base + j * inner) - m;
    y[base + j * inner] = detail::narrow<O>(log_out ? d - log_s : softmax_exp<O>(d) * inverse);
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
    auto launch_rows = [&](auto shape) {
      constexpr int G = decltype(shape)::kGroup, N = decltype(shape)::kItems;
      softmax_rows_kernel<T, O, G, N><<<blocks_for(rows, kRowThreads / G), kRowThreads, 0, stream>>>(in, o, rows, cols,
                                                                                                  log_out, vec);
    };
    // Short rows of four-byte elements: 16 threads of two 16-byte vectors per row, not a warp
    // of one vector each: twice the bytes in flight per thread and one shuffle step fewer per
    // reduction. [1048576, 128] F32 on one H200: warps of one vector 4005 GB/s, 16 threads of
    // two 4118, 8 threads of four 4082.
    bool fits = false;
    if constexpr (sizeof(T) == 4)
      fits = cols <= 128 ? (launch_rows(RowShape<16, 8>{}), true) : with_row_shape_for<T>(cols, 8192, launch_rows);
    else
      fits = with_row_shape_for<T>(cols, 8192, launch_rows);
    if (!fits)
      softmax_long_rows_kernel<T, O><<<static_cast<unsigned>(rows), kLongRowThreads, 0, stream>>>(in, o, cols, log_out,
                                                                                                  vec);
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
