// The 3xTF32 F32 attention forward (src/cuda/attention/attention_f32_tf32x3.cu) and backward on
// the host, no GPU needed:
//  - its index maps (attention_tf32x3_fragments.hpp: PTX's m16n8k8 TF32 fragment layout and
//    the kernel's k/n orders) replayed for one warp, with an emulated MMA, against plain
//    matrix products: S = Q K^T over 16-dim chunks, then O = P V with P taken from S's
//    accumulators as the kernel does;
//  - its arithmetic (TF32 splits, three MMAs per product, F32 online softmax in 64-key tiles)
//    emulated on random problems and compared with an FP64 reference, against the F32
//    attention tolerance of the conformance suite (CUDA vs CPU: rtol 1e-4, atol 1e-5).
// And the same for the backward (attention_f32_tf32x3_bwd.cu): its row order and the maps of
// its two products (a score product with the streamed rows as B, then P or dS from the score
// accumulators times the streamed rows) replayed for one warp, and its arithmetic emulated
// against FP64 at the same tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "cuda/attention/attention_tf32x3_fragments.hpp"

namespace ferrite::cuda::attention::tf32x3 {
namespace {

constexpr int kLanes = 32;

// ---- One warp's m16n8k8 MMA, from the fragment layout: d = a b + c ----
using AFrag = double[kLanes][4];
using BFrag = double[kLanes][2];
using CFrag = double[kLanes][4];

void emulated_mma(CFrag& c, const AFrag& a, const BFrag& b) {
  double am[16][8] = {}, bm[8][8] = {};
  int a_seen[16][8] = {}, b_seen[8][8] = {};
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 4; ++i) {
      am[a_row(lane, i)][a_col(lane, i)] = a[lane][i];
      ++a_seen[a_row(lane, i)][a_col(lane, i)];
    }
    for (int i = 0; i < 2; ++i) {
      bm[b_row(lane, i)][b_col(lane, i)] = b[lane][i];
      ++b_seen[b_row(lane, i)][b_col(lane, i)];
    }
  }
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 8; ++k) ASSERT_EQ(a_seen[r][k], 1) << "A element (" << r << ", " << k << ")";
  for (int k = 0; k < 8; ++k)
    for (int n = 0; n < 8; ++n) ASSERT_EQ(b_seen[k][n], 1) << "B element (" << k << ", " << n << ")";
  for (int lane = 0; lane < kLanes; ++lane)
    for (int i = 0; i < 4; ++i) {
      double sum = c[lane][i];
      for (int k = 0; k < 8; ++k) sum += am[c_row(lane, i)][k] * bm[k][c_col(lane, i)];
      c[lane][i] = sum;
    }
}

// A few entries of the PTX ISA's figures for m16n8k8 .tf32 (lane 5: group 1, quad lane 1), and
// every C element held exactly once.
TEST(Tf32x3Fragments, MatchThePtxLayout) {
  EXPECT_EQ(a_row(5, 0), 1);
  EXPECT_EQ(a_col(5, 0), 1);
  EXPECT_EQ(a_row(5, 1), 9);
  EXPECT_EQ(a_col(5, 1), 1);
  EXPECT_EQ(a_row(5, 2), 1);
  EXPECT_EQ(a_col(5, 2), 5);
  EXPECT_EQ(a_row(5, 3), 9);
  EXPECT_EQ(a_col(5, 3), 5);
  EXPECT_EQ(b_row(5, 0), 1);
  EXPECT_EQ(b_row(5, 1), 5);
  EXPECT_EQ(b_col(5, 1), 1);
  EXPECT_EQ(c_row(5, 0), 1);
  EXPECT_EQ(c_col(5, 0), 2);
  EXPECT_EQ(c_col(5, 1), 3);
  EXPECT_EQ(c_row(5, 2), 9);
  EXPECT_EQ(c_row(31, 3), 15);
  EXPECT_EQ(c_col(31, 3), 7);
  int seen[16][8] = {};
  for (int lane = 0; lane < kLanes; ++lane)
    for (int i = 0; i < 4; ++i) ++seen[c_row(lane, i)][c_col(lane, i)];
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) EXPECT_EQ(seen[r][n], 1);
}

