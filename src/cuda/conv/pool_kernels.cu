// Pooling kernels: one thread per output (forward, generic) or per input element (backward, a
// gather over the windows covering it: deterministic, no atomics), running the per-element code
// of core/nn_conv_math.hpp that the CPU backend runs too; the forward fast path (a band of output
// rows per block, its input staged in shared memory) runs that same per-element code.
#include "core/nn_conv_math.hpp"
#include "cuda/conv/conv_kernels.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace ferrite::cuda::kernels {
namespace {

constexpr int kThreads = 256;

// Planes run along the grid's y dimension and the elements of a plane along x, so the index
// arithmetic inside a plane is 32-bit (the launchers check that a plane fits).
#define FERRITE_PLANE_LOOP                                                                      \
  for (std::int64_t p = blockIdx.y; p < d.planes; p += gridDim.y)                               \
    for (unsigned r = blockIdx.x * blockDim.x + threadIdx.x; r < per; r += gridDim.x * blockDim.x)

template <class T, class I>
__global__ void max_pool_kernel(Pool2dDesc d, detail::PoolIdx<I> pd, const T* x, T* out, std::int64_t* idx) {
  const unsigned per = static_cast<unsigned>(d.oh * d.ow), ow = static_cast<unsigned>(d.ow);
  FERRITE_PLANE_LOOP {
    const unsigned i = r / ow, j = r - i * ow;
    const std::int64_t e = p * per + r;
    detail::max_pool_element(pd, x + p * d.h * d.w, I(i), I(j), out + e, idx + e);
  }
}

template <class T, class I>
__global__ void avg_pool_kernel(Pool2dDesc d, detail::PoolIdx<I> pd, const T* x, T* out) {
  const unsigned per = static_cast<unsigned>(d.oh * d.ow), ow = static_cast<unsigned>(d.ow);
  FERRITE_PLANE_LOOP {
    const unsigned i = r / ow, j = r - i * ow;
    const std::int64_t e = p * per + r;
    out[e] = detail::avg_pool_element(pd, x + p * d.h * d.w, I(i), I(j));
  }
}

// ---- forward fast path: a band of output rows per block, its input rows staged in shared memory ----
//
// The generic kernels above read each input element from global memory once per window that
// covers it (9 / 4 = 2.25 times for 3x3 stride 2) with scattered per-thread addresses and a
// division per output. Here a block copies the input rows its band of output rows needs (a
// contiguous stretch of the plane: one flat, 16-byte-vectorised, coalesced copy), then its
// threads compute consecutive outputs from shared memory and store them coalesced. The window
// arithmetic is the shared per-element code (row0 = the band's first input row), so results
// are bit for bit those of the generic kernels and the CPU backend. Non-adaptive, 32-bit
// indices, and a band of at least one output row fitting kBandSmemMax; everything else takes
// the generic kernels (route_band below is the only place that decides).

constexpr std::int64_t kBandSmemTarget = 24 * 1024, kBandSmemMax = 48 * 1024;
constexpr std::int64_t kBandOutputs = 2 * kThreads;  // about 2 outputs per thread

struct Band {
  int rows;            // output rows per block
  unsigned smem;       // bytes of the staged input rows
  unsigned blocks_x;   // bands per plane
};

// Input rows that output rows [i0, i0 + rows) read at most: (rows - 1) * sh + (kh - 1) * dh + 1.
std::int64_t band_input_rows(const Pool2dDesc& d, std::int64_t rows) {
  return std::min<std::int64_t>((rows - 1) * d.sh + (d.kh - 1) * d.dh + 1, d.h);
}

// The band for this descriptor, or rows == 0 when the fast path does not apply.
Band route_band(const Pool2dDesc& d, std::int64_t elem) {
  Band b{0, 0, 0};
  if (d.adaptive || d.planes <= 0 || d.oh <= 0 || d.ow <= 0 || !detail::pool_fits_int(d)) return b;
  const std::int64_t row_bytes = d.w * elem;
  if (band_input_rows(d, 1) * row_bytes > kBandSmemMax) return b;
  std::int64_t rows = std::clamp<std::int64_t>((kBandOutputs + d.ow - 1) / d.ow, 1, d.oh);
  while (rows > 1 && band_input_rows(d, rows) * row_bytes > kBandSmemTarget) --rows;
  b.rows = static_cast<int>(rows);
  b.smem = static_cast<unsigned>((band_input_rows(d, rows) * row_bytes + 15) / 16 * 16);
  b.blocks_x = static_cast<unsigned>((d.oh + rows - 1) / rows);
  return b;
}

// Copies the plane's input rows [y0, y1) (contiguous) into `tile`; 16-byte vectors when the
// source is 16-byte aligned (the tile is), then the tail element by element.
template <class T>
__device__ void stage_rows(const T* plane, int w, int y0, int y1, T* tile) {
  const T* src = plane + static_cast<std::int64_t>(y0) * w;
  const unsigned n = y1 > y0 ? static_cast<unsigned>((y1 - y0) * w) : 0u;
  unsigned done = 0;
  if ((reinterpret_cast<std::uintptr_t>(src) & 15) == 0) {
    constexpr unsigned kPer = 16 / sizeof(T);
    const unsigned nv = n / kPer;
    const uint4* s4 = reinterpret_cast<const uint4*>(src);
    uint4* t4 = reinterpret_cast<uint4*>(tile);
    for (unsigned k = threadIdx.x; k < nv; k += blockDim.x) t4[k] = __ldg(s4 + k);
    done = nv * kPer;
  }
  for (unsigned k = done + threadIdx.x; k < n; k += blockDim.x) tile[k] = src[k];
}

// The band's first and last-plus-one input rows for output rows [i0, i1).
struct RowSpan {
  int y0, y1;
};
template <class I>
__device__ RowSpan band_rows(const detail::PoolIdx<I>& pd, int i0, int i1) {
  const int first = i0 * pd.sh - pd.ph, last = (i1 - 1) * pd.sh - pd.ph + (pd.kh - 1) * pd.dh + 1;
  return {first < 0 ? 0 : first, last > pd.h ? pd.h : last};
}

// Walks outputs [i0 * ow, i1 * ow) of the band, thread-strided, keeping (i, j) by increments
// (no division per output), calling f(i, j, flat offset within the plane).
template <class F>
__device__ void for_band_outputs(int i0, int i1, int ow, F&& f) {
  const unsigned step = blockDim.x, di = step / ow, dj = step - di * ow;
  unsigned i = i0 + threadIdx.x / ow, j = threadIdx.x % ow;
  for (; i < static_cast<unsigned>(i1);) {
    f(static_cast<int>(i), static_cast<int>(j), static_cast<std::int64_t>(i) * ow + j);
    i += di;
    j += dj;
    if (j >= static_cast<unsigned>(ow)) {
      j -= ow;
      ++i;
    }
  }
}

// Unrolled twins of detail::max_pool_element / avg_pool_element for a KH x KW window with
// dilation 1 (the common 3x3 and 2x2): the generic loops cost ~10 dependent instructions per
// tap, as much time as the memory traffic for 3x3. The taps run in the same row-major order
// over the same in-bounds positions with the same comparison, sum order, divisor (avg_window)
// and narrowing, so the results are bit for bit the generic ones; the conformance cases
// compare them with the CPU backend, which runs the generic code.
template <int KH, int KW, class T>
__device__ void max_window_fixed(const detail::PoolIdx<int>& d, const T* tile, int row0, int i, int j, T* out,
                                 std::int64_t* index) {
  using W = detail::wide_t<T>;
  const int hs = i * d.sh - d.ph, ws = j * d.sw - d.pw;
  W best = -std::numeric_limits<W>::infinity();
  int best_index = (hs < 0 ? 0 : hs) * d.w + (ws < 0 ? 0 : ws);  // the first in-bounds tap
#pragma unroll
  for (int a = 0; a < KH; ++a) {
    const int y = hs + a;
    if (y < 0 || y >= d.h) continue;
#pragma unroll
    for (int b = 0; b < KW; ++b) {
      const int x = ws + b;
      if (x < 0 || x >= d.w) continue;
      const W v = detail::widen(tile[(y - row0) * d.w + x]);
      if (v > best || v != v) {
        best = v;
        best_index = y * d.w + x;
      }
    }
  }
  *out = detail::narrow<T>(best);
  *index = best_index;
}

template <int KH, int KW, class T>
__device__ T avg_window_fixed(const detail::PoolIdx<int>& d, const T* tile, int row0, int i, int j) {
  using W = detail::wide_t<T>;
  const detail::AvgWindow<int> a = detail::avg_window(d, i, j);
  if (a.hs >= a.he || a.ws >= a.we) return detail::narrow<T>(W(0));
  const int hs = i * d.sh - d.ph, ws = j * d.sw - d.pw;
  W sum = 0;
#pragma unroll
  for (int r = 0; r < KH; ++r) {
    const int y = hs + r;
    if (y < a.hs || y >= a.he) continue;
#pragma unroll
    for (int c = 0; c < KW; ++c) {
      const int x = ws + c;
      if (x < a.ws || x >= a.we) continue;
      sum += detail::widen(tile[(y - row0) * d.w + x]);
    }
  }
  return detail::narrow<T>(sum / static_cast<W>(a.divisor));
}

// K = 0: the generic per-element code (any kernel size, dilation); K > 0: a K x K window with
// dilation 1 through the unrolled twins.
template <class T, int K>
__global__ void __launch_bounds__(kThreads) max_pool_band_kernel(Pool2dDesc d, detail::PoolIdx<int> pd, int rows,
                                                                  const T* x, T* out, std::int64_t* idx) {
  extern __shared__ uint4 smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  const int i0 = static_cast<int>(blockIdx.x) * rows, i1 = i0 + rows < pd.oh ? i0 + rows : pd.oh;
  const RowSpan span = band_rows(pd, i0, i1);
  const std::int64_t in_per = static_cast<std::int64_t>(pd.h) * pd.w, out_per = static_cast<std::int64_t>(pd.oh) * pd.ow;
  for (std::int64_t p = blockIdx.y; p < d.planes; p += gridDim.y) {
    __syncthreads();  // the previous plane's reads of the tile are done
    stage_rows(x + p * in_per, pd.w, span.y0, span.y1, tile);
    __syncthreads();
    T* o = out + p * out_per;
    std::int64_t* ix = idx + p * out_per;
    for_band_outputs(i0, i1, pd.ow, [&](int i, int j, std::int64_t e) {
      if constexpr (K > 0) max_window_fixed<K, K>(pd, static_cast<const T*>(tile), span.y0, i, j, o + e, ix + e);
      else detail::max_pool_element(pd, static_cast<const T*>(tile), i, j, o + e, ix + e, span.y0);
    });
  }
}

template <class T, int K>
__global__ void __launch_bounds__(kThreads) avg_pool_band_kernel(Pool2dDesc d, detail::PoolIdx<int> pd, int rows,
                                                                  const T* x, T* out) {
  extern __shared__ uint4 smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  const int i0 = static_cast<int>(blockIdx.x) * rows, i1 = i0 + rows < pd.oh ? i0 + rows : pd.oh;
  const RowSpan span = band_rows(pd, i0, i1);
  const std::int64_t in_per = static_cast<std::int64_t>(pd.h) * pd.w, out_per = static_cast<std::int64_t>(pd.oh) * pd.ow;
  for (std::int64_t p = blockIdx.y; p < d.planes; p += gridDim.y) {
    __syncthreads();
    stage_rows(x + p * in_per, pd.w, span.y0, span.y1, tile);
    __syncthreads();
    T* o = out + p * out_per;
    for_band_outputs(i0, i1, pd.ow, [&](int i, int j, std::int64_t e) {
      if constexpr (K > 0) o[e] = avg_window_fixed<K, K>(pd, static_cast<const T*>(tile), span.y0, i, j);
      else o[e] = detail::avg_pool_element(pd, static_cast<const T*>(tile), i, j, span.y0);
    });
  }
}

dim3 band_grid(const Pool2dDesc& d, const Band& b) {
  return dim3(b.blocks_x, static_cast<unsigned>(std::min<std::int64_t>(d.planes, 65535)), 1);
}

// The unrolled window of the band kernels for this descriptor: 3, 2, or 0 (generic).
int fixed_window(const Pool2dDesc& d) {
  if (d.dh != 1 || d.dw != 1 || d.kh != d.kw) return 0;
  return d.kh == 3 || d.kh == 2 ? static_cast<int>(d.kh) : 0;
}

template <class T>
void launch_max_band(const Pool2dDesc& d, const detail::PoolIdx<int>& pd, const Band& b, const T* x, T* out,
                     std::int64_t* idx, cudaStream_t s) {
  const dim3 g = band_grid(d, b);
  switch (fixed_window(d)) {
    case 3: max_pool_band_kernel<T, 3><<<g, kThreads, b.smem, s>>>(d, pd, b.rows, x, out, idx); break;
    case 2: max_pool_band_kernel<T, 2><<<g, kThreads, b.smem, s>>>(d, pd, b.rows, x, out, idx); break;
    default: max_pool_band_kernel<T, 0><<<g, kThreads, b.smem, s>>>(d, pd, b.rows, x, out, idx); break;
  }
  FERRITE_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_avg_band(const Pool2dDesc& d, const detail::PoolIdx<int>& pd, const Band& b, const T* x, T* out,
                     cudaStream_t s) {
  const dim3 g = band_grid(d, b);
  switch (fixed_window(d)) {
    case 3: avg_pool_band_kernel<T, 3><<<g, kThreads, b.smem, s>>>(d, pd, b.rows, x, out); break;
    case 2: avg_pool_band_kernel<T, 2><<<g, kThreads, b.smem, s>>>(d, pd, b.rows, x, out); break;
    default: avg_pool_band_kernel<T, 0><<<g, kThreads, b.smem, s>>>(d, pd, b.rows, x, out); break;
  }
  FERRITE_CUDA_CHECK_LAUNCH();
}

template <class T, class I>
__global__ void max_pool_backward_kernel(Pool2dDesc d, detail::PoolIdx<I> pd, const T* g, const std::int64_t* idx,
                                         T* gx) {
  const unsigned per = static_cast<unsigned>(d.h * d.w), w = static_cast<unsigned>(d.w);
  const std::int64_t out_per = d.oh * d.ow;
  FERRITE_PLANE_LOOP {
    const unsigned y = r / w, x = r - y * w;
    const std::int64_t e = p * per + r;
    gx[e] = detail::max_pool_backward_element(pd, g + p * out_per, idx + p * out_per, I(y), I(x));
  }
}

template <class T, class I>
__global__ void avg_pool_backward_kernel(Pool2dDesc d, detail::PoolIdx<I> pd, const T* g, T* gx) {
  const unsigned per = static_cast<unsigned>(d.h * d.w), w = static_cast<unsigned>(d.w);
  const std::int64_t out_per = d.oh * d.ow;
  FERRITE_PLANE_LOOP {
    const unsigned y = r / w, x = r - y * w;
    const std::int64_t e = p * per + r;
    gx[e] = detail::avg_pool_backward_element(pd, g + p * out_per, I(y), I(x));
  }
}

template <class F>
void dispatch(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::F16: return f(Half{});
    case DType::BF16: return f(BFloat16{});
    default: break;
  }
  FERRITE_THROW(Unsupported, op, ": dtype ", dtype_name(dtype), " is not supported on the cuda backend");
}

// x: the elements of one plane (`per`), y: the planes.
dim3 grid(const Pool2dDesc& d, std::int64_t per) {
  FERRITE_CHECK(d.h * d.w < (std::int64_t(1) << 31) && d.oh * d.ow < (std::int64_t(1) << 31), Unsupported,
                "pooling: planes of 2^31 or more elements are not supported on the cuda backend");
  const unsigned x = grid_stride_blocks(per, kThreads, 4096);
  const unsigned y = static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(d.planes, 1), 65535));
  return dim3(x, y, 1);
}

}  // namespace

