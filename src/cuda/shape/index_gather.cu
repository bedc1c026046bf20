// Reading through an index: index_select (and embedding), gather, and the min/max of an
// index tensor that lets the front end report a bad index. A bad index is never used as an
// address: the element it would have read becomes zero (the front end then throws).
#include <algorithm>
#include <climits>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"
#include "cuda/shape/shape_device.cuh"
#include "cuda/shape/shape_kernels.hpp"

namespace ferrite::cuda::shape {
namespace {

constexpr int kThreads = 256;


__global__ void init_range_kernel(long long* range) {
  range[0] = LLONG_MAX;
  range[1] = LLONG_MIN;
}

// One block over a small index, the pair written straight to `out` (the caller's pinned
// host slot): no init kernel, no copy.
// It runs beside the kernel that uses the index (on a side stream), so it is one block of
// kThreads: a larger block would wait for that many threads to be free on one SM. Each thread
// issues kInFlight loads before folding any of them: a lone block is bound by how many round
// trips to memory each thread waits on, not by bandwidth.
template <class I>
__global__ void __launch_bounds__(kThreads) small_minmax_kernel(const I* __restrict__ index, std::int64_t n,
                                                                long long* out) {
  constexpr int kInFlight = 16;
  long long lo = LLONG_MAX, hi = LLONG_MIN;
  for (std::int64_t base = threadIdx.x; base < n; base += kThreads * kInFlight) {
    long long values[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const std::int64_t i = base + u * kThreads;
      values[u] = index[i < n ? i : base];  // a repeat of a value already folded changes nothing
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      lo = min(lo, values[u]);
      hi = max(hi, values[u]);
    }
  }
  block_range(lo, hi);
  if (threadIdx.x == 0) {
    out[0] = lo;
    out[1] = hi;
  }
}

template <class I>
__global__ void __launch_bounds__(kThreads) minmax_kernel(const I* __restrict__ index, std::int64_t n, long long* range) {
  long long lo = LLONG_MAX, hi = LLONG_MIN;
  for (std::int64_t i = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * kThreads) {
    const long long v = index[i];
    lo = min(lo, v);
    hi = max(hi, v);
  }
  fold_range(lo, hi, range);
}

// out [outer, out_dim, inner] from x [outer, in_dim, inner], in units of B bytes; each
// thread has kUnroll elements in flight.
constexpr int kUnroll = 4;

template <int B, class I>
__global__ void __launch_bounds__(kThreads) index_select_kernel(const element_t<B>* __restrict__ x,
                                                                const I* __restrict__ index,
                                                                element_t<B>* __restrict__ out, std::int64_t n,
                                                                FastDivmod inner_div, FastDivmod out_dim_div,
                                                                std::int64_t inner, std::int64_t in_dim,
                                                                std::int64_t out_dim, bool fast) {
  const std::int64_t step = std::int64_t(gridDim.x) * kThreads * kUnroll;
  for (std::int64_t base = std::int64_t(blockIdx.x) * kThreads * kUnroll + threadIdx.x; base < n; base += step) {
    std::int64_t from[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = base + u * kThreads;
      from[u] = -1;
      if (i >= n) continue;
      std::int64_t c, j, o;
      if (fast) {
        const std::uint32_t q = inner_div.div(static_cast<std::uint32_t>(i));
        c = static_cast<std::uint32_t>(i) - q * inner_div.divisor;
        const std::uint32_t oq = out_dim_div.div(q);
        o = oq;
        j = q - oq * out_dim_div.divisor;
      } else {
        c = i % inner;
        const std::int64_t q = i / inner;
        j = q % out_dim;
        o = q / out_dim;
      }
      std::int64_t v = index[j];
      if (v < 0) v += in_dim;
      if (v >= 0 && v < in_dim) from[u] = (o * in_dim + v) * inner + c;
    }
    element_t<B> values[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) values[u] = from[u] >= 0 ? x[from[u]] : element_t<B>{};
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + u * kThreads < n) out[base + u * kThreads] = values[u];
  }
}

struct GatherPlan {
  int rank, dim;
  bool fast;
  std::int64_t n, dim_size, dim_stride;
  FastDivmod div[kMaxIndexDims];
  std::int64_t sizes[kMaxIndexDims];
  std::int64_t strides[kMaxIndexDims];  // x strides, 0 at dim
};

constexpr int kGatherUnroll = 8;

// Each thread keeps kGatherUnroll elements in flight: all index loads first, then all reads
// through them, so a thread waits on one round trip per kGatherUnroll elements, not two per
// one (one element per thread measured 1.97 TB/s, four 2.86).
template <int B, class I>
__global__ void __launch_bounds__(kThreads) gather_kernel(const element_t<B>* __restrict__ x,
                                                          const I* __restrict__ index, element_t<B>* __restrict__ out,
                                                          const GatherPlan p, long long* range) {
  long long lo = LLONG_MAX, hi = LLONG_MIN;
  const std::int64_t step = std::int64_t(gridDim.x) * kThreads * kGatherUnroll;
  for (std::int64_t base = std::int64_t(blockIdx.x) * kThreads * kGatherUnroll + threadIdx.x; base < p.n; base += step) {
    long long raw[kGatherUnroll];
#pragma unroll
    for (int u = 0; u < kGatherUnroll; ++u) {
      const std::int64_t i = base + u * kThreads;
      raw[u] = i < p.n ? static_cast<long long>(index[i]) : 0;
    }
    std::int64_t from[kGatherUnroll];
#pragma unroll
    for (int u = 0; u < kGatherUnroll; ++u) {
      const std::int64_t i = base + u * kThreads;
      from[u] = -1;
      if (i >= p.n) continue;
      std::int64_t at = 0;
      if (p.fast) {
        std::uint32_t rest = static_cast<std::uint32_t>(i);
        for (int k = p.rank - 1; k >= 0; --k) {
          const std::uint32_t q = p.div[k].div(rest);
          at += static_cast<std::int64_t>(rest - q * p.div[k].divisor) * p.strides[k];
          rest = q;
        }
      } else {
        std::int64_t rest = i;
        for (int k = p.rank - 1; k >= 0; --k) {
          at += (rest % p.sizes[k]) * p.strides[k];
          rest /= p.sizes[k];
        }
      }
      lo = min(lo, raw[u]);
      hi = max(hi, raw[u]);
      const std::int64_t v = raw[u] < 0 ? raw[u] + p.dim_size : raw[u];
      if (v >= 0 && v < p.dim_size) from[u] = at + v * p.dim_stride;
    }
    element_t<B> values[kGatherUnroll];
#pragma unroll
    for (int u = 0; u < kGatherUnroll; ++u) values[u] = from[u] >= 0 ? x[from[u]] : element_t<B>{};
#pragma unroll
    for (int u = 0; u < kGatherUnroll; ++u)
      if (base + u * kThreads < p.n) out[base + u * kThreads] = values[u];
  }
  fold_range(lo, hi, range);
}

// gather along the last dim when the index's leading dims are the input's (the usual
// torch.gather(x, -1, idx)): out[r, c] = x[r, idx[r, c]]. Picking elements of a row at
// random straight from global memory costs one L1 wavefront per distinct line touched (about
// 28 per warp load), which bounded the general kernel near 2.9 TB/s. Here a block first copies
// the row into shared memory with 16-byte loads and then picks from there, where a random warp
// access costs a few bank conflicts instead.
constexpr int kRowGatherMaxBytes = 48 * 1024;  // the default dynamic shared memory limit

template <int B, class I>
__global__ void __launch_bounds__(kThreads) gather_rows_kernel(const element_t<B>* __restrict__ x,
                                                               const I* __restrict__ index,
                                                               element_t<B>* __restrict__ out, std::int64_t rows,
                                                               int x_cols, int cols, bool vector_rows,
                                                               long long* range) {
  using T = element_t<B>;
  extern __shared__ __align__(16) unsigned char row_storage[];
  T* row = reinterpret_cast<T*>(row_storage);
  long long lo = LLONG_MAX, hi = LLONG_MIN;
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* src = x + r * x_cols;
    if (vector_rows) {
      const int vectors = x_cols * B / 16;
#pragma unroll 4
      for (int i = threadIdx.x; i < vectors; i += kThreads)
        reinterpret_cast<uint4*>(row)[i] = reinterpret_cast<const uint4*>(src)[i];
    } else {
      for (int i = threadIdx.x; i < x_cols; i += kThreads) row[i] = src[i];
    }
    __syncthreads();
    const I* picks = index + r * cols;
    T* dst = out + r * cols;
    for (int base = threadIdx.x; base < cols; base += kThreads * kUnroll) {
      long long raw[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int c = base + u * kThreads;
        raw[u] = c < cols ? static_cast<long long>(picks[c]) : 0;
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int c = base + u * kThreads;
        if (c >= cols) continue;
        lo = min(lo, raw[u]);
        hi = max(hi, raw[u]);
        const long long v = raw[u] < 0 ? raw[u] + x_cols : raw[u];
        dst[c] = v >= 0 && v < x_cols ? row[v] : T{};
      }
    }
    __syncthreads();  // the next row overwrites `row`
  }
  fold_range(lo, hi, range);
}

