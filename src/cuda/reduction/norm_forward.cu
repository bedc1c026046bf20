// layer_norm and rms_norm forward on the GPU (F32, F64, F16, BF16; float statistics for the
// half types). RMS norm is the layer norm with the mean fixed at 0 and no bias:
//   y = (x - mean) * rstd * weight + bias,  rstd = 1 / sqrt(mean((x - mean)^2) + eps).
// The variance is taken around the mean of the row held in registers (two passes over
// registers, not E[x^2] - E[x]^2), so it does not cancel catastrophically; the second pass
// also corrects the mean (corrected_stats).
// y is T, or F16/BF16 for an F32 x (LayerNormOptions::out_dtype): the F32 kernels with an
// output type Y, each value computed as for an F32 y and rounded once to Y, so the rows are
// not written in F32 and read back by a cast.
#include <cmath>

#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduction_kernels.cuh"
#include "cuda/reduction/rowwise_common.cuh"

namespace ferrite::cuda::reduction {
namespace {

template <class T, class Y = T>
struct NormArgs {
  using A = acc_t<T>;
  const T* x;
  const T* weight;  // null when absent
  const T* bias;    // null when absent
  Y* y;
  A* mean;  // null for RMS norm
  A* rstd;
  std::int64_t rows, cols;
  A eps;
};

// The statistics of a layer-norm row from a first estimate mu0 = sum / n of its mean and the
// sums of the deviations d = x - mu0: mean = mu0 + sum(d) / n, variance = sum(d²) / n -
// (sum(d) / n)² (the corrected two-pass algorithm). mu0 alone is off by an ulp or so whenever
// n·mean rounds, and (x - mean)·rstd carried that error, times rstd (1/sqrt(eps), about 316,
// for a constant row), into every y: a constant F32 row gave y = bias ± 7e-5 where the CPU
// and PyTorch (whose Welford mean is exact there) give the bias. With the correction a
// constant row's mean is exact and its variance 0. A non-finite mu0 (a row with ±Inf or NaN)
// stays the mean, and the variance is then NaN (docs/families/reduction.md).
template <class A>
__device__ __forceinline__ void corrected_stats(A mu0, SumPair<A> deviations, A n, A& mean, A& var) {
  const A shift = deviations.a / n;
  mean = isfinite(mu0) ? mu0 + shift : mu0;
  var = deviations.b / n - shift * shift;
  if (var < A(0)) var = A(0);  // rounding of a variance near 0; a NaN stays
}

// Stores the kV values of one of a row's vectors at dst, as Y. Y = T: one 16-byte vector
// (narrow_vector). An F16/BF16 output of an F32 row: four values, one 8-byte store, each
// element rounded by detail::narrow (nearest even, the CPU's NaN: the same bits as an F32 y's
// .to(Y)); these rows are bound by memory (six bytes an element), not by issue, so the
// per-element NaN select of detail::narrow costs nothing measurable here.
template <class T, class Y, class A>
__device__ __forceinline__ void store_vector(Y* dst, const A* v) {
  if constexpr (std::is_same_v<T, Y>) {
    *reinterpret_cast<Vec16<T>*>(dst) = narrow_vector<T>(v);
  } else {
    static_assert(std::is_same_v<T, float> && sizeof(Y) == 2, "F16/BF16 output of an F32 row");
    constexpr int kV = Vec16<T>::kSize;  // 4
    struct alignas(kV * sizeof(Y)) Pack {
      Y v[kV];
    } pack;
#pragma unroll
    for (int k = 0; k < kV; ++k) pack.v[k] = detail::narrow<Y>(v[k]);
    *reinterpret_cast<Pack*>(dst) = pack;
  }
}

// One row held in registers (v, N items of thread t of its group): statistics, mean/rstd, y.
// kCentred: layer norm (mean and variance); else RMS norm (mean(x²) only, no subtraction:
// the BF16 norms are bound by instruction issue). Every thread of the block calls it (the
// group reductions synchronise the block); inactive groups (row past the end) write nothing.
template <class T, class Y, int G, int N, bool kCentred>
__device__ __forceinline__ void norm_row(const NormArgs<T, Y>& a, std::int64_t row, int t, bool active, bool vec,
                                         acc_t<T> (&v)[N], acc_t<T>* smem, SumPair<acc_t<T>>* pair_smem) {
  using A = acc_t<T>;
  constexpr int kV = Vec16<T>::kSize;
  const A n_cols = static_cast<A>(a.cols);
  // Items past the row's end hold 0 and stay out of the deviations. Columns grow with n, so
  // a thread whose last item is inside the row (every thread, when the row fills the shape)
  // skips the per-item test. Same order of additions either way.
  const bool full = item_column<T, G, N>(N - 1, t, vec) < a.cols;
  A mu = 0, var = 0;
  if constexpr (kCentred) {
    A s = 0;
#pragma unroll
    for (int n = 0; n < N; ++n) s += v[n];
    const A mu0 = group_reduce(s, G, smem, AddOp{}) / n_cols;
    SumPair<A> d{0, 0};
    auto add = [&](A x) {
      const A dev = x - mu0;
      d.a += dev;
      d.b += dev * dev;
    };
    // Two loops, so that full threads have no per-item test (one loop with the test inside
    // cost layer_norm BF16 [65536, 4096] 74% -> 65% of the copy ceiling).
    if (full) {
#pragma unroll
      for (int n = 0; n < N; ++n) add(v[n]);
    } else {
#pragma unroll
      for (int n = 0; n < N; ++n)
        if (item_column<T, G, N>(n, t, vec) < a.cols) add(v[n]);
    }
    corrected_stats(mu0, group_reduce(d, G, pair_smem, AddPair{}), n_cols, mu, var);
  } else {
    A d = 0;  // padding items are 0 and add nothing
#pragma unroll
    for (int n = 0; n < N; ++n) d += v[n] * v[n];
    var = group_reduce(d, G, smem, AddOp{}) / n_cols;
  }
  const A r = A(1) / sqrt(var + a.eps);
  if (!active) return;
  if (t == 0) {
    if (kCentred) a.mean[row] = mu;
    a.rstd[row] = r;
  }
  // Weight and bias are applied one vector at a time (they are the same for every row, so
  // they come from L1/L2), which keeps few registers live and many blocks resident.
  Y* y = a.y + row * a.cols;
  if (N % kV == 0 && vec) {
#pragma unroll
    for (int q = 0; q < N / kV; ++q) {
      const std::int64_t first = (static_cast<std::int64_t>(q) * G + t) * kV;
      if (first >= a.cols) continue;
      Vec16<T> w, b;
      if (a.weight) w = *reinterpret_cast<const Vec16<T>*>(a.weight + first);
      if (a.bias) b = *reinterpret_cast<const Vec16<T>*>(a.bias + first);
      A out[kV];
#pragma unroll
      for (int k = 0; k < kV; ++k) {
        A value = kCentred ? (v[q * kV + k] - mu) * r : v[q * kV + k] * r;
        if (a.weight) value *= static_cast<A>(detail::widen(w.v[k]));
        if (a.bias) value += static_cast<A>(detail::widen(b.v[k]));
        out[k] = value;
      }
      store_vector<T, Y>(y + first, out);
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const std::int64_t c = static_cast<std::int64_t>(n) * G + t;
      if (c >= a.cols) continue;
      A value = kCentred ? (v[n] - mu) * r : v[n] * r;
      if (a.weight) value *= load_acc(a.weight, c);
      if (a.bias) value += load_acc(a.bias, c);
      y[c] = detail::narrow<Y>(value);
    }
  }
}

// Rows in registers: one row per group of G threads, read once and written once.
template <class T, class Y, int G, int N, bool kCentred>
__global__ void __launch_bounds__(kRowThreads) norm_rows_kernel(NormArgs<T, Y> a, bool vec) {
  using A = acc_t<T>;
  __shared__ A smem[kRowThreads / 32];
  __shared__ SumPair<A> pair_smem[kCentred ? kRowThreads / 32 : 1];
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kRowThreads / G) + threadIdx.x / G;
  const int t = threadIdx.x % G;
  const bool active = row < a.rows;
  A v[N];
#pragma unroll
  for (int n = 0; n < N; ++n) v[n] = 0;
  if (active) load_items<T, G, N>(a.x + row * a.cols, a.cols, t, vec, v, A(0));
  norm_row<T, Y, G, N, kCentred>(a, row, t, active, vec, v, smem, pair_smem);
}

// Two-byte rows (F16, BF16) of 16-byte vectors, rows in registers as in norm_rows_kernel,
// written for few instructions per element: norm_rows_kernel's code spent about 26 an element
// on BF16 [65536, 4096] (a BF16 element moves 4 bytes, so an H200 at its copy ceiling issues
// about 30 an element) and reached 72% of the copy ceiling; a cp.async ring of stages in
// front of it (runs I and J, docs/performance.md) reached 73-76%. Measured on an H200 with a
// harness around this file (BF16 [65536, 4096], weight and bias, GB/s of the 4.3 TB/s
// ceiling): the per-element savings below 74% -> 78-86%; letting L1 keep weight and bias
// (the staged kernels asked for the largest shared-memory carveout, which left L1 too small
// for them, and every row re-read them from L2) and a register cap of 64 (four blocks a
// multiprocessor; uncapped, 96 registers left three and 67%) 86% -> 96.5%, rms_norm 96%.
//  * Each 32-bit word of a vector is widened by widen_word (a shift or a mask an element,
//    where 16-bit elements took two or three instructions each).
//  * Layer norm: the variance is mean((x - mu)^2) around the first-pass mean mu, without
//    corrected_stats' sum of deviations (one addition an element, a pair reduction instead
//    of a single one). That correction makes a constant row's mean exact, and for two-byte
//    elements the first-pass mean already is: k equal values c (k <= 8192) add exactly in
//    float (c has 8 significant bits in BF16, 11 in F16, so every partial sum k * c fits in
//    24), and (n * c) / n rounds to c; such a row gets mean c, variance 0, y = bias exactly.
//    Any other row: the mean is the float sum / n (float rounding, under the statistics'
//    1e-5 tolerance), and the variance exceeds the corrected one by (mean - mu)^2, of the
//    order of 1e-14 mean^2.
//  * y = fma(xhat, w, b): xhat * w + b rounded once instead of twice. The output loop has
//    four copies (weight and bias each present or not), so no per-element test or constant.
//  * A full thread (all its vectors inside the row: every thread when the row fills the
//    shape) loads and stores with no per-vector test, its weight and bias loads together.
template <class T, int N>
inline constexpr bool kTwoByteVectorRows = sizeof(T) == 2 && N % Vec16<T>::kSize == 0;

template <class T, int G, int N, bool kCentred>
__global__ void __launch_bounds__(kRowThreads, 4) norm_rows_two_byte_kernel(NormArgs<T> a) {
  using A = acc_t<T>;
  static_assert(std::is_same_v<A, float>, "two-byte elements, float statistics");
  constexpr int kV = Vec16<T>::kSize, kVectors = N / kV;
  __shared__ A smem[kRowThreads / 32];
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kRowThreads / G) + threadIdx.x / G;
  const int t = threadIdx.x % G;
  const bool active = row < a.rows;
  const int cols = static_cast<int>(a.cols);  // at most 8192 on the register paths
  // Vector q of this thread starts at column (q * G + t) * kV; columns grow with q, so the
  // thread is full when its last vector is inside the row.
  bool inside[kVectors];
#pragma unroll
  for (int q = 0; q < kVectors; ++q) inside[q] = (q * G + t) * kV < cols;
  const bool full = inside[kVectors - 1];
  A v[N];
  {
    // Vectors past the row's end (or of a row past the last) read as zeros.
    uint4 packs[kVectors];
    const uint4* const src = reinterpret_cast<const uint4*>(a.x + (active ? row : 0) * a.cols) + t;
    if (active && full) {
#pragma unroll
      for (int q = 0; q < kVectors; ++q) packs[q] = src[q * G];
    } else {
#pragma unroll
      for (int q = 0; q < kVectors; ++q) packs[q] = active && inside[q] ? src[q * G] : uint4{0, 0, 0, 0};
    }
#pragma unroll
    for (int q = 0; q < kVectors; ++q) {
      const unsigned words[4] = {packs[q].x, packs[q].y, packs[q].z, packs[q].w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 pair = widen_word<T>(words[j]);
        v[q * kV + 2 * j] = pair.x;
        v[q * kV + 2 * j + 1] = pair.y;
      }
    }
  }
  const A n_cols = static_cast<A>(a.cols);
  A mu = 0, d = 0;  // padding items are 0: they add nothing to the sums
  if constexpr (kCentred) {
    A sum = 0;
#pragma unroll
    for (int n = 0; n < N; ++n) sum += v[n];
    mu = group_reduce(sum, G, smem, AddOp{}) / n_cols;
    if (full) {
#pragma unroll
      for (int n = 0; n < N; ++n) d += (v[n] - mu) * (v[n] - mu);
    } else {
#pragma unroll
      for (int n = 0; n < N; ++n)
        if (inside[n / kV]) d += (v[n] - mu) * (v[n] - mu);
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) d += v[n] * v[n];
  }
  const A var = group_reduce(d, G, smem, AddOp{}) / n_cols;
  const A r = A(1) / sqrt(var + a.eps);
  if (!active) return;  // after the reductions, which every thread of the block joins
  if (t == 0) {
    if (kCentred) a.mean[row] = mu;
    a.rstd[row] = r;
  }
  // w = 1 and b = -0 stand in for an absent weight or bias: fma(x, 1, b) = x + b and
  // fma(x, w, -0) = x * w exactly, signed zeros included.
  constexpr uint4 kOnes{kOnesWord<T>, kOnesWord<T>, kOnesWord<T>, kOnesWord<T>};
  constexpr uint4 kNegativeZeros{0x80008000u, 0x80008000u, 0x80008000u, 0x80008000u};
  const uint4* const weight = a.weight ? reinterpret_cast<const uint4*>(a.weight) + t : nullptr;
  const uint4* const bias = kCentred && a.bias ? reinterpret_cast<const uint4*>(a.bias) + t : nullptr;
  uint4* const y = reinterpret_cast<uint4*>(a.y + row * a.cols) + t;
  // Vector q of the output from the parameters' words w_of(q), b_of(q).
  auto write_vector = [&](int q, auto w_of, auto b_of) {
    const uint4 w = w_of(q), b = b_of(q);
    const unsigned w_words[4] = {w.x, w.y, w.z, w.w};
    [[maybe_unused]] const unsigned b_words[4] = {b.x, b.y, b.z, b.w};
    A out[kV];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 wp = widen_word<T>(w_words[j]);
      const A x0 = v[q * kV + 2 * j], x1 = v[q * kV + 2 * j + 1];
      if constexpr (kCentred) {
        const float2 bp = widen_word<T>(b_words[j]);
        out[2 * j] = fmaf((x0 - mu) * r, wp.x, bp.x);
        out[2 * j + 1] = fmaf((x1 - mu) * r, wp.y, bp.y);
      } else {
        out[2 * j] = x0 * r * wp.x;
        out[2 * j + 1] = x1 * r * wp.y;
      }
    }
    *reinterpret_cast<Vec16<T>*>(y + q * G) = narrow_vector<T>(out);
  };
  auto write = [&](auto w_of, auto b_of) {
    if (full) {
#pragma unroll
      for (int q = 0; q < kVectors; ++q) write_vector(q, w_of, b_of);
    } else {
#pragma unroll
      for (int q = 0; q < kVectors; ++q)
        if (inside[q]) write_vector(q, w_of, b_of);
    }
  };
  // Weight and bias come through L1 (every block of the launch reads the same ones).
  auto w_loaded = [&](int q) { return __ldg(weight + q * G); };
  auto b_loaded = [&](int q) { return __ldg(bias + q * G); };
  auto ones = [&](int) { return kOnes; };
  auto negative_zeros = [&](int) { return kNegativeZeros; };
  if (!bias) {
    if (weight) write(w_loaded, negative_zeros);
    else write(ones, negative_zeros);
  } else {
    if (weight) write(w_loaded, b_loaded);
    else write(ones, b_loaded);
  }
}

