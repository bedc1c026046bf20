// The F16/BF16 tensor-core kernels' dropout factors, one call per n-tile of a warp's scores: the
// lanes' word exchange of attention_dropout_lanes.hpp done with warp shuffles (every lane of the
// warp must call these together), or one group per score where groups span rows.
#pragma once

#include <cstdint>

#include "cuda/attention/attention_dropout_lanes.hpp"
#include "ferrite/backend_families/attention_ops.hpp"

namespace ferrite::cuda::attention::dropout {

inline Params params_of(const AttentionDesc& d) {
  return {d.dropout_seed, d.dropout_offset, d.dropout_threshold, static_cast<float>(d.dropout_scale),
          d.seq_k % 4 == 0};
}

/// Query rows own: the factors of scores e0, e0 + 1 (row g) and e1, e1 + 1 (row g + 8).
__device__ __forceinline__ void row_pair_factors(const Params& p, std::uint64_t e0, std::uint64_t e1, int lane,
                                                 float (&f)[4]) {
  std::uint32_t w[4];
  if (p.aligned_rows) {
    const RowPairShare s = row_pair_share(p, e0, e1, lane);
    const std::uint32_t recv[2] = {__shfl_xor_sync(0xffffffffu, s.send[0], 1),
                                   __shfl_xor_sync(0xffffffffu, s.send[1], 1)};
    row_pair_words(s, recv, lane, w);
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = element_word(p, (i < 2 ? e0 : e1) + (i & 1));
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) f[i] = factor(p, w[i]);
}

/// Keys own: the keep bits (bit i: kept) of scores key_quad_element(e, Sk, i), i = 0..3.
__device__ __forceinline__ unsigned key_quad_keeps(const Params& p, std::uint64_t e, std::int64_t seq_k, int lane) {
  std::uint32_t w[4];
  if (p.aligned_rows) {
    const Words own = key_quad_own(p, e, seq_k, lane);
    std::uint32_t recv[3];
#pragma unroll
    for (unsigned m = 1; m < 4; ++m)
      recv[m - 1] = __shfl_xor_sync(0xffffffffu, key_quad_send(own, lane, m), static_cast<int>(4 * m));
    key_quad_words(own, recv, lane, w);
  } else {
#pragma unroll
    for (unsigned i = 0; i < 4; ++i) w[i] = element_word(p, key_quad_element(e, seq_k, i));
  }
  unsigned bits = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) bits |= detail::philox::dropout_keep(w[i], p.threshold) ? 1u << i : 0u;
  return bits;
}

}  // namespace ferrite::cuda::attention::dropout
