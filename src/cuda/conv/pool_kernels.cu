// Pooling kernels: one thread per output (forward) or per input element (backward, a gather
// over the windows covering it: deterministic, no atomics), running the per-element code of
// core/nn_conv_math.hpp that the CPU backend runs too.
#include "core/nn_conv_math.hpp"
#include "cuda/conv/conv_kernels.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"

#include <algorithm>

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