void max_pool2d(const Pool2dDesc& d, const Buffer& x, const Buffer& out, const Buffer& indices, cudaStream_t s) {
  dispatch(x.dtype(), "max_pool2d", [&](auto v) {
    using T = decltype(v);
    detail::with_pool_index(d, [&](const auto& pd) {
      using I = decltype(pd.h);
      if constexpr (std::is_same_v<I, int>) {
        if (const Band b = route_band(d, sizeof(T)); b.rows > 0) {
          launch_max_band<T>(d, pd, b, x.data_as<const T>(), out.data_as<T>(), indices.data_as<std::int64_t>(), s);
          return;
        }
      }
      max_pool_kernel<T, I><<<grid(d, d.oh * d.ow), kThreads, 0, s>>>(d, pd, x.data_as<const T>(), out.data_as<T>(),
                                                                       indices.data_as<std::int64_t>());
      FERRITE_CUDA_CHECK_LAUNCH();
    });
  });
}

void max_pool2d_backward(const Pool2dDesc& d, const Buffer& grad, const Buffer& indices, const Buffer& grad_x,
                         cudaStream_t s) {
  dispatch(grad.dtype(), "max_pool2d_backward", [&](auto v) {
    using T = decltype(v);
    detail::with_pool_index(d, [&](const auto& pd) {
      using I = decltype(pd.h);
      max_pool_backward_kernel<T, I><<<grid(d, d.h * d.w), kThreads, 0, s>>>(
          d, pd, grad.data_as<const T>(), indices.data_as<const std::int64_t>(), grad_x.data_as<T>());
      FERRITE_CUDA_CHECK_LAUNCH();
    });
  });
}

