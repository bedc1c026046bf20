// The device side of masked attention on cuDNN's SDPA (cudnn_sdpa.cpp; kernels in
// cudnn_sdpa_mask.cu, a small translation unit of its own): cuDNN takes an explicit mask only as
// an additive bias in the inputs' dtype, and gives rows whose every key is hidden a result other
// than ferrite's (out = 0, logsumexp = -inf; zero gradients). Before a forward graph, prepare()
// reads the caller's mask once over its own (unbroadcast) rows: it records each row's first
// visible key and, where cuDNN cannot read the mask as it is (Bool masks, additive masks off
// cuDNN's alignment), writes the bias into a scratch copy of the mask's own size. After the
// graph, fix_dead_rows() makes exactly the fully masked rows out = 0 and logsumexp = -inf. A
// backward graph gets the same bias (prepare() without the first visible keys) and, as its
// Stats, backward_stats()'s copy of logsumexp with -inf (the dead rows) made +inf, so that cuDNN's
// P = exp(score + bias - Stats) is exactly 0 on those rows (docs/families/nn.md, "Masked
// backwards on cuDNN"). All are queued on the caller's stream: no host synchronisation.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ferrite/backend_families/attention_ops.hpp"

namespace ferrite::cuda::cudnn_sdpa::mask {

/// The mask's own rows: extents over [B, Hq, Sq] (1 where the mask broadcasts, i.e. its stride
/// is 0 or the problem's extent is 1). A problem row (b, h, i) reads mask row
/// ((b mod) * heads + (h mod)) * rows + (i mod), each index 0 where its extent is 1.
struct Rows {
  std::int64_t batch = 1, heads = 1, rows = 1;
  std::int64_t count() const { return batch * heads * rows; }
};
Rows rows_of(const AttentionDesc& desc);

/// For every mask row r (Rows order), first_visible[r] = the smallest key j whose mask element
/// does not hide it (Bool true; additive anything but -inf, NaN included), Sk when none does;
/// nothing is written when `first_visible` is null (a backward needs only the bias).
/// When `bias` is non-null it also writes the bias of row r at bias + r * bias_row (elements of
/// the dtype, keys 0..Sk-1; the rest of a padded row is left as it is): Bool true -> +0, false
/// -> -inf; additive: the mask's element bit for bit. `mask` is read through desc.mask_strides.
void prepare(const AttentionDesc& desc, const void* mask, void* bias, std::int64_t bias_row,
             std::int32_t* first_visible, cudaStream_t stream);

/// For every problem row (b, h, i) whose keys are all hidden (first_visible of its mask row is
/// Sk, or, under causal, above i: top-left, key j hidden from row i when j > i), writes out's
/// Dv elements (through desc.out_strides) as +0 and logsumexp (F32, dense [B, Hq, Sq]) as -inf.
/// Every other row is left untouched.
void fix_dead_rows(const AttentionDesc& desc, const std::int32_t* first_visible, void* out, float* logsumexp,
                   cudaStream_t stream);

/// The Stats a masked backward hands cuDNN: for each of the `count` rows of `logsumexp` (F32,
/// dense [B, Hq, Sq]), stats[r] = +inf where logsumexp[r] is -inf (a fully masked row, as every
/// forward route writes it), else logsumexp[r] bit for bit (NaN stays NaN).
void backward_stats(const float* logsumexp, float* stats, std::int64_t count, cudaStream_t stream);

}  // namespace ferrite::cuda::cudnn_sdpa::mask