template <int B, class I>
void launch_gather_rows(const void* x, const I* index, void* out, std::int64_t rows, std::int64_t x_cols,
                        std::int64_t cols, long long* range, cudaStream_t stream) {
  const bool vector_rows = (x_cols * B) % 16 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
  // A few blocks per SM stay resident whatever the row size; each walks rows grid-stride.
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>(rows, 65535));
  gather_rows_kernel<B, I><<<blocks, kThreads, static_cast<std::size_t>(x_cols * B), stream>>>(
      static_cast<const element_t<B>*>(x), index, static_cast<element_t<B>*>(out), rows, static_cast<int>(x_cols),
      static_cast<int>(cols), vector_rows, range);
  FERRITE_CUDA_CHECK_LAUNCH();
}

/// Whether `l` is a gather along the last dim whose index rows are the input's rows, with
/// input rows that fit in shared memory.
bool gather_is_row_wise(const IndexLayout& l, int elem_bytes) {
  const int last = l.rank - 1;
  if (last < 0 || l.dim != last || l.data_strides[static_cast<std::size_t>(last)] != 1) return false;
  if (l.dim_size < 1 || l.dim_size * elem_bytes > kRowGatherMaxBytes || l.sizes[static_cast<std::size_t>(last)] >= INT_MAX)
    return false;
  std::int64_t stride = l.dim_size;  // x's stride of each leading dim when its leading dims are the index's
  for (int k = last - 1; k >= 0; --k) {
    const auto u = static_cast<std::size_t>(k);
    if (l.data_strides[u] != stride && l.sizes[u] != 1) return false;
    stride *= l.sizes[u];
  }
  return true;
}

