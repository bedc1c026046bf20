// Normalisation and conjugation around cuFFT, which does neither: one pass over the output
// (norm scale, ihfft's conjugate) or over a copy of the input (hfft's conjugate; C2R needs
// that copy anyway because cuFFT may overwrite a C2R input).
#include <algorithm>

#include "cuda/fft/fft_kernels.cuh"
#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda::kernels {
namespace {

// Two reals (one complex value) per thread per step: the sign of the second is the conjugate.
template <class T, class T2>
__global__ void scale_conjugate_kernel(const T2* in, T2* out, std::int64_t pairs, T scale, T imag_scale) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < pairs;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const T2 v = in[i];
    out[i] = T2{v.x * scale, v.y * imag_scale};
  }
}

template <class T>
__global__ void scale_tail_kernel(const T* in, T* out, T scale) {
  out[0] = in[0] * scale;
}

template <class T, class T2>
void launch(const void* in, void* out, std::int64_t reals, double scale, bool conjugate, cudaStream_t stream) {
  const std::int64_t pairs = reals / 2;
  const T s = static_cast<T>(scale), is = conjugate ? -s : s;
  if (pairs > 0) {
    const std::int64_t blocks = std::min<std::int64_t>((pairs + 255) / 256, 1 << 16);
    scale_conjugate_kernel<T, T2><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
        static_cast<const T2*>(in), static_cast<T2*>(out), pairs, s, is);
    FERRITE_CUDA_CHECK_LAUNCH();
  }
  if (reals % 2 != 0) {  // a real buffer of odd length (never conjugated)
    scale_tail_kernel<T><<<1, 1, 0, stream>>>(static_cast<const T*>(in) + reals - 1, static_cast<T*>(out) + reals - 1, s);
    FERRITE_CUDA_CHECK_LAUNCH();
  }
}

template <class T2>
__global__ void prepare_c2r_kernel(const T2* in, T2* out, std::int64_t count, std::int64_t stride, std::int64_t half,
                                   bool even, bool conjugate) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    T2 v = in[i];
    if (conjugate) v.y = -v.y;
    const std::int64_t c = (i / stride) % half;
    if (c == 0 || (even && c == half - 1)) v.y = 0;
    out[i] = v;
  }
}

}  // namespace

void fft_prepare_c2r(const void* in, void* out, std::int64_t count, DType real, std::int64_t stride,
                     std::int64_t half, bool even, bool conjugate, cudaStream_t stream) {
  if (count == 0) return;
  const std::int64_t blocks = std::min<std::int64_t>((count + 255) / 256, 1 << 16);
  if (real == DType::F64)
    prepare_c2r_kernel<double2><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
        static_cast<const double2*>(in), static_cast<double2*>(out), count, stride, half, even, conjugate);
  else
    prepare_c2r_kernel<float2><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
        static_cast<const float2*>(in), static_cast<float2*>(out), count, stride, half, even, conjugate);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void fft_scale_conjugate(const void* in, void* out, std::int64_t reals, DType real, double scale, bool conjugate,
                         cudaStream_t stream) {
  if (reals == 0) return;
  if (real == DType::F64)
    launch<double, double2>(in, out, reals, scale, conjugate, stream);
  else
    launch<float, float2>(in, out, reals, scale, conjugate, stream);
}

}  // namespace ferrite::cuda::kernels
