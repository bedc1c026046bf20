// The data movement of conv2d's implicit GEMM: im2col (unfold receptive fields into
// columns), its adjoint col2im as a gather (one thread per input element sums the column
// entries that read it, in float: deterministic, no atomics), the bias prefill and the F32
// -> half rounding of the weight gradient's accumulator.
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

// col element e = ((image * C + c) * r * s + i * s + j) * ohw + oy * ow + ox (groups are
// consecutive channel blocks, so [images, groups, cg*r*s, ohw] is [images, C*r*s, ohw]).
template <class T>
__global__ void im2col_kernel(Conv2dDesc d, const T* x, std::int64_t total, T* col) {
  const std::int64_t ohw = d.oh * d.ow, rs = d.r * d.s;
  FERRITE_GRID_LOOP(total) {
    const std::int64_t o = e % ohw, q = e / ohw;
    const std::int64_t tap = q % rs, plane = q / rs;  // plane = image * C + c
    const std::int64_t i = tap / d.s, j = tap % d.s, oy = o / d.ow, ox = o % d.ow;
    const std::int64_t y = oy * d.stride_h - d.pad_h + i * d.dil_h, xx = ox * d.stride_w - d.pad_w + j * d.dil_w;
    col[e] = (y >= 0 && y < d.h && xx >= 0 && xx < d.w) ? x[(plane * d.h + y) * d.w + xx] : detail::narrow<T>(0.0f);
  }
}

template <class T, class C>
__global__ void col2im_kernel(Conv2dDesc d, const C* col, std::int64_t total, T* gx) {
  using W = detail::wide_t<T>;
  const std::int64_t ohw = d.oh * d.ow, rs = d.r * d.s;
  FERRITE_GRID_LOOP(total) {
    const std::int64_t xx = e % d.w, y = e / d.w % d.h, plane = e / (d.h * d.w);
    W sum = 0;
    for (std::int64_t i = 0; i < d.r; ++i) {
      const std::int64_t ty = y + d.pad_h - i * d.dil_h;
      if (ty < 0 || ty % d.stride_h != 0) continue;
      const std::int64_t oy = ty / d.stride_h;
      if (oy >= d.oh) continue;
      for (std::int64_t j = 0; j < d.s; ++j) {
        const std::int64_t tx = xx + d.pad_w - j * d.dil_w;
        if (tx < 0 || tx % d.stride_w != 0) continue;
        const std::int64_t ox = tx / d.stride_w;
        if (ox >= d.ow) continue;
        sum += detail::widen(col[(plane * rs + i * d.s + j) * ohw + oy * d.ow + ox]);
      }
    }
    gx[e] = detail::narrow<T>(sum);
  }
}

template <class T>
__global__ void bias_kernel(Conv2dDesc d, const T* bias, std::int64_t total, T* out) {
  const std::int64_t ohw = d.oh * d.ow;
  FERRITE_GRID_LOOP(total) out[e] = bias[e / ohw % d.k];
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

}  // namespace

void im2col(const Conv2dDesc& d, DType dtype, const void* x, std::int64_t images, void* col, cudaStream_t s) {
  const std::int64_t total = images * d.c * d.r * d.s * d.oh * d.ow;
  if (total == 0) return;
  dispatch(dtype, [&](auto v) {
    using T = decltype(v);
    im2col_kernel<T><<<grid(total), kThreads, 0, s>>>(d, static_cast<const T*>(x), total, static_cast<T*>(col));
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

void col2im(const Conv2dDesc& d, DType dtype, const void* col, std::int64_t images, void* grad_x, cudaStream_t s) {
  const std::int64_t total = images * d.c * d.h * d.w;
  if (total == 0) return;
  dispatch(dtype, [&](auto v) {
    using T = decltype(v);
    // half types keep their columns in float (the GEMM writes F32, rounded once here)
    using C = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
    col2im_kernel<T, C><<<grid(total), kThreads, 0, s>>>(d, static_cast<const C*>(col), total,
                                                          static_cast<T*>(grad_x));
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

void fill_bias(const Conv2dDesc& d, DType dtype, const void* bias, std::int64_t images, void* out, cudaStream_t s) {
  const std::int64_t total = images * d.k * d.oh * d.ow;
  if (total == 0) return;
  dispatch(dtype, [&](auto v) {
    using T = decltype(v);
    bias_kernel<T><<<grid(total), kThreads, 0, s>>>(d, static_cast<const T*>(bias), total, static_cast<T*>(out));
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
