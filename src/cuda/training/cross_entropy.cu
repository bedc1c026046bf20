// Fused cross-entropy on the GPU: one block per row. The forward reads the row once,
// keeping a running (max, sum of exp(x - max), sum of x) per thread, rescaled per vector
// of 16 bytes, then merges the threads in a fixed butterfly order (deterministic, no
// atomics). The backward reads the row once and writes the gradient. F32 accumulation for
// every dtype; -inf logits contribute 0 even under a -inf max, as on the CPU.
#include <cmath>

#include "core/numeric.hpp"
#include "cuda/training/training_common.cuh"
#include "cuda/training/training_kernels.cuh"

namespace ferrite::cuda::training {
namespace {

using namespace ferrite::detail;

constexpr int kMaxCeThreads = 512;

struct Running {
  float m, s, sx;
};

__device__ __forceinline__ bool is_nan(float v) { return v != v; }

__device__ __forceinline__ float scaled(float s, float m, float to) {
  return m == -INFINITY ? 0.f : s * __expf(m - to);
}

__device__ __forceinline__ Running merge(Running a, Running b) {
  const float m = fmaxf(a.m, b.m);  // a NaN logit has already made its thread's sum NaN
  return {m, scaled(a.s, a.m, m) + scaled(b.s, b.m, m), a.sx + b.sx};
}

// The block's merged triple, in every thread. Commutative merges in a fixed tree.
__device__ Running block_merge(Running r) {
  __shared__ Running warps[kMaxCeThreads / 32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    Running other{__shfl_xor_sync(0xffffffffu, r.m, o), __shfl_xor_sync(0xffffffffu, r.s, o),
                  __shfl_xor_sync(0xffffffffu, r.sx, o)};
    r = merge(r, other);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nwarps = blockDim.x / 32;
  if (lane == 0) warps[warp] = r;
  __syncthreads();
  if (warp == 0) {
    r = lane < nwarps ? warps[lane] : Running{-INFINITY, 0.f, 0.f};
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      Running other{__shfl_xor_sync(0xffffffffu, r.m, o), __shfl_xor_sync(0xffffffffu, r.s, o),
                    __shfl_xor_sync(0xffffffffu, r.sx, o)};
      r = merge(r, other);
    }
  }
  return r;  // valid in warp 0
}

template <class T, int V>
__global__ void __launch_bounds__(kMaxCeThreads)
    ce_forward_kernel(const T* __restrict__ x, const std::int64_t* __restrict__ targets, float* __restrict__ loss,
                      float* __restrict__ lse, float* __restrict__ counted, std::int64_t C, std::int64_t ignore,
                      float keep_target, float per_class) {
  const std::int64_t row = blockIdx.x;
  const T* xr = x + row * C;
  Running r{-INFINITY, 0.f, 0.f};
  const std::int64_t vectors = C / V;
  for (std::int64_t i = threadIdx.x; i < vectors; i += blockDim.x) {
    const Pack<T, V> pk = reinterpret_cast<const Pack<T, V>*>(xr)[i];
    // The max ignores NaN (fmaxf): a NaN logit still makes the sum, and so the row, NaN
    // through exp(NaN - m). When the max is -inf every logit so far is -inf and adds 0
    // (one test per vector, not per element: the forward is bound by instruction issue).
    float f[V];
    float lm = -INFINITY;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      f[e] = static_cast<float>(widen(pk.v[e]));
      lm = fmaxf(lm, f[e]);
    }
    const float m = fmaxf(r.m, lm);
    float s = 0.f, sx = 0.f;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      s += __expf(f[e] - m);
      sx += f[e];
    }
    r.s = scaled(r.s, r.m, m) + (m == -INFINITY ? 0.f : s);
    r.sx += sx;
    r.m = m;
  }
  for (std::int64_t j = vectors * V + threadIdx.x; j < C; j += blockDim.x) {
    const float f = static_cast<float>(widen(xr[j]));
    r = merge(r, Running{f, f == -INFINITY ? 0.f : 1.f, f});
  }
  r = block_merge(r);
  if (threadIdx.x == 0) {
    // Σx is NaN exactly when the row holds a NaN or both infinities: then the CPU's
    // log-sum-exp is NaN too (exp(inf - inf)), which a row of -inf and one NaN would
    // otherwise miss here (the max skipped the NaN and the sum skipped the -infs).
    const float l = is_nan(r.sx) ? NAN : r.m + logf(r.s);
    lse[row] = l;
    const std::int64_t t = targets[row];
    if (t == ignore) {
      loss[row] = 0.f;
      counted[row] = 0.f;
    } else {
      counted[row] = 1.f;
      loss[row] = (t < 0 || t >= C) ? NAN
                                    : l - keep_target * static_cast<float>(widen(xr[t])) - per_class * r.sx;
    }
  }
}

