// The reduction engine: one kernel family for every reduction over [outer, dim, inner].
// Include only from the .cu files that instantiate it.
//
//  * inner == 1 (the reduced dim is contiguous): a group of threads per (row, split); groups
//    are 32..256 threads wide so short rows ([1048576, 128]) still fill whole warps, and
//    each thread streams 16-byte vectors (the unaligned head and tail of a row go scalar).
//    Rows too long for one block (few rows: a full reduction, [256, 262144]) are split over
//    several blocks; the blocks write partials and a second kernel merges each row's partials
//    in index order. No atomics: the split depends only on the extents, so results are
//    bitwise reproducible.
//  * inner > 1: one thread per output element walks the dim; neighbouring threads read
//    neighbouring addresses, so the loads are coalesced. When there are few outputs and a
//    long dim (a sum over the rows of [65536, 4096]), the dim is split over blockIdx.y, each
//    split writes partials, and a second kernel merges them in split order.
//
// A reducer R provides acc_t, out_t, identity(), step(acc, value, index), merge(a, b) and
// finish(acc, dim). Each accumulator is stepped through its elements in increasing index
// order (argmax relies on it); merge takes any two accumulators. A source provides value_t,
// load(flat index) and, when kVector, a raw pointer for vector loads.
#pragma once

#include <algorithm>
#include <memory>

#include "cuda/reduction/reduce_common.cuh"
#include "cuda/reduction/reduction_kernels.cuh"