template <class I>
void gather_rows_by_size(int elem_bytes, const void* x, const I* index, void* out, const IndexLayout& l,
                         long long* range, cudaStream_t stream) {
  const int last = l.rank - 1;
  const std::int64_t cols = l.sizes[static_cast<std::size_t>(last)];
  std::int64_t rows = 1;
  for (int k = 0; k < last; ++k) rows *= l.sizes[static_cast<std::size_t>(k)];
  switch (elem_bytes) {
    case 1: return launch_gather_rows<1, I>(x, index, out, rows, l.dim_size, cols, range, stream);
    case 2: return launch_gather_rows<2, I>(x, index, out, rows, l.dim_size, cols, range, stream);
    case 4: return launch_gather_rows<4, I>(x, index, out, rows, l.dim_size, cols, range, stream);
    case 8: return launch_gather_rows<8, I>(x, index, out, rows, l.dim_size, cols, range, stream);
    default: return launch_gather_rows<16, I>(x, index, out, rows, l.dim_size, cols, range, stream);
  }
}

template <int B, class I>
void launch_index_select(const void* x, const I* index, void* out, std::int64_t outer, std::int64_t in_dim,
                         std::int64_t out_dim, std::int64_t inner, cudaStream_t stream) {
  const std::int64_t n = outer * out_dim * inner;
  const bool fast = n < (std::int64_t(1) << 31);
  const FastDivmod inner_div(fast ? static_cast<std::uint32_t>(inner) : 1);
  const FastDivmod out_dim_div(fast ? static_cast<std::uint32_t>(out_dim) : 1);
  index_select_kernel<B, I><<<grid_stride_blocks(n, kThreads * kUnroll), kThreads, 0, stream>>>(
      static_cast<const element_t<B>*>(x), index, static_cast<element_t<B>*>(out), n, inner_div, out_dim_div, inner,
      in_dim, out_dim, fast);
  FERRITE_CUDA_CHECK_LAUNCH();
}

