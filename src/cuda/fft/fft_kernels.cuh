// The FFT family's own kernels (the transforms themselves run in cuFFT).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ferrite/dtype.hpp"

namespace ferrite::cuda::kernels {

/// out[i] = scale * in[i] over `reals` values of `real` (F32/F64), negating every odd one
/// (the imaginary parts of interleaved complex values) when `conjugate`. in may equal out.
void fft_scale_conjugate(const void* in, void* out, std::int64_t reals, DType real, double scale, bool conjugate,
                         cudaStream_t stream);

/// The private copy a C2R transform reads: `count` complex values of `real` precision, each
/// conjugated when `conjugate`, with the imaginary part zeroed at frequency 0 and (for even
/// n) n/2 of the transformed dim, whose coordinate is (index / stride) % half. Those parts
/// have no real counterpart; cuFFT would otherwise mix them into the output, the CPU backend
/// and pocketfft ignore them.
void fft_prepare_c2r(const void* in, void* out, std::int64_t count, DType real, std::int64_t stride,
                     std::int64_t half, bool even, bool conjugate, cudaStream_t stream);

}  // namespace ferrite::cuda::kernels