namespace ferrite::cuda::reduction {

inline constexpr int kReduceThreads = 256;
inline constexpr int kReduceUnroll = 4;

template <class T>
struct PlainSource {
  using value_t = T;
  static constexpr bool kVector = true;
  const T* ptr;
  __device__ __forceinline__ T load(std::int64_t i) const { return ptr[i]; }
};

/// Elements outside the mask read as the reducer's identity.
template <class T>
struct MaskedSource {
  using value_t = T;
  static constexpr bool kVector = false;
  const T* ptr;
  const bool* mask;
  T fill;
  __device__ __forceinline__ T load(std::int64_t i) const { return mask[i] ? ptr[i] : fill; }
};

/// Steps over elements [lo, hi) of the flat tensor (row starts at `row_base`) with thread t of
/// a group of `group` threads; each thread's own elements in increasing order.
template <class R, class Src>
__device__ __forceinline__ typename R::acc_t accumulate_range(const R& r, const Src& src, std::int64_t row_base,
                                                              std::int64_t lo, std::int64_t hi, int t, int group) {
  using T = typename Src::value_t;
  typename R::acc_t acc = r.identity();
  if constexpr (Src::kVector) {
    using V = Vec16<T>;
    constexpr int kV = V::kSize;
    const auto address = reinterpret_cast<std::uintptr_t>(src.ptr + lo);
    std::int64_t head = static_cast<std::int64_t>((16 - address % 16) % 16 / sizeof(T));
    head = head < hi - lo ? head : hi - lo;
    if (t < head) acc = r.step(acc, src.ptr[lo + t], lo + t - row_base);
    const std::int64_t first = lo + head;
    const std::int64_t vectors = (hi - first) / kV;
    const V* vp = reinterpret_cast<const V*>(src.ptr + first);
    for (std::int64_t i = t; i < vectors; i += static_cast<std::int64_t>(group) * kReduceUnroll) {
      V pack[kReduceUnroll];
#pragma unroll
      for (int u = 0; u < kReduceUnroll; ++u)
        if (i + u * group < vectors) pack[u] = vp[i + u * group];
#pragma unroll
      for (int u = 0; u < kReduceUnroll; ++u)
        if (i + u * group < vectors) {
#pragma unroll
          for (int k = 0; k < kV; ++k)
            acc = r.step(acc, pack[u].v[k], first + (i + u * group) * kV + k - row_base);
        }
    }
    const std::int64_t tail = first + vectors * kV + t;
    if (tail < hi) acc = r.step(acc, src.ptr[tail], tail - row_base);
  } else {
    for (std::int64_t i = lo + t; i < hi; i += group) acc = r.step(acc, src.load(i), i - row_base);
  }
  return acc;
}

template <class R, class Src>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_rows_kernel(Src src, typename R::out_t* out, typename R::acc_t* partials, R r, std::int64_t rows,
                       std::int64_t dim, std::int64_t chunk, int splits, int group) {
  __shared__ typename R::acc_t smem[kReduceThreads / 32];
  const std::int64_t task = static_cast<std::int64_t>(blockIdx.x) * (kReduceThreads / group) + threadIdx.x / group;
  const int t = threadIdx.x % group;
  const bool active = task < rows * splits;
  typename R::acc_t acc = r.identity();
  if (active) {
    const std::int64_t row = task / splits, split = task % splits;
    const std::int64_t lo = split * chunk, hi = lo + chunk < dim ? lo + chunk : dim;
    acc = accumulate_range(r, src, row * dim, row * dim + lo, row * dim + hi, t, group);
  }
  acc = group_reduce(acc, group, smem, [&](auto a, auto b) { return r.merge(a, b); });
  if (active && t == 0) {
    if (splits == 1)
      out[task] = r.finish(acc, dim);
    else
      partials[task] = acc;
  }
}

template <class R>
__global__ void __launch_bounds__(kReduceThreads)
    merge_partials_kernel(const typename R::acc_t* partials, typename R::out_t* out, R r, int splits,
                          std::int64_t dim) {
  __shared__ typename R::acc_t smem[kReduceThreads / 32];
  const std::int64_t row = blockIdx.x;
  typename R::acc_t acc = r.identity();
  for (int s = threadIdx.x; s < splits; s += kReduceThreads) acc = r.merge(acc, partials[row * splits + s]);
  acc = group_reduce(acc, kReduceThreads, smem, [&](auto a, auto b) { return r.merge(a, b); });
  if (threadIdx.x == 0) out[row] = r.finish(acc, dim);
}

template <class R, class Src>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_columns_kernel(Src src, typename R::out_t* out, typename R::acc_t* partials, R r, std::int64_t outer,
                          std::int64_t dim, std::int64_t inner, std::int64_t chunk) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x;
  const std::int64_t outputs = outer * inner;
  if (k >= outputs) return;
  const std::int64_t base = (k / inner) * dim * inner + k % inner;
  const std::int64_t lo = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t hi = lo + chunk < dim ? lo + chunk : dim;
  typename R::acc_t acc = r.identity();
  for (std::int64_t j = lo; j < hi; ++j) acc = r.step(acc, src.load(base + j * inner), j);
  if (partials)
    partials[static_cast<std::int64_t>(blockIdx.y) * outputs + k] = acc;
  else
    out[k] = r.finish(acc, dim);
}

template <class R>
__global__ void __launch_bounds__(kReduceThreads)
    merge_column_partials_kernel(const typename R::acc_t* partials, typename R::out_t* out, R r,
                                 std::int64_t outputs, int splits, std::int64_t dim) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x;
  if (k >= outputs) return;
  typename R::acc_t acc = partials[k];
  for (int s = 1; s < splits; ++s) acc = r.merge(acc, partials[static_cast<std::int64_t>(s) * outputs + k]);
  out[k] = r.finish(acc, dim);
}

/// Threads per row group: enough for about two 16-byte vectors per thread, 32 to 256.
inline int group_for(std::int64_t dim, int elems_per_vector) {
  const std::int64_t vectors = (dim + elems_per_vector - 1) / elems_per_vector;
  int group = 32;
  while (group < kReduceThreads && static_cast<std::int64_t>(group) * 2 < vectors) group *= 2;
  return group;
}