// index_select with whole rows of 16-byte units and at least a kilobyte per row (embedding
// lookups): a block copies one picked row at a time, so the index is read and wrapped once
// per row and the copy loop is a plain strided copy with kUnroll vectors in flight, instead
// of two divisions and an index load per unit in the general kernel.
constexpr std::int64_t kRowSelectMinUnits = 64;

template <class I>
__global__ void __launch_bounds__(kThreads) select_rows_kernel(const uint4* __restrict__ x,
                                                               const I* __restrict__ index, uint4* __restrict__ out,
                                                               std::int64_t out_rows, std::int64_t in_dim,
                                                               std::int64_t out_dim, std::int64_t row_units) {
  for (std::int64_t r = blockIdx.x; r < out_rows; r += gridDim.x) {
    const std::int64_t o = r / out_dim, j = r - o * out_dim;
    std::int64_t v = index[j];
    if (v < 0) v += in_dim;
    const bool valid = v >= 0 && v < in_dim;  // else zeros: the front end throws
    const uint4* src = x + (o * in_dim + (valid ? v : 0)) * row_units;
    uint4* dst = out + r * row_units;
    for (std::int64_t c = threadIdx.x; c < row_units; c += kThreads * kUnroll) {
      uint4 values[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        values[u] = valid && c + u * kThreads < row_units ? src[c + u * kThreads] : uint4{};
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (c + u * kThreads < row_units) dst[c + u * kThreads] = values[u];
    }
  }
}

template <class I>
void select_by_width(int elem_bytes, const void* x, const I* index, void* out, std::int64_t outer, std::int64_t in_dim,
                     std::int64_t out_dim, std::int64_t inner, cudaStream_t stream) {
  // Rows of inner elements move as the widest unit that divides them and keeps alignment.
  const std::int64_t row_bytes = inner * elem_bytes;
  int width = elem_bytes;
  for (int w = 16; w > elem_bytes; w /= 2)
    if (row_bytes % w == 0 && reinterpret_cast<std::uintptr_t>(x) % w == 0 &&
        reinterpret_cast<std::uintptr_t>(out) % w == 0) {
      width = w;
      break;
    }
  const std::int64_t units = row_bytes / width;
  if (width == 16 && units >= kRowSelectMinUnits) {
    const std::int64_t rows = outer * out_dim;
    select_rows_kernel<I><<<grid_stride_blocks(rows, 1), kThreads, 0,
                            stream>>>(static_cast<const uint4*>(x), index, static_cast<uint4*>(out), rows, in_dim,
                                      out_dim, units);
    FERRITE_CUDA_CHECK_LAUNCH();
    return;
  }
  switch (width) {
    case 1: return launch_index_select<1, I>(x, index, out, outer, in_dim, out_dim, units, stream);
    case 2: return launch_index_select<2, I>(x, index, out, outer, in_dim, out_dim, units, stream);
    case 4: return launch_index_select<4, I>(x, index, out, outer, in_dim, out_dim, units, stream);
    case 8: return launch_index_select<8, I>(x, index, out, outer, in_dim, out_dim, units, stream);
    default: return launch_index_select<16, I>(x, index, out, outer, in_dim, out_dim, units, stream);
  }
}

template <int B, class I>
void launch_gather(const void* x, const I* index, void* out, const GatherPlan& p, long long* range, cudaStream_t stream) {
  // At most a few thousand blocks: each folds its index range with one pair of atomics.
  gather_kernel<B, I><<<grid_stride_blocks(p.n, kThreads * kGatherUnroll, 8192), kThreads, 0, stream>>>(
      static_cast<const element_t<B>*>(x), index, static_cast<element_t<B>*>(out), p, range);
  FERRITE_CUDA_CHECK_LAUNCH();
}

template <class I>
void gather_by_size(int elem_bytes, const void* x, const I* index, void* out, const GatherPlan& p, long long* range,
                    cudaStream_t stream) {
  switch (elem_bytes) {
    case 1: return launch_gather<1, I>(x, index, out, p, range, stream);
    case 2: return launch_gather<2, I>(x, index, out, p, range, stream);
    case 4: return launch_gather<4, I>(x, index, out, p, range, stream);
    case 8: return launch_gather<8, I>(x, index, out, p, range, stream);
    default: return launch_gather<16, I>(x, index, out, p, range, stream);
  }
}

}  // namespace