// The kernel's orders are permutations: each chunk's 16 dims, each n-tile's 8 keys, D output dims.
TEST(Tf32x3Fragments, KernelOrdersArePermutations) {
  int dims[16] = {};
  for (int step = 0; step < 2; ++step)
    for (int k = 0; k < 8; ++k) ++dims[qk_dim(step, k)];
  for (int x : dims) EXPECT_EQ(x, 1);
  for (int j = 0; j < 8; ++j) {
    int s_keys[8] = {}, p_keys[8] = {};
    for (int n = 0; n < 8; ++n) ++s_keys[s_key(j, n) - 8 * j];
    for (int k = 0; k < 8; ++k) ++p_keys[pv_key(j, k) - 8 * j];
    for (int x = 0; x < 8; ++x) EXPECT_EQ(s_keys[x] * p_keys[x], 1);
  }
  for (int d : {64, 128}) {
    std::vector<int> out(static_cast<std::size_t>(d));
    for (int nt = 0; nt < d / 8; ++nt)
      for (int n = 0; n < 8; ++n) ++out[static_cast<std::size_t>(pv_dim(nt, n))];
    for (int x : out) EXPECT_EQ(x, 1);
  }
}

// One warp's two products, gathered with the kernel's maps, against plain products (integers
// keep the sums exact): the score C = A B^T over D dims (16 own rows of A, a 64-row streamed
// tile B whose row for n-tile j and MMA index n is score_row(j, n)), then X C2 with X (P or dS)
// placed in C's accumulators and C2's row for k-step j and MMA index k at second_row(j, k).
template <class ScoreRow, class SecondRow>
void replay_one_warp(unsigned seed, ScoreRow score_row, SecondRow second_row) {
  constexpr int D = 128, kStream = 64;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(-8, 8);
  std::vector<double> own(16 * D), stream(kStream * D), x(16 * kStream), stream2(kStream * D);
  for (auto* m : {&own, &stream, &x, &stream2})
    for (double& e : *m) e = u(rng);

  static CFrag c[8];
  for (auto& tile : c)
    for (auto& lane : tile)
      for (double& e : lane) e = 0;
  for (int ch = 0; ch < D; ch += 16)
    for (int step = 0; step < 2; ++step) {
      AFrag a;
      for (int lane = 0; lane < kLanes; ++lane)
        for (int i = 0; i < 4; ++i) a[lane][i] = own[a_row(lane, i) * D + ch + qk_dim(step, a_col(lane, i))];
      for (int j = 0; j < 8; ++j) {
        BFrag b;
        for (int lane = 0; lane < kLanes; ++lane)
          for (int i = 0; i < 2; ++i)
            b[lane][i] = stream[score_row(j, b_col(lane, i)) * D + ch + qk_dim(step, b_row(lane, i))];
        emulated_mma(c[j], a, b);
      }
    }
  for (int j = 0; j < 8; ++j)
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 4; ++i) {
        const int row = c_row(lane, i), r = score_row(j, c_col(lane, i));
        double want = 0;
        for (int d = 0; d < D; ++d) want += own[row * D + d] * stream[r * D + d];
        ASSERT_EQ(c[j][lane][i], want) << "score own row " << row << " streamed row " << r;
      }

  // X into the score's accumulator layout, then the second product.
  for (int j = 0; j < 8; ++j)
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 4; ++i) c[j][lane][i] = x[c_row(lane, i) * kStream + score_row(j, c_col(lane, i))];
  static CFrag o[D / 8];
  for (auto& tile : o)
    for (auto& lane : tile)
      for (double& e : lane) e = 0;
  for (int j = 0; j < 8; ++j) {
    AFrag a;
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 4; ++i) a[lane][i] = c[j][lane][p_from_s(i)];
    for (int nt = 0; nt < D / 8; ++nt) {
      BFrag b;
      for (int lane = 0; lane < kLanes; ++lane)
        for (int i = 0; i < 2; ++i) b[lane][i] = stream2[second_row(j, b_row(lane, i)) * D + pv_dim(nt, b_col(lane, i))];
      emulated_mma(o[nt], a, b);
    }
  }
  for (int nt = 0; nt < D / 8; ++nt)
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 4; ++i) {
        const int row = c_row(lane, i), dim = pv_dim(nt, c_col(lane, i));
        double want = 0;
        for (int r = 0; r < kStream; ++r) want += x[row * kStream + r] * stream2[r * D + dim];
        ASSERT_EQ(o[nt][lane][i], want) << "second product own row " << row << " dim " << dim;
      }
}

// The forward: S = Q K^T (keys in order) and O = P V with P in S's accumulators.
TEST(Tf32x3Fragments, OneWarpReplaysBothProducts) {
  replay_one_warp(5, [](int j, int n) { return s_key(j, n); }, [](int j, int k) { return pv_key(j, k); });
}