template <class T, int V>
__global__ void __launch_bounds__(kMaxCeThreads)
    ce_backward_kernel(const T* __restrict__ x, const std::int64_t* __restrict__ targets, const float* __restrict__ grad,
                       bool per_row, const float* __restrict__ divisor, const float* __restrict__ lse,
                       T* __restrict__ out, std::int64_t C, std::int64_t ignore, float keep_target, float per_class) {
  const std::int64_t row = blockIdx.x;
  const T* xr = x + row * C;
  T* orow = out + row * C;
  const std::int64_t t = targets[row];
  const bool ignored = t == ignore;
  const float scale = ignored ? 0.f : grad[per_row ? row : 0] / (divisor ? *divisor : 1.f);
  const float l = lse[row];
  const std::int64_t vectors = C / V;
  for (std::int64_t i = threadIdx.x; i < vectors; i += blockDim.x) {
    const Pack<T, V> pk = reinterpret_cast<const Pack<T, V>*>(xr)[i];
    Pack<T, V> o;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const float p = __expf(static_cast<float>(widen(pk.v[e])) - l);
      const float hot = i * V + e == t ? keep_target : 0.f;
      o.v[e] = narrow<T>(ignored ? 0.f : scale * (p - hot - per_class));
    }
    reinterpret_cast<Pack<T, V>*>(orow)[i] = o;
  }
  for (std::int64_t j = vectors * V + threadIdx.x; j < C; j += blockDim.x) {
    const float p = __expf(static_cast<float>(widen(xr[j])) - l);
    const float hot = j == t ? keep_target : 0.f;
    orow[j] = narrow<T>(ignored ? 0.f : scale * (p - hot - per_class));
  }
}

int threads_for(std::int64_t work) { return work >= 4096 ? 512 : work >= 1024 ? 256 : work >= 256 ? 128 : 32; }

// Vector width: 16 bytes when every row starts 16-byte aligned, else one element.
template <class T>
bool rows_vectorizable(const void* base, std::int64_t C) {
  return reinterpret_cast<std::uintptr_t>(base) % 16 == 0 && (C * static_cast<std::int64_t>(sizeof(T))) % 16 == 0;
}

}  // namespace

void cross_entropy_forward(const CrossEntropyDesc& d, const Buffer& logits, const Buffer& targets, const Buffer& loss,
                           const Buffer& lse, const Buffer& counted, cudaStream_t stream) {
  if (d.rows == 0) return;
  const float keep = static_cast<float>(1 - d.label_smoothing);
  const float per_class = static_cast<float>(d.label_smoothing / static_cast<double>(d.classes));
  visit_float("cross_entropy", logits.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int V = 16 / sizeof(T);
    const T* x = logits.data_as<T>();
    const auto* t = targets.data_as<std::int64_t>();
    if (rows_vectorizable<T>(x, d.classes))
      ce_forward_kernel<T, V><<<static_cast<unsigned>(d.rows), threads_for(d.classes / V), 0, stream>>>(
          x, t, loss.data_as<float>(), lse.data_as<float>(), counted.data_as<float>(), d.classes, d.ignore_index, keep,
          per_class);
    else
      ce_forward_kernel<T, 1><<<static_cast<unsigned>(d.rows), threads_for(d.classes), 0, stream>>>(
          x, t, loss.data_as<float>(), lse.data_as<float>(), counted.data_as<float>(), d.classes, d.ignore_index, keep,
          per_class);
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

void cross_entropy_backward(const CrossEntropyDesc& d, const Buffer& grad, const Buffer& divisor, const Buffer& logits,
                            const Buffer& targets, const Buffer& lse, const Buffer& out, cudaStream_t stream) {
  if (d.rows == 0 || d.classes == 0) return;
  const float keep = static_cast<float>(1 - d.label_smoothing);
  const float per_class = static_cast<float>(d.label_smoothing / static_cast<double>(d.classes));
  const bool per_row = grad.numel() != 1;
  const float* div = divisor.numel() ? divisor.data_as<float>() : nullptr;
  visit_float("cross_entropy_backward", logits.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int V = 16 / sizeof(T);
    const T* x = logits.data_as<T>();
    T* o = out.data_as<T>();
    const auto* t = targets.data_as<std::int64_t>();
    if (rows_vectorizable<T>(x, d.classes) && rows_vectorizable<T>(o, d.classes))
      ce_backward_kernel<T, V><<<static_cast<unsigned>(d.rows), threads_for(d.classes / V), 0, stream>>>(
          x, t, grad.data_as<float>(), per_row, div, lse.data_as<float>(), o, d.classes, d.ignore_index, keep,
          per_class);
    else
      ce_backward_kernel<T, 1><<<static_cast<unsigned>(d.rows), threads_for(d.classes), 0, stream>>>(
          x, t, grad.data_as<float>(), per_row, div, lse.data_as<float>(), o, d.classes, d.ignore_index, keep,
          per_class);
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace ferrite::cuda::training
