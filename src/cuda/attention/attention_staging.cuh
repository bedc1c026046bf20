// Copies that let a F16/BF16 attention backward run on the tiled F32 kernels
// (cuda_attention_ops.cpp): operands widened to F32, gradients rounded back once. Every launch
// is on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ferrite/dtype.hpp"

namespace ferrite::cuda::attention {

/// dst[i] = float(src[i]) for i < n, src of `dtype` (F16 or BF16). Exact.
void widen_to_f32(const void* src, DType dtype, float* dst, std::int64_t n, cudaStream_t stream);
/// dst[i] = src[i] rounded to `dtype` (F16 or BF16) to nearest even, for i < n.
void narrow_from_f32(const float* src, DType dtype, void* dst, std::int64_t n, cudaStream_t stream);

}  // namespace ferrite::cuda::attention