// The backward's streamed-row order: a permutation within each 8-row n-tile.
TEST(Tf32x3Fragments, BackwardRowOrdersArePermutations) {
  int seen[8] = {};
  for (int n = 0; n < 8; ++n) ++seen[bwd_perm(n)];
  for (int x : seen) EXPECT_EQ(x, 1);
  for (int j = 0; j < 8; ++j) {
    int n_rows[8] = {}, k_rows[8] = {};
    for (int x = 0; x < 8; ++x) {
      ++n_rows[bwd_stream_n(j, x) - 8 * j];
      ++k_rows[bwd_stream_k(j, x) - 8 * j];
    }
    for (int x = 0; x < 8; ++x) EXPECT_EQ(n_rows[x] * k_rows[x], 1);
  }
}

// One warp of the backward (attention_f32_tf32x3_bwd.cu): the score product (S = Q K^T,
// dP = dO V^T, S^T = K Q^T, dP^T = V dO^T) over the streamed rows in bwd_perm's order, then the
// second product (dQ += dS K, dV += P^T dO, dK += dS^T Q).
TEST(Tf32x3Fragments, OneWarpReplaysTheBackwardProducts) {
  replay_one_warp(6, [](int j, int n) { return bwd_stream_n(j, n); }, [](int j, int k) { return bwd_stream_k(j, k); });
}

// The kernels' float4 reads against the maps (static_asserts of the kernel files, which a CPU
// build does not compile), and the check itself: each kernel's maps with the other's read
// order must fail it.
TEST(Tf32x3Fragments, MapsMatchTheKernelsFloat4Reads) {
  const auto in_order = [](int n) { return n; };
  EXPECT_TRUE(maps_match_float4_reads(s_key, pv_key, in_order));
  EXPECT_TRUE(maps_match_float4_reads(bwd_stream_n, bwd_stream_k, bwd_perm));
  EXPECT_FALSE(maps_match_float4_reads(s_key, pv_key, bwd_perm));
  EXPECT_FALSE(maps_match_float4_reads(bwd_stream_n, bwd_stream_k, in_order));
  EXPECT_FALSE(maps_match_float4_reads(s_key, bwd_stream_k, in_order));
}

// ---- The kernel's arithmetic on the host ----

// cvt.rna.tf32.f32: nearest, ties away from zero, to 10 stored mantissa bits (the low 13 bits
// of the F32 pattern cleared); inf and NaN pass.
float tf32_rna(float x) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  u = (u + 0x1000u) & 0xffffe000u;
  return std::bit_cast<float>(u);
}
// cvt.rna.satfinite.tf32.f32: as above, but results past the largest TF32 saturate to it.
float tf32_rna_satfinite(float x) {
  if (std::isnan(x)) return x;
  const float r = tf32_rna(x);
  return std::isinf(r) ? std::copysign(std::bit_cast<float>(0x7f7fe000u), x) : r;
}

struct Split {
  float big, small;
};
// The kernel's two splits: as specified (cvt.rna.satfinite big, cvt.rna small), or fast (big: x's
// bits + half a TF32 ulp, low bits cleared; small = x - big, truncated by the tensor core, which
// reads only a TF32 operand's upper 19 bits).
float tf32_truncate(float x) { return std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) & 0xffffe000u); }
Split split(float x, bool fast) {
  if (fast) {
    const float big = std::bit_cast<float>((std::bit_cast<std::uint32_t>(x) + 0x1000u) & 0xffffe000u);
    return {big, tf32_truncate(x - big)};
  }
  const float big = tf32_rna_satfinite(x);
  return {big, tf32_rna(x - big)};
}

// One MMA's update of one accumulator: the 8 TF32 products are exact; the model rounds their
// sum with the accumulator to F32 once, to nearest or (pessimistic, some tensor cores
// truncate) toward zero.
enum class Rounding { Nearest, TowardZero };
float mma_add(float c, const float* a, const float* b, int n, Rounding r) {
  double sum = c;
  for (int x = 0; x < n; ++x) sum += static_cast<double>(a[x]) * b[x];
  const float f = static_cast<float>(sum);
  if (r == Rounding::Nearest || static_cast<double>(f) == sum || !std::isfinite(f)) return f;
  // static_cast rounded to nearest; step back toward zero if it rounded away.
  return std::abs(static_cast<double>(f)) > std::abs(sum) ? std::nextafter(f, 0.f) : f;
}

