// layer_norm and rms_norm forward on the GPU (F32, F64, F16, BF16; float statistics for the
// half types). RMS norm is the layer norm with the mean fixed at 0 and no bias:
//   y = (x - mean) * rstd * weight + bias,  rstd = 1 / sqrt(mean((x - mean)^2) + eps).
// The variance is taken around the mean of the row held in registers (two passes over
// registers, not E[x^2] - E[x]^2), so it does not cancel catastrophically; the second pass
// also corrects the mean (corrected_stats).
#include <cuda_pipeline.h>

#include <algorithm>
#include <cmath>

#include "core/dtype_dispatch.hpp"
#include "cuda/runtime/device_context.hpp"
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

// One row held in registers (v, N items of thread t of its group): statistics, mean/rstd, y.
// kCentred: layer norm (mean and variance); else RMS norm (mean(x²) only, no subtraction:
// the BF16 norms are bound by instruction issue). Every thread of the block calls it (the
// group reductions synchronise the block); inactive groups (row past the end) write nothing.
template <class T, int G, int N, bool kCentred>
__device__ __forceinline__ void norm_row(const NormArgs<T>& a, std::int64_t row, int t, bool active, bool vec,
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
  T* y = a.y + row * a.cols;
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
      *reinterpret_cast<Vec16<T>*>(y + first) = narrow_vector<T>(out);
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const std::int64_t c = static_cast<std::int64_t>(n) * G + t;
      if (c >= a.cols) continue;
      A value = kCentred ? (v[n] - mu) * r : v[n] * r;
      if (a.weight) value *= load_acc(a.weight, c);
      if (a.bias) value += load_acc(a.bias, c);
      y[c] = detail::narrow<T>(value);
    }
  }
}

// Rows in registers: one row per group of G threads, read once and written once.
template <class T, int G, int N, bool kCentred>
__global__ void __launch_bounds__(kRowThreads) norm_rows_kernel(NormArgs<T> a, bool vec) {
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
  norm_row<T, G, N, kCentred>(a, row, t, active, vec, v, smem, pair_smem);
}

// Two-byte rows (F16, BF16) of 16-byte vectors, whose arithmetic per byte is twice F32's:
// loaded in registers at the start of each block, a block had nothing in flight while it
// reduced and wrote its rows, and BF16 [65536, 4096] moved 3.0-3.4 TB/s where F32 reached
// 4.1 with the same code. Here the blocks stay resident (as many as fit at once) and walk over
// the rows; each thread copies its own vectors of its group's coming rows into shared memory
// (cp.async, no registers held) before it works on the current one. The arithmetic is
// norm_row's: the same bits as norm_rows_kernel.
// Run I (docs/performance.md), one row ahead and weight/bias re-read per row from L1/L2:
// BF16 [65536, 4096] layer_norm 3.08 -> 3.26 TB/s, rms_norm 3.46 -> 3.61, short of the ~3.9
// expected. Since then kForwardStages - 1 rows ahead: a block's work on a row is short next
// to the memory latency, so one row ahead left little more than one row per block in flight
// (4 blocks of 64 registers a multiprocessor: about 64 KB, where the F32 register kernel has
// about 96 KB). Holding each thread's weight and bias vectors in registers instead of
// re-reading them from L1 took 127 registers (2 blocks), or spilled at 80: not done.
template <class T, int N>
inline constexpr bool kStagedForward = sizeof(T) == 2 && N % Vec16<T>::kSize == 0;
inline constexpr int kForwardStages = 3;

template <class T, int N>
constexpr std::size_t staged_forward_bytes() {
  return static_cast<std::size_t>(kForwardStages) * (N / Vec16<T>::kSize) * kRowThreads * sizeof(Vec16<T>);
}

