// Mask preparation, the fully-masked-row fix-up around cuDNN's masked SDPA forward and the
// backward's Stats (cudnn_sdpa_mask.cuh). F16 and BF16 elements are handled as their 16-bit
// patterns: the bias is a copy (additive) or one of two constants (Bool), and "hidden" is the
// pattern of -inf, so no arithmetic touches a value.
#include "cuda/attention/cudnn_sdpa_mask.cuh"

#include <algorithm>
#include <climits>

#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::cudnn_sdpa::mask {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;

// -inf in the dtype's bits.
std::uint16_t neg_inf_bits(DType dtype) { return dtype == DType::F16 ? 0xFC00u : 0xFF80u; }

struct PrepareArgs {
  std::int64_t heads, rows, count;  // Rows
  std::int64_t ms0, ms1, ms2, ms3;  // the caller's mask strides, 0 on the broadcast dims
  std::int64_t seq_k;
  std::int64_t bias_row;
  std::uint16_t neg_inf;
  bool is_bool;
};

// One warp a mask row: the lanes walk the keys (lane, lane + 32, ...), each keeps its first
// visible key, and a warp minimum gives the row's.
__global__ void prepare_kernel(PrepareArgs a, const void* mask, std::uint16_t* bias, std::int32_t* first_visible) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32; r < a.count;
       r += warps) {
    const std::int64_t i0 = r / (a.heads * a.rows), i1 = (r / a.rows) % a.heads, i2 = r % a.rows;
    const std::int64_t base = i0 * a.ms0 + i1 * a.ms1 + i2 * a.ms2;
    std::int64_t first = a.seq_k;
    for (std::int64_t j = lane; j < a.seq_k; j += 32) {
      const std::int64_t at = base + j * a.ms3;
      bool visible;
      std::uint16_t bits;
      if (a.is_bool) {
        visible = static_cast<const unsigned char*>(mask)[at] != 0;
        bits = visible ? std::uint16_t(0) : a.neg_inf;
      } else {
        bits = static_cast<const std::uint16_t*>(mask)[at];
        visible = bits != a.neg_inf;  // NaN and every finite value (and +inf) keep the key
      }
      if (bias != nullptr) bias[r * a.bias_row + j] = bits;
      if (visible && first == a.seq_k) first = j;
    }
    int f = static_cast<int>(first);  // Sk < 2^31 (cudnn_sdpa: tensors below 2^31 elements)
    for (int offset = 16; offset > 0; offset /= 2) f = min(f, __shfl_xor_sync(0xffffffffu, f, offset));
    if (lane == 0 && first_visible != nullptr) first_visible[r] = f;
  }
}

struct FixArgs {
  std::int64_t heads_q, seq_q, seq_k, value_dim, count;  // count: B * Hq * Sq
  std::int64_t heads, rows;                              // the mask's Rows (batch implicit)
  bool batch_kept, heads_kept, rows_kept;
  std::int64_t os0, os1, os2, os3;
  bool causal;
};

// One thread a problem row; a dead row (rare) clears its Dv elements itself.
__global__ void fix_kernel(FixArgs a, const std::int32_t* first_visible, std::uint16_t* out, float* logsumexp) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < a.count; r += stride) {
    const std::int64_t b = r / (a.heads_q * a.seq_q), h = (r / a.seq_q) % a.heads_q, i = r % a.seq_q;
    const std::int64_t m = ((a.batch_kept ? b : 0) * a.heads + (a.heads_kept ? h : 0)) * a.rows + (a.rows_kept ? i : 0);
    const std::int64_t f = first_visible[m];
    const bool dead = f >= a.seq_k || (a.causal && f > i);
    if (!dead) continue;
    logsumexp[r] = -INFINITY;
    std::uint16_t* row = out + b * a.os0 + h * a.os1 + i * a.os2;
    for (std::int64_t c = 0; c < a.value_dim; ++c) row[c * a.os3] = 0;  // +0 in F16 and BF16
  }
}

// One thread a row. A dead row's logsumexp is exactly -inf (fix_dead_rows, the own kernels'
// empty-row test); +inf makes every exp(s + bias - Stats) of that row 0 in cuDNN's backward.
__global__ void stats_kernel(const float* logsumexp, float* stats, std::int64_t count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < count; r += stride) {
    const float l = logsumexp[r];
    stats[r] = l == -INFINITY ? INFINITY : l;
  }
}

unsigned grid_for(std::int64_t items, std::int64_t per_block) {
  const std::int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 65535 * 8));
}

}  // namespace

Rows rows_of(const AttentionDesc& d) {
  auto own = [](std::int64_t extent, std::int64_t stride) { return extent == 1 || stride == 0 ? 1 : extent; };
  return {own(d.batch, d.mask_strides[0]), own(d.heads_q, d.mask_strides[1]), own(d.seq_q, d.mask_strides[2])};
}

void prepare(const AttentionDesc& d, const void* mask, void* bias, std::int64_t bias_row, std::int32_t* first_visible,
             cudaStream_t stream) {
  FERRITE_CHECK(d.dtype == DType::F16 || d.dtype == DType::BF16, InvalidArgument, "cuDNN attention mask: dtype ",
                dtype_name(d.dtype));
  FERRITE_CHECK(d.mask != AttentionMaskKind::None && d.seq_k < INT_MAX, InvalidArgument,
                "cuDNN attention mask: no mask, or too many keys");
  const Rows rows = rows_of(d);
  if (rows.count() == 0) return;
  // A dim the mask does not keep is read at index 0 whatever its stride.
  const PrepareArgs a{rows.heads,
                      rows.rows,
                      rows.count(),
                      rows.batch > 1 ? d.mask_strides[0] : 0,
                      rows.heads > 1 ? d.mask_strides[1] : 0,
                      rows.rows > 1 ? d.mask_strides[2] : 0,
                      d.seq_k > 1 ? d.mask_strides[3] : 0,
                      d.seq_k,
                      bias_row,
                      neg_inf_bits(d.dtype),
                      d.mask == AttentionMaskKind::Bool};
  prepare_kernel<<<grid_for(rows.count(), kWarpsPerBlock), kThreads, 0, stream>>>(
      a, mask, static_cast<std::uint16_t*>(bias), first_visible);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void fix_dead_rows(const AttentionDesc& d, const std::int32_t* first_visible, void* out, float* logsumexp,
                   cudaStream_t stream) {
  const std::int64_t count = d.batch * d.heads_q * d.seq_q;
  if (count == 0) return;
  const Rows rows = rows_of(d);
  const FixArgs a{d.heads_q,      d.seq_q,        d.seq_k,        d.value_dim,    count,
                  rows.heads,     rows.rows,      rows.batch > 1, rows.heads > 1, rows.rows > 1,
                  d.out_strides[0], d.out_strides[1], d.out_strides[2], d.out_strides[3], d.causal};
  fix_kernel<<<grid_for(count, kThreads), kThreads, 0, stream>>>(a, first_visible, static_cast<std::uint16_t*>(out),
                                                                  logsumexp);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void backward_stats(const float* logsumexp, float* stats, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  stats_kernel<<<grid_for(count, kThreads), kThreads, 0, stream>>>(logsumexp, stats, count);
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::cudnn_sdpa::mask