// One k-step's 8 terms of a and b, each split into big and small parts as the kernel splits them.
struct SplitTerms {
  float ab[8], as[8], bb[8], bs[8];
  SplitTerms(const float* a, const float* b, bool fast) {
    for (int x = 0; x < 8; ++x) {
      const Split sa = split(a[x], fast), sb = split(b[x], fast);
      ab[x] = sa.big, as[x] = sa.small, bb[x] = sb.big, bs[x] = sb.small;
    }
  }
};

// acc += sum_x a[x] b[x] over 8 terms, as the kernel's three MMAs: small cross terms, then big.
float mma3_add(float acc, const float* a, const float* b, Rounding r, bool fast) {
  const SplitTerms t(a, b, fast);
  acc = mma_add(acc, t.as, t.bb, 8, r);
  acc = mma_add(acc, t.ab, t.bs, 8, r);
  return mma_add(acc, t.ab, t.bb, 8, r);
}

// The backward's score products (mma3_apart): the small cross terms into their own
// accumulator `cross`, big x big into acc; the kernel adds the two after the last k-step.
float mma3_apart_add(float acc, float& cross, const float* a, const float* b, Rounding r, bool fast) {
  const SplitTerms t(a, b, fast);
  cross = mma_add(cross, t.as, t.bb, 8, r);
  cross = mma_add(cross, t.ab, t.bs, 8, r);
  return mma_add(acc, t.ab, t.bb, 8, r);
}

struct Problem {
  int sq, sk, d;
  bool causal;
  bool normal;  // randn inputs, else uniform [-1, 1] (as the conformance cases)
};

struct Errors {
  double out_ratio = 0, lse_ratio = 0;  // max |err| / (atol + rtol |ref|) at rtol 1e-4, atol 1e-5
  double out_rel = 0;                   // max |err| / max |ref|
};

