// The data movement of conv2d's implicit GEMM: im2col (unfold receptive fields into
// columns), its adjoint col2im as a gather (one thread per input element sums the column
// entries that read it, in float: deterministic, no atomics), the bias prefill (or add, after
// cuDNN's convolution) and the F32
// -> half rounding of the weight gradient's accumulator.
#include <algorithm>
#include <type_traits>

#include "core/numeric.hpp"
#include "cuda/conv/conv_kernels.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"

namespace ferrite::cuda::kernels {
namespace {

constexpr int kThreads = 256;

#define FERRITE_GRID_LOOP(total)                                                                  \
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < (total);         \
       e += std::int64_t(gridDim.x) * blockDim.x)

// Rows of the column matrix run along the grid's y dimension (row q = (image * C + c) * r * s
// + i * s + j, so [images, groups, cg*r*s, ohw] is [images, C*r*s, ohw]) and the oh * ow
// outputs of a row along x: the row's decomposition is computed once per thread and row, and
// the per-element index arithmetic is 32-bit (the launcher checks that a plane fits).
template <class T>
__global__ void im2col_kernel(Conv2dDesc d, const T* x, std::int64_t rows, T* col) {
  const int ohw = static_cast<int>(d.oh * d.ow), ow = static_cast<int>(d.ow), h = static_cast<int>(d.h),
            w = static_cast<int>(d.w);
  const int rs = static_cast<int>(d.r * d.s), s = static_cast<int>(d.s);
  for (std::int64_t q = blockIdx.y; q < rows; q += gridDim.y) {
    const std::int64_t plane = q / rs;  // image * C + c
    const int tap = static_cast<int>(q - plane * rs), i = tap / s, j = tap - i * s;
    const int dy = i * static_cast<int>(d.dil_h) - static_cast<int>(d.pad_h);
    const int dx = j * static_cast<int>(d.dil_w) - static_cast<int>(d.pad_w);
    const T* src = x + plane * h * w;
    T* dst = col + q * ohw;
    for (int o = blockIdx.x * blockDim.x + threadIdx.x; o < ohw; o += gridDim.x * blockDim.x) {
      const int oy = o / ow, ox = o - oy * ow;
      const int y = oy * static_cast<int>(d.stride_h) + dy, xx = ox * static_cast<int>(d.stride_w) + dx;
      dst[o] = (y >= 0 && y < h && xx >= 0 && xx < w) ? src[y * w + xx] : detail::narrow<T>(0.0f);
    }
  }
}

// One thread per input element of a plane (x), planes = image * C along y.
template <class T, class C>
__global__ void col2im_kernel(Conv2dDesc d, const C* col, std::int64_t planes, T* gx) {
  using W = detail::wide_t<T>;
  const int ohw = static_cast<int>(d.oh * d.ow), oh = static_cast<int>(d.oh), ow = static_cast<int>(d.ow);
  const int h = static_cast<int>(d.h), w = static_cast<int>(d.w), hw = h * w;
  const int r = static_cast<int>(d.r), s = static_cast<int>(d.s), sh = static_cast<int>(d.stride_h),
            sw = static_cast<int>(d.stride_w), ph = static_cast<int>(d.pad_h), pw = static_cast<int>(d.pad_w),
            dh = static_cast<int>(d.dil_h), dw = static_cast<int>(d.dil_w);
  for (std::int64_t plane = blockIdx.y; plane < planes; plane += gridDim.y) {
    const C* base = col + plane * r * s * ohw;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < hw; e += gridDim.x * blockDim.x) {
      const int y = e / w, xx = e - y * w;
      W sum = 0;
      for (int i = 0; i < r; ++i) {
        const int ty = y + ph - i * dh;
        if (ty < 0 || ty % sh != 0) continue;
        const int oy = ty / sh;
        if (oy >= oh) continue;
        for (int j = 0; j < s; ++j) {
          const int tx = xx + pw - j * dw;
          if (tx < 0 || tx % sw != 0) continue;
          const int ox = tx / sw;
          if (ox >= ow) continue;
          sum += detail::widen(base[static_cast<std::int64_t>(i * s + j) * ohw + oy * ow + ox]);
        }
      }
      gx[plane * hw + e] = detail::narrow<T>(sum);
    }
  }
}