template <class T, int G, int N, bool kCentred>
__global__ void __launch_bounds__(kRowThreads) norm_rows_staged_kernel(NormArgs<T> a, std::int64_t row_blocks) {
  using A = acc_t<T>;
  constexpr int kGroups = kRowThreads / G, kV = Vec16<T>::kSize, kVectors = N / kV;
  __shared__ A smem[kRowThreads / 32];
  __shared__ SumPair<A> pair_smem[kCentred ? kRowThreads / 32 : 1];
  // [stage][vector][thread]: consecutive threads, consecutive 16-byte slots.
  Vec16<T>* const staged = staged_vectors<T>();
  auto slot = [&](std::int64_t it, int q) -> Vec16<T>& {
    return staged[(static_cast<int>(it % kForwardStages) * kVectors + q) * kRowThreads + threadIdx.x];
  };
  const int group = threadIdx.x / G, t = threadIdx.x % G;
  // Starts the copy of iteration it's row into stage it % kForwardStages (one commit group per
  // call, empty past the end). Each thread reads back only the slots it copied itself.
  auto stage = [&](std::int64_t it) {
    const std::int64_t block_row = it * gridDim.x + blockIdx.x;
    const std::int64_t row = block_row * kGroups + group;
    if (block_row < row_blocks && row < a.rows) {
#pragma unroll
      for (int q = 0; q < kVectors; ++q) {
        const std::int64_t first = (static_cast<std::int64_t>(q) * G + t) * kV;
        if (first < a.cols) __pipeline_memcpy_async(&slot(it, q), a.x + row * a.cols + first, 16);
      }
    }
    __pipeline_commit();
  };
#pragma unroll
  for (int it = 0; it < kForwardStages - 1; ++it) stage(it);
  // The loop bound is the same for every thread of the block (the reductions synchronise it).
  for (std::int64_t it = 0; it * gridDim.x + blockIdx.x < row_blocks; ++it) {
    const std::int64_t row = (it * gridDim.x + blockIdx.x) * kGroups + group;
    const bool active = row < a.rows;
    // Row it + kForwardStages - 1's copy goes out before this row's is awaited. Its stage
    // was last read in iteration it - 1, by this thread, before this point.
    stage(it + kForwardStages - 1);
    __pipeline_wait_prior(kForwardStages - 1);
    A v[N];
#pragma unroll
    for (int q = 0; q < kVectors; ++q) {
      // Vectors past the row's end (or of a row past the last) read as zeros: the choice is
      // made once per vector, not per element (+0 either way, the same bits as before).
      const bool inside = active && (static_cast<std::int64_t>(q) * G + t) * kV < a.cols;
      const Vec16<T> pack = inside ? slot(it, q) : Vec16<T>{};
#pragma unroll
      for (int k = 0; k < kV; ++k) v[q * kV + k] = static_cast<A>(detail::widen(pack.v[k]));
    }
    norm_row<T, G, N, kCentred>(a, row, t, active, true, v, smem, pair_smem);
  }
}

// Blocks of a staged launch: as many as are resident at once on the device, at most one
// per group of rows. Which block does a row changes nothing in its result.
template <class Kernel>
unsigned resident_blocks(Kernel kernel, std::int64_t row_blocks, std::size_t dynamic_bytes) {
  int device = 0, per_sm = 0;
  FERRITE_CUDA_CHECK(cudaGetDevice(&device));
  FERRITE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kRowThreads, dynamic_bytes));
  const std::int64_t resident =
      static_cast<std::int64_t>(std::max(per_sm, 1)) * DeviceContext::get(device).properties().multiProcessorCount;
  return static_cast<unsigned>(std::min(resident, row_blocks));
}

// Long rows: one block per row, passes over memory for the mean, the deviations and the
// output.
template <class T>
__global__ void __launch_bounds__(kLongRowThreads) norm_long_rows_kernel(NormArgs<T> a) {
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
        const unsigned blocks = blocks_for(rows, kRowThreads / G);
        if constexpr (kStagedForward<T, N>) {
          if (vec) {
            auto kernel = centred ? norm_rows_staged_kernel<T, G, N, true> : norm_rows_staged_kernel<T, G, N, false>;
            constexpr std::size_t bytes = staged_forward_bytes<T, N>();
            prepare_staged_kernel(kernel, bytes);
            kernel<<<resident_blocks(kernel, blocks, bytes), kRowThreads, bytes, stream>>>(a, blocks);
            return;
          }
        }
        if (centred)
          norm_rows_kernel<T, G, N, true><<<blocks, kRowThreads, 0, stream>>>(a, vec);
        else
          norm_rows_kernel<T, G, N, false><<<blocks, kRowThreads, 0, stream>>>(a, vec);
      });
      if (!fits) norm_long_rows_kernel<T><<<static_cast<unsigned>(rows), kLongRowThreads, 0, stream>>>(a);
      FERRITE_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace ferrite::cuda::reduction
