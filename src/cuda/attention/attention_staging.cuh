// Copies that let a F16/BF16 attention backward run on a route made for another layout or
// precision (cuda_attention_ops.cpp): the causal grouped-query backward on cuDNN's plain
// multi-head graph (k/v repeated per query head, dk/dv summed back over each group), and the
// backward beyond cuDNN on the tiled F32 kernels (operands widened to F32, gradients rounded
// back once). Dense row-major operands only; every launch is on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ferrite/dtype.hpp"

namespace ferrite::cuda::attention {

/// dst[i] = float(src[i]) for i < n, src of `dtype` (F16 or BF16). Exact.
void widen_to_f32(const void* src, DType dtype, float* dst, std::int64_t n, cudaStream_t stream);
/// dst[i] = src[i] rounded to `dtype` (F16 or BF16) to nearest even, for i < n.
void narrow_from_f32(const float* src, DType dtype, void* dst, std::int64_t n, cudaStream_t stream);

/// dst [batch, heads_kv * group, per_head] from src [batch, heads_kv, per_head]: query head h
/// gets key/value head h / group (the grouping of AttentionDesc::group()).
void repeat_kv_heads(const void* src, void* dst, DType dtype, std::int64_t batch, std::int64_t heads_kv,
                     std::int64_t group, std::int64_t per_head, cudaStream_t stream);
/// dst [batch, heads_kv, per_head] = the sum over g < group of src [batch, heads_kv * group + g,
/// per_head], in F32 in ascending g, rounded once to `dtype`: the gradient of repeat_kv_heads.
void sum_head_groups(const void* src, void* dst, DType dtype, std::int64_t batch, std::int64_t heads_kv,
                     std::int64_t group, std::int64_t per_head, cudaStream_t stream);

}  // namespace ferrite::cuda::attention