void init_range(long long* range, cudaStream_t stream) {
  init_range_kernel<<<1, 1, 0, stream>>>(range);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void index_minmax(const Buffer& index, long long* range, cudaStream_t stream) {
  const std::int64_t n = index.numel();
  if (n <= kSmallIndexRange) {
    if (index.dtype() == DType::I32)
      small_minmax_kernel<std::int32_t><<<1, kThreads, 0, stream>>>(index.data_as<std::int32_t>(), n, range);
    else
      small_minmax_kernel<std::int64_t><<<1, kThreads, 0, stream>>>(index.data_as<std::int64_t>(), n, range);
    FERRITE_CUDA_CHECK_LAUNCH();
    return;
  }
  init_range(range, stream);
  const unsigned blocks = grid_stride_blocks(n, kThreads * 8, 1024);
  if (index.dtype() == DType::I32)
    minmax_kernel<std::int32_t><<<blocks, kThreads, 0, stream>>>(index.data_as<std::int32_t>(), n, range);
  else
    minmax_kernel<std::int64_t><<<blocks, kThreads, 0, stream>>>(index.data_as<std::int64_t>(), n, range);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void index_select(int elem_bytes, const void* x, const Buffer& index, void* out, std::int64_t outer,
                  std::int64_t in_dim, std::int64_t out_dim, std::int64_t inner, cudaStream_t stream) {
  if (outer * out_dim * inner == 0) return;
  if (index.dtype() == DType::I32)
    select_by_width(elem_bytes, x, index.data_as<std::int32_t>(), out, outer, in_dim, out_dim, inner, stream);
  else
    select_by_width(elem_bytes, x, index.data_as<std::int64_t>(), out, outer, in_dim, out_dim, inner, stream);
}

void gather(int elem_bytes, const void* x, const Buffer& index, void* out, const IndexLayout& l, long long* range,
            cudaStream_t stream) {
  GatherPlan p{};
  p.rank = l.rank;
  p.dim = l.dim;
  p.dim_size = l.dim_size;
  p.dim_stride = l.data_strides[l.dim];
  p.n = 1;
  for (int k = 0; k < l.rank; ++k) p.n *= l.sizes[k];
  if (p.n == 0) return;
  p.fast = p.n < (std::int64_t(1) << 31);
  for (int k = 0; k < l.rank; ++k) {
    p.sizes[k] = l.sizes[k];
    p.strides[k] = k == l.dim ? 0 : l.data_strides[k];
    if (p.fast) p.div[k] = FastDivmod(static_cast<std::uint32_t>(l.sizes[k]));
  }
  if (gather_is_row_wise(l, elem_bytes)) {
    if (index.dtype() == DType::I32)
      gather_rows_by_size(elem_bytes, x, index.data_as<std::int32_t>(), out, l, range, stream);
    else
      gather_rows_by_size(elem_bytes, x, index.data_as<std::int64_t>(), out, l, range, stream);
    return;
  }
  if (index.dtype() == DType::I32)
    gather_by_size(elem_bytes, x, index.data_as<std::int32_t>(), out, p, range, stream);
  else
    gather_by_size(elem_bytes, x, index.data_as<std::int64_t>(), out, p, range, stream);
}

}  // namespace ferrite::cuda::shape