void avg_pool2d(const Pool2dDesc& d, const Buffer& x, const Buffer& out, cudaStream_t s) {
  dispatch(x.dtype(), "avg_pool2d", [&](auto v) {
    using T = decltype(v);
    detail::with_pool_index(d, [&](const auto& pd) {
      using I = decltype(pd.h);
      if constexpr (std::is_same_v<I, int>) {
        if (const Band b = route_band(d, sizeof(T)); b.rows > 0) {
          launch_avg_band<T>(d, pd, b, x.data_as<const T>(), out.data_as<T>(), s);
          return;
        }
      }
      avg_pool_kernel<T, I><<<grid(d, d.oh * d.ow), kThreads, 0, s>>>(d, pd, x.data_as<const T>(), out.data_as<T>());
      FERRITE_CUDA_CHECK_LAUNCH();
    });
  });
}

void avg_pool2d_backward(const Pool2dDesc& d, const Buffer& grad, const Buffer& grad_x, cudaStream_t s) {
  dispatch(grad.dtype(), "avg_pool2d_backward", [&](auto v) {
    using T = decltype(v);
    detail::with_pool_index(d, [&](const auto& pd) {
      using I = decltype(pd.h);
      avg_pool_backward_kernel<T, I><<<grid(d, d.h * d.w), kThreads, 0, s>>>(d, pd, grad.data_as<const T>(),
                                                                              grad_x.data_as<T>());
      FERRITE_CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace ferrite::cuda::kernels