// One (batch, head) slice: the kernel's order of operations (64-key tiles; score chunks of 16
// dims = two 8-dim MMA k-steps in qk_dim order; P V in 8-key k-steps in pv_key order; F32
// online softmax with fmaxf/expf and 4 partial sums a row) with `tensor_cores` on, or the
// SIMT kernel's plain F32 fmaf sums with it off; against FP64.
Errors emulate(const Problem& pr, bool tensor_cores, Rounding rounding, bool fast, unsigned seed) {
  const int D = pr.d;
  std::mt19937 rng(seed);
  std::normal_distribution<float> n01(0.f, 1.f);
  std::uniform_real_distribution<float> u11(-1.f, 1.f);
  auto fill = [&](std::vector<float>& m, std::size_t size) {
    m.resize(size);
    for (float& x : m) x = pr.normal ? n01(rng) : u11(rng);
  };
  std::vector<float> q, k, v;
  fill(q, static_cast<std::size_t>(pr.sq) * D);
  fill(k, static_cast<std::size_t>(pr.sk) * D);
  fill(v, static_cast<std::size_t>(pr.sk) * D);
  const float scale = 1.f / std::sqrt(static_cast<float>(D));
  Errors e;
  double ref_max = 0, err_max = 0;
  std::vector<float> qrow(D), krow(D), s(64), acc(D), a8(8), b8(8);
  for (int row = 0; row < pr.sq; ++row) {
    const int key_end = pr.causal ? std::min(pr.sk, row + 1) : pr.sk;
    float m = -INFINITY;
    float l[4] = {0, 0, 0, 0};
    std::fill(acc.begin(), acc.end(), 0.f);
    for (int j0 = 0; j0 < key_end; j0 += 64) {
      float mx = -INFINITY;
      for (int kk = 0; kk < 64; ++kk) {
        const int key = j0 + kk;
        if (key >= key_end) {
          s[kk] = -INFINITY;
          continue;
        }
        const float* qr = &q[static_cast<std::size_t>(row) * D];
        const float* kr = &k[static_cast<std::size_t>(key) * D];
        float dot = 0;
        if (tensor_cores) {
          for (int c = 0; c < D; c += 16)
            for (int step = 0; step < 2; ++step) {
              for (int x = 0; x < 8; ++x) a8[x] = qr[c + qk_dim(step, x)], b8[x] = kr[c + qk_dim(step, x)];
              dot = mma3_add(dot, a8.data(), b8.data(), rounding, fast);
            }
        } else {
          for (int c = 0; c < D; ++c) dot = std::fma(qr[c], kr[c], dot);
        }
        s[kk] = dot * scale;
        mx = std::fmax(mx, s[kk]);
      }
      const float m_new = std::fmax(m, mx);
      const float base = m_new == -INFINITY ? 0.f : m_new;
      const float alpha = std::exp(m - base);
      m = m_new;
      float sum[4] = {0, 0, 0, 0};
      for (int kk = 0; kk < 64; ++kk) {
        s[kk] = std::exp(s[kk] - base);
        sum[(kk % 8) / 2] += s[kk];  // lane quad q holds keys 8j + 2q, 8j + 2q + 1
      }
      for (int x = 0; x < 4; ++x) l[x] = l[x] * alpha + sum[x];
      for (float& x : acc) x *= alpha;
      for (int dim = 0; dim < D; ++dim) {
        if (tensor_cores) {
          for (int j = 0; j < 8; ++j) {
            for (int x = 0; x < 8; ++x) {
              const int kk = pv_key(j, x);
              a8[x] = s[kk];
              b8[x] = j0 + kk < pr.sk ? v[static_cast<std::size_t>(j0 + kk) * D + dim] : 0.f;
            }
            acc[dim] = mma3_add(acc[dim], a8.data(), b8.data(), rounding, fast);
          }
        } else {
          for (int kk = 0; kk < 64; ++kk)
            acc[dim] = std::fma(s[kk], j0 + kk < pr.sk ? v[static_cast<std::size_t>(j0 + kk) * D + dim] : 0.f, acc[dim]);
        }
      }
    }
    const float total = ((l[0] + l[1]) + (l[2] + l[3]));
    const float inv = total == 0.f ? 0.f : 1.f / total;
    const float lse = total == 0.f ? -INFINITY : m + std::log(total);

    // FP64 reference of the row.
    std::vector<double> sd(static_cast<std::size_t>(key_end));
    double md = -INFINITY;
    for (int key = 0; key < key_end; ++key) {
      double dot = 0;
      for (int c = 0; c < D; ++c)
        dot += static_cast<double>(q[static_cast<std::size_t>(row) * D + c]) * k[static_cast<std::size_t>(key) * D + c];
      sd[static_cast<std::size_t>(key)] = dot * static_cast<double>(scale);
      md = std::max(md, sd[static_cast<std::size_t>(key)]);
    }
    double ld = 0;
    for (double& x : sd) ld += (x = std::exp(x - md));
    const double lse_ref = md + std::log(ld);
    e.lse_ratio = std::max(e.lse_ratio, std::abs(lse - lse_ref) / (1e-5 + 1e-4 * std::abs(lse_ref)));
    for (int dim = 0; dim < D; ++dim) {
      double ref = 0;
      for (int key = 0; key < key_end; ++key)
        ref += sd[static_cast<std::size_t>(key)] * v[static_cast<std::size_t>(key) * D + dim];
      ref /= ld;
      const double err = std::abs(static_cast<double>(acc[dim] * inv) - ref);
      e.out_ratio = std::max(e.out_ratio, err / (1e-5 + 1e-4 * std::abs(ref)));
      ref_max = std::max(ref_max, std::abs(ref));
      err_max = std::max(err_max, err);
    }
  }
  e.out_rel = err_max / ref_max;
  return e;
}

void report(const char* name, const Problem& pr) {
  const Errors simt = emulate(pr, false, Rounding::Nearest, false, 7);
  std::printf("%s (Sq %d, Sk %d, D %d%s, %s): share of the F32 tolerance used, out / logsumexp\n", name, pr.sq, pr.sk,
              pr.d, pr.causal ? ", causal" : "", pr.normal ? "randn" : "uniform [-1, 1]");
  std::printf("  F32 SIMT                 %.4f / %.4f   (max |err| / max |out|: %.2e)\n", simt.out_ratio, simt.lse_ratio,
              simt.out_rel);
  for (const bool fast : {false, true})
    for (const Rounding r : {Rounding::Nearest, Rounding::TowardZero}) {
      const Errors e = emulate(pr, true, r, fast, 7);
      std::printf("  3xTF32 %s, sums %s %.4f / %.4f   (%.2e)\n", fast ? "fast   " : "rounded",
                  r == Rounding::Nearest ? "nearest  " : "truncated", e.out_ratio, e.lse_ratio, e.out_rel);
      // The CUDA result must be within the tolerance of the CPU backend's (itself within 1e-5,
      // 1e-6 of FP64); leave at least half of it to the CPU's rounding and the exp/log ulps.
      EXPECT_LT(e.out_ratio, 0.5) << name;
      EXPECT_LT(e.lse_ratio, 0.5) << name;
    }
}