// Long rows: one block per row, passes over memory for the mean, the deviations and the
// output.
template <class T, class Y>
__global__ void __launch_bounds__(kLongRowThreads) norm_long_rows_kernel(NormArgs<T, Y> a) {
  using A = acc_t<T>;
  __shared__ A smem[kLongRowThreads / 32];
  __shared__ SumPair<A> pair_smem[kLongRowThreads / 32];
  const std::int64_t row = blockIdx.x;
  const T* x = a.x + row * a.cols;
  const A n_cols = static_cast<A>(a.cols);
  A mu = 0, var = 0;
  if (a.mean) {
    A s = 0;
    for (std::int64_t c = threadIdx.x; c < a.cols; c += kLongRowThreads) s += load_acc(x, c);
    const A mu0 = group_reduce(s, kLongRowThreads, smem, AddOp{}) / n_cols;
    SumPair<A> d{0, 0};
    for (std::int64_t c = threadIdx.x; c < a.cols; c += kLongRowThreads) {
      const A dev = load_acc(x, c) - mu0;
      d.a += dev;
      d.b += dev * dev;
    }
    corrected_stats(mu0, group_reduce(d, kLongRowThreads, pair_smem, AddPair{}), n_cols, mu, var);
  } else {
    A d = 0;
    for (std::int64_t c = threadIdx.x; c < a.cols; c += kLongRowThreads) d += load_acc(x, c) * load_acc(x, c);
    var = group_reduce(d, kLongRowThreads, smem, AddOp{}) / n_cols;
  }
  const A r = A(1) / sqrt(var + a.eps);
  if (threadIdx.x == 0) {
    if (a.mean) a.mean[row] = mu;
    a.rstd[row] = r;
  }
  for (std::int64_t c = threadIdx.x; c < a.cols; c += kLongRowThreads) {
    A out = (load_acc(x, c) - mu) * r;
    if (a.weight) out *= load_acc(a.weight, c);
    if (a.bias) out += load_acc(a.bias, c);
    a.y[row * a.cols + c] = detail::narrow<Y>(out);
  }
}

