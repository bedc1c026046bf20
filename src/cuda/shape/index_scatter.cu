// scatter_add and embedding_backward on the GPU, deterministic: instead of atomics (whose
// float sums depend on scheduling), the targets are sorted with a stable radix sort (so
// duplicates keep ascending index-position order) and one thread per (target, column) adds
// its run of sources in that order. Half types accumulate in float and round once.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>

#include "core/elementwise_functors.hpp"
#include "core/numeric.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/shape/shape_device.cuh"
#include "cuda/shape/shape_kernels.hpp"
#include "cuda/shape/shape_runtime.hpp"

namespace ferrite::cuda::shape {
namespace {

constexpr int kThreads = 256;

struct KeyPlan {
  int rank, dim;
  std::int64_t n, dim_size;
  std::uint64_t sentinel;  // the key of a bad index: above every valid target, so it sorts last
  std::int64_t sizes[kMaxIndexDims];
  std::int64_t data_strides[kMaxIndexDims];
  std::int64_t src_strides[kMaxIndexDims];
};

template <class I>
__global__ void __launch_bounds__(kThreads) keys_kernel(const I* __restrict__ index, const KeyPlan p,
                                                        std::uint64_t* __restrict__ keys,
                                                        std::int64_t* __restrict__ sources, long long* range) {
  long long lo = LLONG_MAX, hi = LLONG_MIN;
  for (std::int64_t i = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; i < p.n; i += std::int64_t(gridDim.x) * kThreads) {
    std::int64_t rest = i, target = 0, source = 0;
    for (int k = p.rank - 1; k >= 0; --k) {
      const std::int64_t c = rest % p.sizes[k];
      rest /= p.sizes[k];
      if (k != p.dim) target += c * p.data_strides[k];
      source += c * p.src_strides[k];
    }
    const long long raw = index[i];
    lo = min(lo, raw);
    hi = max(hi, raw);
    const std::int64_t v = raw < 0 ? raw + p.dim_size : raw;
    const bool valid = v >= 0 && v < p.dim_size;
    keys[i] = valid ? static_cast<std::uint64_t>(target + v * p.data_strides[p.dim]) : p.sentinel;
    sources[i] = source;
  }
  fold_range(lo, hi, range);
}

// One thread per (sorted position, column); the first position of each run of equal keys
// sums the run, in order, onto the target's starting value.
template <class T>
__global__ void __launch_bounds__(kThreads) run_sum_kernel(const std::uint64_t* __restrict__ keys,
                                                           const std::int64_t* __restrict__ sources, std::int64_t n,
                                                           std::int64_t width, FastDivmod width_div, bool fast,
                                                           std::uint64_t sentinel, const T* __restrict__ src,
                                                           T* __restrict__ out) {
  const std::int64_t total = n * width;
  for (std::int64_t t = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; t < total; t += std::int64_t(gridDim.x) * kThreads) {
    std::int64_t q, c;
    if (fast) {
      const std::uint32_t q32 = width_div.div(static_cast<std::uint32_t>(t));
      q = q32;
      c = static_cast<std::uint32_t>(t) - q32 * width_div.divisor;
    } else {
      q = t / width;
      c = t % width;
    }
    const std::uint64_t key = keys[q];
    if (key == sentinel || (q > 0 && keys[q - 1] == key)) continue;
    T* target = out + static_cast<std::int64_t>(key) * width + c;
    // The widened sum (float for F16/BF16, I64 for I32: integers wrap, so narrowing once at
    // the end gives the same bits as wrapping at every step), rounded once.
    detail::wide_t<T> acc = detail::widen(*target);
    for (std::int64_t p = q; p < n && keys[p] == key; ++p)
      acc = detail::AddFn{}(acc, detail::widen(src[sources[p] * width + c]));
    *target = detail::narrow<T>(acc);
  }
}

template <class T>
void launch_run_sum(const std::uint64_t* keys, const std::int64_t* sources, std::int64_t n, std::int64_t width,
                    std::uint64_t sentinel, const void* src, void* out, cudaStream_t stream) {
  const bool fast = n * width < (std::int64_t(1) << 31);
  const FastDivmod width_div(fast ? static_cast<std::uint32_t>(width) : 1);
  run_sum_kernel<T><<<grid_stride_blocks(n * width, kThreads), kThreads, 0, stream>>>(
      keys, sources, n, width, width_div, fast, sentinel, static_cast<const T*>(src), static_cast<T*>(out));
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void scatter_sum(DType dtype, const Buffer& index, const void* src, void* out, const IndexLayout& l,
                 std::int64_t num_targets, std::int64_t width, long long* range, int device, cudaStream_t stream) {
  KeyPlan p{};
  p.rank = l.rank;
  p.dim = l.dim;
  p.dim_size = l.dim_size;
  p.n = 1;
  for (int k = 0; k < l.rank; ++k) {
    p.sizes[k] = l.sizes[k];
    p.data_strides[k] = l.data_strides[k];
    p.src_strides[k] = l.src_strides[k];
    p.n *= l.sizes[k];
  }
  if (p.n == 0) return;
  p.sentinel = static_cast<std::uint64_t>(num_targets);
  const std::size_t n = static_cast<std::size_t>(p.n);
  Scratch keys(device, 2 * n * sizeof(std::uint64_t), stream), sources(device, 2 * n * sizeof(std::int64_t), stream);
  std::uint64_t* keys_in = keys.as<std::uint64_t>();
  std::uint64_t* keys_out = keys_in + n;
  std::int64_t* sources_in = sources.as<std::int64_t>();
  std::int64_t* sources_out = sources_in + n;

  const unsigned blocks = grid_stride_blocks(p.n, kThreads, 4096);  // each block folds its range with one atomic pair
  if (index.dtype() == DType::I32)
    keys_kernel<std::int32_t><<<blocks, kThreads, 0, stream>>>(index.data_as<std::int32_t>(), p, keys_in, sources_in, range);
  else
    keys_kernel<std::int64_t><<<blocks, kThreads, 0, stream>>>(index.data_as<std::int64_t>(), p, keys_in, sources_in, range);
  FERRITE_CUDA_CHECK_LAUNCH();

  // Only the bits a key can use: the sentinel is the largest key.
  int end_bit = 1;
  while (end_bit < 64 && (p.sentinel >> end_bit) != 0) ++end_bit;
  std::size_t temp_bytes = 0;
  FERRITE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out, sources_in, sources_out,
                                                     p.n, 0, end_bit, stream));
  Scratch temp(device, temp_bytes, stream);
  FERRITE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.as<void>(), temp_bytes, keys_in, keys_out, sources_in,
                                                     sources_out, p.n, 0, end_bit, stream));
  switch (dtype) {
    case DType::F32: return launch_run_sum<float>(keys_out, sources_out, p.n, width, p.sentinel, src, out, stream);
    case DType::F64: return launch_run_sum<double>(keys_out, sources_out, p.n, width, p.sentinel, src, out, stream);
    case DType::F16: return launch_run_sum<Half>(keys_out, sources_out, p.n, width, p.sentinel, src, out, stream);
    case DType::BF16: return launch_run_sum<BFloat16>(keys_out, sources_out, p.n, width, p.sentinel, src, out, stream);
    case DType::I32: return launch_run_sum<std::int32_t>(keys_out, sources_out, p.n, width, p.sentinel, src, out, stream);
    case DType::I64: return launch_run_sum<std::int64_t>(keys_out, sources_out, p.n, width, p.sentinel, src, out, stream);
    default: FERRITE_THROW(Unsupported, "scatter_add: dtype ", dtype_name(dtype), " is not supported on cuda");
  }
}

}  // namespace ferrite::cuda::shape