// The conformance cases' inputs (uniform [-1, 1]) at the tiled kernel's largest D = 128 case,
// and randn inputs (as TiledF32Attention.AgreesWithTheGeneralKernel, at 1e-4 / 1e-5 too).
TEST(Tf32x3Arithmetic, ErrorFitsTheF32AttentionTolerance) {
  report("conformance-like", {300, 300, 128, true, false});
  report("randn", {256, 517, 128, false, true});
  report("randn d64", {129, 333, 64, true, true});
}

// The bench shape (one head of B=1, H=16, S=2048, D=128); ~30 s on one core, so opt-in:
// --gtest_also_run_disabled_tests --gtest_filter='*Tf32x3Arithmetic*'.
TEST(Tf32x3Arithmetic, DISABLED_ErrorAtTheBenchShape) {
  report("bench", {2048, 2048, 128, false, true});
  report("bench causal", {2048, 2048, 128, true, true});
}

// ---- The backward's arithmetic on the host ----

struct GradErrors {
  double ratio[3] = {0, 0, 0};  // dq, dk, dv: max |err| / (atol + rtol |ref|) at rtol 1e-4, atol 1e-5
};

// One (batch, head) slice of the backward (attention_f32_tf32x3_bwd.cu) in the kernels' order
// of operations with `tensor_cores` on (dq: S and dP over 16-dim chunks of two k-steps, their
// cross terms summed apart, dS = P (dP - delta), dQ over 8-key k-steps in bwd_stream_k order,
// each 64-key tile's two 32-key halves summed apart and added at the end; dk/dv: S^T and dP^T
// with the key rows as A, dV and dK over 8-row k-steps of 64-row tiles), or plain F32 fmaf
// sums in order (the SIMT kernels) with it off; against FP64. Out, logsumexp and delta come in
// as F32 (the forward's and delta_kernel's roundings), as on the GPU.
GradErrors emulate_backward(const Problem& pr, bool tensor_cores, Rounding rounding, bool fast, unsigned seed) {
  const int D = pr.d, sq = pr.sq, sk = pr.sk;
  std::mt19937 rng(seed);
  std::normal_distribution<float> n01(0.f, 1.f);
  std::uniform_real_distribution<float> u11(-1.f, 1.f);
  auto fill = [&](std::size_t size) {
    std::vector<float> m(size);
    for (float& x : m) x = pr.normal ? n01(rng) : u11(rng);
    return m;
  };
  const std::size_t nq = static_cast<std::size_t>(sq) * D, nk = static_cast<std::size_t>(sk) * D;
  const std::vector<float> q = fill(nq), k = fill(nk), v = fill(nk), go = fill(nq);
  const float scale = 1.f / std::sqrt(static_cast<float>(D));
  auto at = [D](const std::vector<float>& m, int r, int c) { return m[static_cast<std::size_t>(r) * D + c]; };
  auto visible = [&](int i, int j) { return i < sq && j < sk && (!pr.causal || j <= i); };

  // FP64 reference, and the F32 inputs the backward reads.
  std::vector<double> p(static_cast<std::size_t>(sq) * sk, 0.0), dsr(p.size(), 0.0);
  std::vector<float> lse(static_cast<std::size_t>(sq)), delta(static_cast<std::size_t>(sq));
  std::vector<double> dq_ref(nq, 0.0), dk_ref(nk, 0.0), dv_ref(nk, 0.0);
  for (int i = 0; i < sq; ++i) {
    double mx = -INFINITY;
    std::vector<double> srow(static_cast<std::size_t>(sk), -INFINITY);
    for (int j = 0; j < sk; ++j) {
      if (!visible(i, j)) continue;
      double dot = 0;
      for (int c = 0; c < D; ++c) dot += static_cast<double>(at(q, i, c)) * at(k, j, c);
      srow[static_cast<std::size_t>(j)] = dot * scale;
      mx = std::max(mx, dot * scale);
    }
    double l = 0;
    for (int j = 0; j < sk; ++j) l += visible(i, j) ? std::exp(srow[static_cast<std::size_t>(j)] - mx) : 0.0;
    const double lse_ref = mx + std::log(l);
    lse[static_cast<std::size_t>(i)] = static_cast<float>(lse_ref);
    std::vector<double> o(static_cast<std::size_t>(D), 0.0);
    for (int j = 0; j < sk; ++j) {
      if (!visible(i, j)) continue;
      const double pij = std::exp(srow[static_cast<std::size_t>(j)] - lse_ref);
      p[static_cast<std::size_t>(i) * sk + j] = pij;
      for (int c = 0; c < D; ++c) o[static_cast<std::size_t>(c)] += pij * at(v, j, c);
    }
    double dl = 0;
    float df = 0;
    for (int c = 0; c < D; ++c) {
      dl += o[static_cast<std::size_t>(c)] * at(go, i, c);
      df += static_cast<float>(o[static_cast<std::size_t>(c)]) * at(go, i, c);  // delta_kernel: F32 out
    }
    delta[static_cast<std::size_t>(i)] = df;
    for (int j = 0; j < sk; ++j) {
      if (!visible(i, j)) continue;
      double dp = 0;
      for (int c = 0; c < D; ++c) dp += static_cast<double>(at(go, i, c)) * at(v, j, c);
      const double pij = p[static_cast<std::size_t>(i) * sk + j], ds = pij * (dp - dl);
      dsr[static_cast<std::size_t>(i) * sk + j] = ds;
      for (int c = 0; c < D; ++c) {
        dq_ref[static_cast<std::size_t>(i) * D + c] += ds * at(k, j, c) * scale;
        dk_ref[static_cast<std::size_t>(j) * D + c] += ds * at(q, i, c) * scale;
        dv_ref[static_cast<std::size_t>(j) * D + c] += pij * at(go, i, c);
      }
    }
  }

  // A score over the head dims: 16-dim chunks of two MMA k-steps (qk_dim), the cross terms
  // summed apart (mma3_apart), or fmaf in order.
  std::vector<float> a8(8), b8(8);
  auto dot = [&](const std::vector<float>& a, int ra, const std::vector<float>& b, int rb) {
    float acc = 0, cross = 0;
    if (!tensor_cores) {
      for (int c = 0; c < D; ++c) acc = std::fma(at(a, ra, c), at(b, rb, c), acc);
      return acc;
    }
    for (int c = 0; c < D; c += 16)
      for (int step = 0; step < 2; ++step) {
        for (int x = 0; x < 8; ++x) a8[static_cast<std::size_t>(x)] = at(a, ra, c + qk_dim(step, x)),
                                    b8[static_cast<std::size_t>(x)] = at(b, rb, c + qk_dim(step, x));
        acc = mma3_apart_add(acc, cross, a8.data(), b8.data(), rounding, fast);
      }
    return acc + cross;
  };
  // The F32 P and dS of (i, j), as the kernels form them; 0 where hidden.
  std::vector<float> pf(p.size(), 0.f), dsf(p.size(), 0.f), pft(p.size(), 0.f), dsft(p.size(), 0.f);
  for (int i = 0; i < sq; ++i)
    for (int j = 0; j < sk; ++j) {
      if (!visible(i, j)) continue;
      const std::size_t e = static_cast<std::size_t>(i) * sk + j;
      const float l = lse[static_cast<std::size_t>(i)], dl = delta[static_cast<std::size_t>(i)];
      // dq side: Q and dO rows as A; dk/dv side: K and V rows as A (another order of the cross terms).
      pf[e] = std::exp(dot(q, i, k, j) * scale - l);
      dsf[e] = pf[e] * (dot(go, i, v, j) - dl);
      pft[e] = std::exp(dot(k, j, q, i) * scale - l);
      dsft[e] = pft[e] * (dot(v, j, go, i) - dl);
    }

  GradErrors errors;
  auto record = [&](int which, float got, double ref) {
    errors.ratio[which] = std::max(errors.ratio[which], std::abs(got - ref) / (1e-5 + 1e-4 * std::abs(ref)));
  };
  // dq: 64-key tiles, two 32-key halves summed apart, 8-key k-steps in bwd_stream_k order.
  for (int i = 0; i < sq; ++i)
    for (int c = 0; c < D; ++c) {
      float half[2] = {0, 0};
      for (int j0 = 0; j0 < sk; j0 += 64)
        for (int kh = 0; kh < 2; ++kh)
          for (int jj = 0; jj < 4; ++jj) {
            // The SIMT kernel: one sum over the keys in ascending order.
            for (int x = 0; x < 8; ++x) {
              const int j = j0 + 32 * kh + (tensor_cores ? bwd_stream_k(jj, x) : 8 * jj + x);
              a8[static_cast<std::size_t>(x)] = j < sk ? dsf[static_cast<std::size_t>(i) * sk + j] : 0.f;
              b8[static_cast<std::size_t>(x)] = j < sk ? at(k, j, c) : 0.f;
            }
            if (tensor_cores) {
              half[kh] = mma3_add(half[kh], a8.data(), b8.data(), rounding, fast);
            } else {
              for (std::size_t x = 0; x < 8; ++x) half[0] = std::fma(a8[x], b8[x], half[0]);
            }
          }
      record(0, (half[0] + half[1]) * scale, dq_ref[static_cast<std::size_t>(i) * D + c]);
    }
  // dk and dv: 64-row tiles from the key block's first row under causal, 8-row k-steps.
  for (int j = 0; j < sk; ++j) {
    const int i_begin = pr.causal ? (j / 64) * 64 : 0;
    for (int c = 0; c < D; ++c) {
      float dkc = 0, dvc = 0;
      std::vector<float> a8d(8), b8d(8);
      for (int i0 = i_begin; i0 < sq; i0 += 64)
        for (int jj = 0; jj < 8; ++jj) {
          for (int x = 0; x < 8; ++x) {
            const int i = i0 + (tensor_cores ? bwd_stream_k(jj, x) : 8 * jj + x);
            const std::size_t e = static_cast<std::size_t>(i) * sk + j;
            a8[static_cast<std::size_t>(x)] = i < sq ? pft[e] : 0.f;
            b8[static_cast<std::size_t>(x)] = i < sq ? at(go, i, c) : 0.f;
            a8d[static_cast<std::size_t>(x)] = i < sq ? dsft[e] : 0.f;
            b8d[static_cast<std::size_t>(x)] = i < sq ? at(q, i, c) : 0.f;
          }
          if (tensor_cores) {
            dvc = mma3_add(dvc, a8.data(), b8.data(), rounding, fast);
            dkc = mma3_add(dkc, a8d.data(), b8d.data(), rounding, fast);
          } else {
            for (int x = 0; x < 8; ++x) {
              dvc = std::fma(a8[static_cast<std::size_t>(x)], b8[static_cast<std::size_t>(x)], dvc);
              dkc = std::fma(a8d[static_cast<std::size_t>(x)], b8d[static_cast<std::size_t>(x)], dkc);
            }
          }
        }
      record(1, dkc * scale, dk_ref[static_cast<std::size_t>(j) * D + c]);
      record(2, dvc, dv_ref[static_cast<std::size_t>(j) * D + c]);
    }
  }
  return errors;
}