/// Runs reducer r over src viewed as [outer, dim, inner] into out (outer * inner elements).
/// `like` names the device for scratch memory.
template <class R, class Src>
void launch_reduce(const Src& src, typename R::out_t* out, const R& r, const ReduceExtents& e, const Buffer& like,
                   cudaStream_t stream) {
  const std::int64_t outputs = e.outer * e.inner;
  if (outputs == 0) return;
  if (e.inner > 1 || e.dim == 0) {
    // Split the dim until about 2^18 threads run, each walking at least 64 elements; the
    // split depends on the extents only.
    constexpr std::int64_t kTargetThreads = std::int64_t(1) << 18, kMinWalk = 64;
    std::int64_t splits = 1;
    if (e.dim >= 1024 && outputs < kTargetThreads)
      splits = std::min({(kTargetThreads + outputs - 1) / outputs, e.dim / kMinWalk, std::int64_t(1024)});
    const std::int64_t chunk = splits > 1 ? (e.dim + splits - 1) / splits : (e.dim > 0 ? e.dim : 1);
    splits = e.dim > 0 ? (e.dim + chunk - 1) / chunk : 1;
    std::shared_ptr<Storage> partial_storage;
    typename R::acc_t* partials = nullptr;
    if (splits > 1) {
      partial_storage = scratch(like, static_cast<std::size_t>(splits * outputs) * sizeof(typename R::acc_t));
      partials = static_cast<typename R::acc_t*>(partial_storage->data());
    }
    const dim3 grid(static_cast<unsigned>(blocks_for(outputs, kReduceThreads)), static_cast<unsigned>(splits));
    reduce_columns_kernel<R, Src><<<grid, kReduceThreads, 0, stream>>>(src, out, partials, r, e.outer, e.dim, e.inner,
                                                                        chunk);
    FERRITE_CUDA_CHECK_LAUNCH();
    if (splits > 1) {
      merge_column_partials_kernel<R><<<blocks_for(outputs, kReduceThreads), kReduceThreads, 0, stream>>>(
          partials, out, r, outputs, static_cast<int>(splits), e.dim);
      FERRITE_CUDA_CHECK_LAUNCH();
    }
    return;
  }
  constexpr int kV = Vec16<typename Src::value_t>::kSize;
  // Split long rows until about 1024 blocks are in flight; a split covers at least 16K elements.
  constexpr std::int64_t kTargetBlocks = 1024, kMinChunk = 16384;
  std::int64_t splits = 1;
  if (e.outer < kTargetBlocks / 2 && e.dim > kMinChunk) {
    splits = std::min((kTargetBlocks + e.outer - 1) / e.outer, (e.dim + kMinChunk - 1) / kMinChunk);
    splits = std::min<std::int64_t>(splits, kTargetBlocks);
  }
  std::int64_t chunk = (e.dim + splits - 1) / splits;
  chunk = (chunk + kV - 1) / kV * kV;  // split boundaries keep a row's vector alignment
  splits = (e.dim + chunk - 1) / chunk;
  const int group = splits > 1 ? kReduceThreads : group_for(e.dim, kV);
  const std::int64_t tasks = e.outer * splits;
  const int blocks = blocks_for(tasks, kReduceThreads / group);
  std::shared_ptr<Storage> partial_storage;
  typename R::acc_t* partials = nullptr;
  if (splits > 1) {
    partial_storage = scratch(like, static_cast<std::size_t>(tasks) * sizeof(typename R::acc_t));
    partials = static_cast<typename R::acc_t*>(partial_storage->data());
  }
  reduce_rows_kernel<R, Src><<<blocks, kReduceThreads, 0, stream>>>(src, out, partials, r, e.outer, e.dim, chunk,
                                                                     static_cast<int>(splits), group);
  FERRITE_CUDA_CHECK_LAUNCH();
  if (splits > 1) {
    merge_partials_kernel<R><<<static_cast<int>(e.outer), kReduceThreads, 0, stream>>>(
        partials, out, r, static_cast<int>(splits), e.dim);
    FERRITE_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace ferrite::cuda::reduction