// Launches the forward of rows of T written as Y (Y = T, or F16/BF16 for F32 T).
template <class T, class Y>
void launch_norm_forward(bool centred, const NormArgs<T, Y>& a, std::int64_t rows, std::int64_t cols,
                         cudaStream_t stream) {
  const bool vec = rows_vectorisable<T>(cols, {a.x, a.weight, a.bias, a.y});
  const bool fits = with_row_shape_for<T>(cols, 8192, [&](auto shape) {
    constexpr int G = decltype(shape)::kGroup, N = decltype(shape)::kItems;
    const unsigned blocks = blocks_for(rows, kRowThreads / G);
    if constexpr (std::is_same_v<T, Y> && kTwoByteVectorRows<T, N>) {
      if (vec) {
        if (centred)
          norm_rows_two_byte_kernel<T, G, N, true><<<blocks, kRowThreads, 0, stream>>>(a);
        else
          norm_rows_two_byte_kernel<T, G, N, false><<<blocks, kRowThreads, 0, stream>>>(a);
        return;
      }
    }
    if (centred)
      norm_rows_kernel<T, Y, G, N, true><<<blocks, kRowThreads, 0, stream>>>(a, vec);
    else
      norm_rows_kernel<T, Y, G, N, false><<<blocks, kRowThreads, 0, stream>>>(a, vec);
  });
  if (!fits) norm_long_rows_kernel<T, Y><<<static_cast<unsigned>(rows), kLongRowThreads, 0, stream>>>(a);
  FERRITE_CUDA_CHECK_LAUNCH();
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
      auto args = [&](auto* out) {
        using Y = std::remove_pointer_t<decltype(out)>;
        return NormArgs<T, Y>{x.data_as<const T>(),
                              weight.defined() ? weight.data_as<const T>() : nullptr,
                              bias.defined() ? bias.data_as<const T>() : nullptr,
                              out,
                              centred ? mean.data_as<A>() : nullptr,
                              rstd.data_as<A>(),
                              rows,
                              cols,
                              static_cast<A>(eps)};
      };
      if (y.dtype() == x.dtype()) {
        launch_norm_forward(centred, args(y.data_as<T>()), rows, cols, stream);
        return;
      }
      // The mixed-precision outputs (the front end allows only these).
      if constexpr (std::is_same_v<T, float>) {
        if (y.dtype() == DType::BF16) {
          launch_norm_forward(centred, args(y.data_as<BFloat16>()), rows, cols, stream);
          return;
        }
        if (y.dtype() == DType::F16) {
          launch_norm_forward(centred, args(y.data_as<Half>()), rows, cols, stream);
          return;
        }
      }
      FERRITE_THROW(Unsupported, centred ? "layer_norm: " : "rms_norm: ", dtype_name(y.dtype()), " output of ",
                    dtype_name(x.dtype()), " input on cuda");
    }
  });
}

}  // namespace ferrite::cuda::reduction