void report_backward(const char* name, const Problem& pr) {
  const GradErrors simt = emulate_backward(pr, false, Rounding::Nearest, false, 11);
  std::printf("%s (Sq %d, Sk %d, D %d%s, %s): share of the F32 tolerance used, dq / dk / dv\n", name, pr.sq, pr.sk,
              pr.d, pr.causal ? ", causal" : "", pr.normal ? "randn" : "uniform [-1, 1]");
  std::printf("  F32 SIMT                 %.4f / %.4f / %.4f\n", simt.ratio[0], simt.ratio[1], simt.ratio[2]);
  for (const bool fast : {false, true})
    for (const Rounding r : {Rounding::Nearest, Rounding::TowardZero}) {
      const GradErrors e = emulate_backward(pr, true, r, fast, 11);
      std::printf("  3xTF32 %s, sums %s %.4f / %.4f / %.4f\n", fast ? "fast   " : "rounded",
                  r == Rounding::Nearest ? "nearest  " : "truncated", e.ratio[0], e.ratio[1], e.ratio[2]);
      // As the forward: at most half the CUDA-vs-CPU tolerance, the rest left to the CPU's rounding.
      for (int x = 0; x < 3; ++x) EXPECT_LT(e.ratio[x], 0.5) << name << ", gradient " << x;
    }
}

// The backward at the conformance cases' inputs (uniform [-1, 1]) and at randn inputs, D 128
// and 64, causal and not, ragged tiles.
TEST(Tf32x3Arithmetic, BackwardErrorFitsTheF32AttentionTolerance) {
  report_backward("conformance-like", {130, 130, 128, true, false});
  report_backward("randn", {100, 150, 128, false, true});
  report_backward("randn d64", {129, 77, 64, true, true});
}

}  // namespace
}  // namespace ferrite::cuda::attention::tf32x3
