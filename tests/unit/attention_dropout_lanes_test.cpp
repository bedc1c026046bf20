// The F16/BF16 tensor-core kernels' dropout words (src/cuda/attention/attention_dropout_lanes.hpp),
// replayed for one warp on the host: every lane's four scores of an n-tile must get the word that
// decides them alone, word e % 4 of Philox group e / 4 for element e = ((b Hq + h) Sq + i) Sk + j,
// the word nn::dropout and the CPU backend use. The kernels trade words between lanes with
// shuffles (attention_dropout_lanes.cuh); here each lane's sends are computed first, then every
// lane reads its partners' as __shfl_xor_sync would give them. Shapes: Sk multiples of 4 (shared
// groups) at tile bases of every kernel, and, as a control, Sk not a multiple of 4, where the
// sharing would pick wrong words and the kernels take one group a score instead.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/random_elements.hpp"
#include "cuda/attention/attention_dropout_lanes.hpp"
#include "cuda/attention/attention_half_mma_fragments.hpp"

namespace ferrite {
namespace {

namespace dropout = cuda::attention::dropout;
namespace frag = cuda::attention::half_mma;

// The word of element e straight from the generator.
std::uint32_t truth(const dropout::Params& p, std::uint64_t e) {
  return detail::philox::group_words(p.seed, p.offset, e / 4).w[e % 4];
}

struct Shape {
  std::int64_t bh, sq, sk;
  std::uint64_t element(std::int64_t row, std::int64_t key) const {
    return static_cast<std::uint64_t>((bh * sq + row) * sk + key);
  }
  std::string what() const {
    return "bh " + std::to_string(bh) + " Sq " + std::to_string(sq) + " Sk " + std::to_string(sk);
  }
};

// Query rows own (forward, dq): the warp's rows m0 + g, + 8 and keys key0 + 8 j + 2q, + 1 of
// n-tile j (c_row, c_col, score_row). Returns the number of scores whose shared word is wrong.
int row_pair_mismatches(const dropout::Params& p, const Shape& s, std::int64_t m0, std::int64_t key0, int nt) {
  int wrong = 0;
  for (int j = 0; j < nt; ++j) {
    dropout::RowPairShare share[32];
    std::uint64_t e0[32], e1[32];
    for (int lane = 0; lane < 32; ++lane) {
      const std::int64_t key = key0 + frag::score_row(j, frag::c_col(lane, 0));
      e0[lane] = s.element(m0 + frag::c_row(lane, 0), key);
      e1[lane] = s.element(m0 + frag::c_row(lane, 2), key);
      share[lane] = dropout::row_pair_share(p, e0[lane], e1[lane], lane);
    }
    for (int lane = 0; lane < 32; ++lane) {
      const std::uint32_t recv[2] = {share[lane ^ 1].send[0], share[lane ^ 1].send[1]};
      std::uint32_t w[4];
      dropout::row_pair_words(share[lane], recv, lane, w);
      for (int i = 0; i < 4; ++i) {
        // Register i: row c_row(lane, i), key c_col(lane, i) of the n-tile.
        const std::uint64_t e = s.element(m0 + frag::c_row(lane, i), key0 + frag::score_row(j, frag::c_col(lane, i)));
        EXPECT_EQ(e, (i < 2 ? e0[lane] : e1[lane]) + static_cast<std::uint64_t>(i & 1));
        EXPECT_EQ(dropout::element_word(p, e), truth(p, e));
        if (w[i] != truth(p, e)) ++wrong;
      }
    }
  }
  return wrong;
}

// Keys own (dk/dv): the warp's keys k0 + g, + 8 and streamed rows i0 + 8 j + 2q, + 1 of n-tile j.
int key_quad_mismatches(const dropout::Params& p, const Shape& s, std::int64_t k0, std::int64_t i0, int nt) {
  int wrong = 0;
  for (int j = 0; j < nt; ++j) {
    dropout::Words own[32];
    std::uint64_t base[32];
    for (int lane = 0; lane < 32; ++lane) {
      base[lane] = s.element(i0 + frag::score_row(j, frag::c_col(lane, 0)), k0 + frag::c_row(lane, 0));
      own[lane] = dropout::key_quad_own(p, base[lane], s.sk, lane);
    }
    for (int lane = 0; lane < 32; ++lane) {
      std::uint32_t recv[3];
      for (unsigned m = 1; m < 4; ++m) {
        const int from = lane ^ static_cast<int>(4 * m);
        recv[m - 1] = dropout::key_quad_send(own[from], from, m);
      }
      std::uint32_t w[4];
      dropout::key_quad_words(own[lane], recv, lane, w);
      for (unsigned i = 0; i < 4; ++i) {
        // Register i: key c_row(lane, i), streamed row c_col(lane, i) of the n-tile.
        const std::uint64_t e = s.element(i0 + frag::score_row(j, frag::c_col(lane, static_cast<int>(i))),
                                          k0 + frag::c_row(lane, static_cast<int>(i)));
        EXPECT_EQ(e, dropout::key_quad_element(base[lane], s.sk, i));
        if (w[i] != truth(p, e)) ++wrong;
      }
    }
  }
  return wrong;
}

TEST(AttentionDropoutLanes, SharedWordsAreEachScoresOwn) {
  const dropout::Params p{0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 1u << 23, 2.f, true};
  // Sk multiples of 4; tile bases as the kernels have them: the forward's warps (rows 16 w of a
  // 128-row block, keys in 64-key tiles), dq's (16-row groups, 32-key halves), dk/dv's (16-key
  // groups of a 64-key block, 64-row tiles); bh up to the last of several heads.
  for (const Shape s : {Shape{0, 17, 40}, Shape{3, 130, 200}, Shape{7, 1000, 1000}, Shape{1, 33, 4}, Shape{5, 64, 64}}) {
    for (const std::int64_t m0 : {0, 16, 112, 128 + 48})
      for (const std::int64_t key0 : {0, 32, 64, 128 + 32})
        EXPECT_EQ(row_pair_mismatches(p, s, m0, key0, 8), 0) << s.what() << " rows " << m0 << " keys " << key0;
    for (const std::int64_t k0 : {0, 16, 48, 64 + 32})
      for (const std::int64_t i0 : {0, 64, 128})
        EXPECT_EQ(key_quad_mismatches(p, s, k0, i0, 8), 0) << s.what() << " keys " << k0 << " rows " << i0;
  }
}

// The control: with Sk not a multiple of 4 a group spans rows, the shared words are wrong for
// some scores (so the test above can fail), and the kernels' per-score words (element_word) are
// right by construction.
TEST(AttentionDropoutLanes, SharingNeedsRowsOfWholeGroups) {
  const dropout::Params p{7, 0, 1u << 23, 2.f, false};
  for (const Shape s : {Shape{0, 17, 41}, Shape{2, 70, 70}, Shape{1, 9, 13}}) {
    EXPECT_GT(row_pair_mismatches(p, s, 0, 0, 8), 0) << s.what();
    EXPECT_GT(key_quad_mismatches(p, s, 0, 0, 8), 0) << s.what();
  }
  const Shape aligned{0, 17, 40};
  EXPECT_EQ(row_pair_mismatches(p, aligned, 0, 0, 8), 0);
}

// The factor: 1 / (1 - p) exactly where dropout_keeps_element keeps the element (nn::dropout's
// and the CPU backend's decision), 0 elsewhere.
TEST(AttentionDropoutLanes, FactorIsTheElementsDecision) {
  const dropout::Params p{11, 4, static_cast<std::uint32_t>(0.3 * (1u << 24)), 1.f / 0.7f, true};
  int kept = 0;
  for (std::uint64_t e = 0; e < 4096; ++e) {
    const float f = dropout::factor(p, dropout::element_word(p, e));
    const bool keep = detail::philox::dropout_keeps_element(p.seed, p.offset, e, p.threshold);
    EXPECT_EQ(f, keep ? p.scale : 0.f) << e;
    kept += keep;
  }
  EXPECT_NEAR(kept / 4096.0, 0.7, 0.03);
}

}  // namespace
}  // namespace ferrite
