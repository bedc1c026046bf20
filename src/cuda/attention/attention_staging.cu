// The attention backward's staging copies (attention_staging.cuh): grid-stride elementwise
// kernels, each element read and written once. They are memory-bound and small next to the
// backward they serve (an S x S computation per head).
#include "cuda/attention/attention_staging.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::attention {
namespace {

constexpr int kThreads = 256;

__device__ float to_float(__half x) { return __half2float(x); }
__device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T>
__device__ T from_float(float x);
template <>
__device__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

template <class T>
__global__ void widen_kernel(const T* __restrict__ src, float* __restrict__ dst, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    dst[i] = to_float(src[i]);
}

template <class T>
__global__ void narrow_kernel(const float* __restrict__ src, T* __restrict__ dst, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    dst[i] = from_float<T>(src[i]);
}

unsigned blocks(std::int64_t n) { return grid_stride_blocks(n, kThreads, std::int64_t(1) << 20); }

// Calls f with a null pointer of the CUDA element type of `dtype` (F16 or BF16).
template <class F>
void visit_half(DType dtype, F&& f) {
  FERRITE_CHECK(dtype == DType::F16 || dtype == DType::BF16, Unsupported,
                "attention staging: F16 or BF16 expected, got ", dtype_name(dtype));
  if (dtype == DType::F16)
    f(static_cast<__half*>(nullptr));
  else
    f(static_cast<__nv_bfloat16*>(nullptr));
}

}  // namespace

void widen_to_f32(const void* src, DType dtype, float* dst, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  visit_half(dtype, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    widen_kernel<T><<<blocks(n), kThreads, 0, stream>>>(static_cast<const T*>(src), dst, n);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void narrow_from_f32(const float* src, DType dtype, void* dst, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  visit_half(dtype, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    narrow_kernel<T><<<blocks(n), kThreads, 0, stream>>>(src, static_cast<T*>(dst), n);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::attention