template <class T>
__global__ void bias_kernel(Conv2dDesc d, const T* bias, std::int64_t total, bool accumulate, T* out) {
  const std::int64_t ohw = d.oh * d.ow;
  FERRITE_GRID_LOOP(total) {
    const T b = bias[e / ohw % d.k];
    out[e] = accumulate ? detail::narrow<T>(detail::widen(out[e]) + detail::widen(b)) : b;
  }
}

template <class T>
__global__ void narrow_kernel(const float* in, std::int64_t total, T* out) {
  FERRITE_GRID_LOOP(total) out[e] = detail::narrow<T>(in[e]);
}

template <class F>
void dispatch(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::F16: return f(Half{});
    case DType::BF16: return f(BFloat16{});
    default: break;
  }
  FERRITE_THROW(Unsupported, "conv2d: dtype ", dtype_name(dtype), " is not supported on the cuda backend");
}

unsigned grid(std::int64_t total) { return grid_stride_blocks(total, kThreads, std::int64_t(1) << 20); }

// x: the elements of one row or plane, y: the rows or planes (grid-stride beyond 65535).
dim3 grid2(const Conv2dDesc& d, std::int64_t per, std::int64_t count) {
  const std::int64_t big = std::int64_t(1) << 31;
  FERRITE_CHECK(d.h * d.w < big && d.oh * d.ow < big && d.r * d.s * d.oh * d.ow < big &&
                    (d.h + d.pad_h) * d.stride_h < big && (d.w + d.pad_w) * d.stride_w < big,
                Unsupported, "conv2d: planes of 2^31 or more elements are not supported on the cuda backend");
  return dim3(grid_stride_blocks(per, kThreads, 1024),
              static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(count, 1), 65535)), 1);
}

}  // namespace

void im2col(const Conv2dDesc& d, DType dtype, const void* x, std::int64_t images, void* col, cudaStream_t s) {
  const std::int64_t rows = images * d.c * d.r * d.s;
  if (rows == 0 || d.oh * d.ow == 0) return;
  dispatch(dtype, [&](auto v) {
    using T = decltype(v);
    im2col_kernel<T><<<grid2(d, d.oh * d.ow, rows), kThreads, 0, s>>>(d, static_cast<const T*>(x), rows,
                                                                       static_cast<T*>(col));
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

void col2im(const Conv2dDesc& d, DType dtype, const void* col, std::int64_t images, void* grad_x, cudaStream_t s) {
  const std::int64_t planes = images * d.c;
  if (planes == 0 || d.h * d.w == 0) return;
  dispatch(dtype, [&](auto v) {
    using T = decltype(v);
    // half types keep their columns in float (the GEMM writes F32, rounded once here)
    using C = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
    col2im_kernel<T, C><<<grid2(d, d.h * d.w, planes), kThreads, 0, s>>>(d, static_cast<const C*>(col), planes,
                                                                           static_cast<T*>(grad_x));
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

void fill_bias(const Conv2dDesc& d, DType dtype, const void* bias, std::int64_t images, void* out, cudaStream_t s,
               bool accumulate) {
  const std::int64_t total = images * d.k * d.oh * d.ow;
  if (total == 0) return;
  dispatch(dtype, [&](auto v) {
    using T = decltype(v);
    bias_kernel<T><<<grid(total), kThreads, 0, s>>>(d, static_cast<const T*>(bias), total, accumulate,
                                                    static_cast<T*>(out));
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

void narrow_from_f32(DType dtype, const float* in, std::int64_t count, void* out, cudaStream_t s) {
  if (count == 0) return;
  dispatch(dtype, [&](auto v) {
    using T = decltype(v);
    narrow_kernel<T><<<grid(count), kThreads, 0, s>>>(in, count, static_cast<T*>(out));
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace ferrite::cuda::kernels
