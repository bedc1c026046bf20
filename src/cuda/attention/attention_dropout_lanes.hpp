// Dropout of the attention weights in the F16/BF16 tensor-core kernels (attention_half_mma_fwd.cu,
// attention_half_mma_bwd.cu): which 32-bit Philox word decides each score a lane holds, with one
// Philox group (four words) computed per four scores instead of one per score. Plain
// host-and-device functions, so that a host unit test (tests/unit/attention_dropout_lanes_test.cpp)
// replays a warp's exchange against dropout_keeps_element; the kernels' shuffles are in
// attention_dropout_lanes.cuh.
//
// The decision is the one every backend makes (attention_ops.hpp, AttentionDesc::dropout_*):
// weight (b, h, i, j) is element e = ((b Hq + h) Sq + i) Sk + j of a [B, Hq, Sq, Sk] tensor, kept
// where dropout_keep(word e % 4 of Philox group e / 4) holds, as nn::dropout keeps element e.
// A group is four consecutive keys of one row when Sk % 4 = 0 (`aligned_rows`), and the
// m16n8k16 accumulator layout (attention_half_mma_fragments.hpp) spreads those four keys over
// two lanes (query-row kernels) or four (the dk/dv kernel). Each lane then computes one group and
// the lanes trade words:
//  - query rows own (forward, dq): a lane holds keys 2q, 2q + 1 of an 8-key n-tile for rows g and
//    g + 8; lanes q = 2m and 2m + 1 (lane ^ 1) hold the four keys 4m .. 4m + 3 of both rows. The
//    even lane computes row g's group, the odd one row g + 8's, and they swap two words;
//  - keys own (dk/dv): a lane holds keys g and g + 8 for rows 2q, 2q + 1 of the streamed tile; the
//    four lanes g = 4k .. 4k + 3 (lane ^ 4, ^ 8, ^ 12) hold keys 4k .. 4k + 3 of the same four
//    (key half, row) pairs. Lane c = g % 4 computes pair c's group and sends each of the others
//    the word of its key, one shuffle per other lane.
// Otherwise (Sk % 4 != 0: a group can span two rows) every score takes its own group.
#pragma once

#include <cstdint>

#include "core/random_elements.hpp"

namespace ferrite::cuda::attention::dropout {

using detail::philox::Words;

struct Params {
  std::uint64_t seed = 0, offset = 0;
  std::uint32_t threshold = 0;
  float scale = 1.f;  // a kept weight's factor, 1 / (1 - p)
  bool aligned_rows = false;  // Sk % 4 = 0: lanes share groups (above)
};

FERRITE_HOST_DEVICE std::uint32_t word(const Words& w, unsigned i) {
  return i == 0 ? w.w[0] : i == 1 ? w.w[1] : i == 2 ? w.w[2] : w.w[3];  // selects: no local-memory array
}

FERRITE_HOST_DEVICE Words group_of(const Params& p, std::uint64_t e) {
  return detail::philox::group_words(p.seed, p.offset, e >> 2);
}

/// The word that decides element e, from its own group.
FERRITE_HOST_DEVICE std::uint32_t element_word(const Params& p, std::uint64_t e) {
  return word(group_of(p, e), static_cast<unsigned>(e & 3));
}

/// A weight's dropout factor: 1 / (1 - p) where the word keeps it, 0 where it drops it.
FERRITE_HOST_DEVICE float factor(const Params& p, std::uint32_t w) {
  return detail::philox::dropout_keep(w, p.threshold) ? p.scale : 0.f;
}

// ---- Query rows own (forward, dq) ----
// A lane's four scores of one n-tile in accumulator order: e0, e0 + 1 (row g, keys 2q, 2q + 1)
// and e1, e1 + 1 (row g + 8), e0 even. aligned_rows: e0 % 4 = 2 (q % 2).
struct RowPairShare {
  Words own;               // the even lane: row g's group; the odd lane: row g + 8's
  std::uint32_t send[2];   // what the partner (lane ^ 1) needs of it
};
FERRITE_HOST_DEVICE RowPairShare row_pair_share(const Params& p, std::uint64_t e0, std::uint64_t e1, int lane) {
  const bool odd = (lane & 1) != 0;
  const Words w = group_of(p, odd ? e1 : e0);
  // The even lane's partner needs row g's keys 4m + 2, 4m + 3; the odd lane's row g + 8's 4m, 4m + 1.
  return {w, {odd ? w.w[0] : w.w[2], odd ? w.w[1] : w.w[3]}};
}
/// The four words in accumulator order, `recv` being the partner's send.
FERRITE_HOST_DEVICE void row_pair_words(const RowPairShare& s, const std::uint32_t (&recv)[2], int lane,
                                        std::uint32_t (&out)[4]) {
  const bool odd = (lane & 1) != 0;
  out[0] = odd ? recv[0] : s.own.w[0];
  out[1] = odd ? recv[1] : s.own.w[1];
  out[2] = odd ? s.own.w[2] : recv[0];
  out[3] = odd ? s.own.w[3] : recv[1];
}

// ---- Keys own (dk/dv) ----
// A lane's four scores of one n-tile in accumulator order i: key g + 8 (i >> 1), row 2q + (i & 1),
// element e + 8 (i >> 1) + (i & 1) Sk for e = its (key g, row 2q) element. aligned_rows: e % 4 = g % 4.
FERRITE_HOST_DEVICE unsigned quad_index(int lane) { return static_cast<unsigned>(lane >> 2) & 3u; }
FERRITE_HOST_DEVICE std::uint64_t key_quad_element(std::uint64_t e, std::int64_t seq_k, unsigned i) {
  return e + 8 * (i >> 1) + (i & 1) * static_cast<std::uint64_t>(seq_k);
}
/// Lane c = g % 4 computes score c's group (the quad's pair c).
FERRITE_HOST_DEVICE Words key_quad_own(const Params& p, std::uint64_t e, std::int64_t seq_k, int lane) {
  return group_of(p, key_quad_element(e, seq_k, quad_index(lane)));
}
/// What lane c sends in round m (1..3) to lane c ^ m (lane ^ 4 m): that lane's key's word.
FERRITE_HOST_DEVICE std::uint32_t key_quad_send(const Words& own, int lane, unsigned m) {
  return word(own, quad_index(lane) ^ m);
}
/// The four words in accumulator order: score i's group is lane c ^ i's own (round m = i ^ c).
FERRITE_HOST_DEVICE void key_quad_words(const Words& own, const std::uint32_t (&recv)[3], int lane,
                                        std::uint32_t (&out)[4]) {
  const unsigned c = quad_index(lane);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned m = i ^ c;
    out[i] = m == 0 ? word(own, c) : m == 1 ? recv[0] : m == 2 ? recv[1] : recv[2];
  }
}

}  // namespace ferrite::cuda::attention::dropout
