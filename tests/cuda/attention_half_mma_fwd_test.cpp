// The F16/BF16 tensor-core attention forward (src/cuda/attention/attention_half_mma_fwd.cu),
// called directly (half_mma_forward), against the general SIMT forward (attention::forward for
// F16/BF16: query_side_kernel, or split_keys_kernel for few rows) on the same F16/BF16 inputs and
// the same mask Buffer: no mask, causal, Bool and additive masks with every kind of broadcast
// ([B, 1, 1, Sk] key padding, [1, 1, Sq, Sk], [1, Hq, 1, Sk], [B, Hq, Sq, Sk], [1, 1, Sq, 1]),
// both mask stagings (16-byte cp.async where Sk and the strides allow, plain loads otherwise),
// fully masked rows, GQA, ragged tiles, Sq != Sk, Sk = 0, NaN, and a repeat bit for bit.
//
// The tolerance, per output element (SIMT e, rounded once from its F32 value e*; this kernel a):
// both multiply the same F16/BF16 values exactly and sum in F32; this kernel rounds each weight
// P_j = exp(s_j - m) to the dtype before P V (relative |delta_j| <= u, round to nearest: u =
// 2^-8 BF16, 2^-11 F16; its row sum l is of the unrounded weights, as FlashAttention's), then
// rounds out once. So with T = sum_j (P_j / l) |v_j| (host, double, the exact softmax):
//   |a - e| <= 2.02 u |e| + 1.01 u T + 1e-5 T + 1e-6 (+ F16: 2^-25 sum_j |v_j|)
// (2.02 u |e|: both final roundings; 1e-5 T: F32 sums in other orders and ex2.approx against
// expf; F16's last term: weights below 2^-14 are subnormal, absolute error 2^-25 each). A lost
// or doubled key, a wrong mask element or fragment moves an element by a whole term P_j v_j / l.
// logsumexp (F32 in both, only the sums' order and ex2 differ): |a - e| <= 1e-4 + 1e-5 |e|, the
// same -inf for fully masked rows and NaN for NaN rows. Fully masked rows: out exactly 0 in both.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ferrite/cuda.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include <cuda_runtime_api.h>

#include "attention_test_problems.hpp"
#include "cuda/attention/attention_kernels.cuh"

namespace ferrite {
namespace {

namespace attention = cuda::attention;
using attention_test::bits;
using attention_test::half_subnormal_error;
using attention_test::half_unit_roundoff;
using attention_test::host;
using attention_test::run_forward;
using attention_test::stream0;

// An explicit mask's shape: which of [B, Hq, Sq, Sk] it keeps (false: extent 1, broadcast).
struct MaskShape {
  bool b, h, i, j;
};

struct Case {
  std::int64_t b, hq, hkv, sq, sk, d;
  bool causal;
  AttentionMaskKind mask;
  MaskShape keep;
  double dropout = 0;  // dropout_p of the weights, at a fixed draw (attention_test::with_dropout)
  std::string what() const {
    std::string s = "B " + std::to_string(b) + " Hq " + std::to_string(hq) + " Hkv " + std::to_string(hkv) + " Sq " +
                    std::to_string(sq) + " Sk " + std::to_string(sk) + " D " + std::to_string(d) +
                    (causal ? " causal" : "") + (dropout > 0 ? " dropout " + std::to_string(dropout) : "");
    if (mask == AttentionMaskKind::None) return s;
    s += mask == AttentionMaskKind::Bool ? " bool mask [" : " additive mask [";
    s += std::string(keep.b ? "B," : "1,") + (keep.h ? "H," : "1,") + (keep.i ? "Sq," : "1,") + (keep.j ? "Sk]" : "1]");
    return s;
  }
};

// The problem on the device: q, k, v in the dtype, the mask (Bool or the dtype) with its host
// values (F32: 0 / -inf for Bool), its extents and strides.
struct Problem {
  Case c;
  DType half;
  Tensor q, k, v, mask;
  std::vector<float> qh, kh, vh, mh;
  std::array<std::int64_t, 4> mext{1, 1, 1, 1}, mstr{0, 0, 0, 0};
};

// Case c as the shared tests' problem shape (attention_test_problems.hpp).
attention_test::Problem shape_of(const Case& c) { return {c.b, c.hq, c.hkv, c.sq, c.sk, c.d, c.causal}; }

AttentionDesc desc_of(const Problem& p) {
  AttentionDesc d = attention_test::desc_of(shape_of(p.c), p.half, p.c.mask, p.mstr);
  attention_test::with_dropout(d, p.c.dropout);
  return d;
}

// Random inputs rounded to `half`; the mask: Bool true with probability 0.7, additive -inf with
// 0.3, else a normal value (rounded to `half`); `dead` rows of the mask (or, with Sq broadcast,
// batch 0's whole mask) hide every key. `poison`: NaN at q (0, 0, 3, 1), k (0, Hkv - 1, Sk - 1,
// 2) and, additive, at the mask's last element.
Problem make(const Case& c, DType half, unsigned seed, bool dead, bool poison) {
  const Device gpu = Device::cuda(0);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  Problem p{c, half, {}, {}, {}, {}, {}, {}, {}, {}};
  auto values = [&](std::vector<float>& out, Shape s) {
    std::int64_t n = 1;
    for (auto e : s) n *= e;
    out.resize(static_cast<std::size_t>(n));
    for (float& x : out) x = 1.5f * normal(rng);
    Tensor t = from_vector(out, s).to(half);
    out = host(t);  // the rounded values
    return t.to(gpu);
  };
  p.q = values(p.qh, {c.b, c.hq, c.sq, c.d});
  p.k = values(p.kh, {c.b, c.hkv, c.sk, c.d});
  p.v = values(p.vh, {c.b, c.hkv, c.sk, c.d});
  if (poison && c.sq > 3 && c.sk > 0) {
    p.qh[static_cast<std::size_t>(3 * c.d + 1)] = NAN;
    p.kh[static_cast<std::size_t>(((c.hkv - 1) * c.sk + c.sk - 1) * c.d + 2)] = NAN;
    p.q = from_vector(p.qh, {c.b, c.hq, c.sq, c.d}).to(half).to(gpu);
    p.k = from_vector(p.kh, {c.b, c.hkv, c.sk, c.d}).to(half).to(gpu);
  }
  if (c.mask == AttentionMaskKind::None) return p;
  p.mext = {c.keep.b ? c.b : 1, c.keep.h ? c.hq : 1, c.keep.i ? c.sq : 1, c.keep.j ? c.sk : 1};
  // dead: rows 1 and 5 (with Sq kept), else batch 0 (with B kept), else nothing.
  const auto mask = attention_test::random_mask(
      c.mask, half, p.mext, poison, rng, normal, unit, [&](std::int64_t bb, std::int64_t i, std::int64_t) {
        return dead && (c.keep.i ? (i == 1 || i == 5) : (c.keep.b && bb == 0));
      });
  p.mask = mask.mask;
  p.mh = mask.bias;
  p.mstr = mask.strides;
  return p;
}

using Result = attention_test::ForwardOutputs;

// kMma: half_mma_forward; else attention::forward (the SIMT kernels for F16/BF16). Outputs start
// as NaN so an unwritten element shows (attention_test::run_forward).
Result run(const Problem& p, bool mma) {
  const Case& c = p.c;
  const AttentionDesc d = desc_of(p);
  const void* mask = c.mask == AttentionMaskKind::None ? nullptr : p.mask.data_ptr();
  return run_forward(shape_of(c), p.half, p.q, p.k, p.v, mask, [&](const attention::Pointers& ptr) {
    if (mma) {
      EXPECT_TRUE(attention::half_mma_forward_fits(d, ptr)) << c.what();
      attention::half_mma_forward(d, ptr, stream0());
    } else {
      attention::forward(d, ptr, stream0());
    }
  });
}

// Per output element: T = sum_j (P_j / l) |v_jc| and A = sum_j |v_jc| over the visible keys (host,
// double, the mask's values as the kernels read them); -1 marks a fully masked row. With dropout
// T and A are times c = 1 / (1 - p): a weight's factor is 0 or c, and P_j c is what is rounded.
void term_sums(const Problem& p, std::vector<double>& t, std::vector<double>& a) {
  const Case& c = p.c;
  const std::int64_t D = c.d, group = c.hq / c.hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  t.assign(static_cast<std::size_t>(c.b * c.hq * c.sq * D), 0.0);
  a = t;
  std::vector<double> s(static_cast<std::size_t>(c.sk));
  for (std::int64_t b = 0; b < c.b; ++b)
    for (std::int64_t h = 0; h < c.hq; ++h)
      for (std::int64_t i = 0; i < c.sq; ++i) {
        const std::size_t qo = static_cast<std::size_t>(((b * c.hq + h) * c.sq + i) * D);
        const std::size_t ko = static_cast<std::size_t>((b * c.hkv + h / group) * c.sk * D);
        double mx = -INFINITY;
        for (std::int64_t j = 0; j < c.sk; ++j) {
          double bias = 0;
          if (c.mask != AttentionMaskKind::None)
            bias = p.mh[static_cast<std::size_t>(b * p.mstr[0] + h * p.mstr[1] + i * p.mstr[2] + j * p.mstr[3])];
          double x = -INFINITY;
          if (!(c.causal && j > i) && bias != -INFINITY) {
            double dot = 0;
            for (std::int64_t e = 0; e < D; ++e) dot += static_cast<double>(p.qh[qo + e]) * p.kh[ko + j * D + e];
            x = scale * dot + bias;
          }
          s[static_cast<std::size_t>(j)] = x;
          if (!std::isnan(x)) mx = std::max(mx, x);
        }
        if (mx == -INFINITY) {  // fully masked (or only NaN: then NaN is expected anyway)
          for (std::int64_t e = 0; e < D; ++e) t[qo + e] = -1;
          continue;
        }
        double l = 0;
        for (double& x : s) l += (x = std::exp(x - mx));
        const double drop = frontend::dropout_scale(c.dropout);  // 1 / (1 - p): 1 without dropout, 0 at p = 1
        for (std::int64_t j = 0; j < c.sk; ++j)
          for (std::int64_t e = 0; e < D; ++e) {
            const double v = drop * std::abs(static_cast<double>(p.vh[ko + j * D + e]));
            t[qo + e] += s[static_cast<std::size_t>(j)] / l * v;
            a[qo + e] += v;
          }
      }
}

void expect_agrees(const Problem& p) {
  const std::string what = std::string(dtype_name(p.half)) + ", " + p.c.what();
  const Result ref = run(p, false), got = run(p, true);
  std::vector<double> t, a;
  term_sums(p, t, a);
  const std::vector<float> o = host(got.out), e = host(ref.out), lo = host(got.lse), le = host(ref.lse);
  const double u = half_unit_roundoff(p.half), sub = half_subnormal_error(p.half);
  std::size_t failures = 0;
  for (std::size_t n = 0; n < o.size(); ++n) {
    bool ok;
    if (std::isnan(e[n])) ok = std::isnan(o[n]);
    else if (t[n] < 0) ok = o[n] == 0.f && e[n] == 0.f;  // fully masked: exactly 0 in both
    else {
      const double bound = 2.02 * u * std::abs(e[n]) + (1.01 * u + 1e-5) * t[n] + 1e-6 + sub * a[n];
      ok = std::abs(static_cast<double>(o[n]) - e[n]) <= bound;
    }
    if (!ok && failures++ < 5)
      ADD_FAILURE() << what << ": out element " << n << " got " << o[n] << ", SIMT " << e[n] << ", term sum " << t[n];
  }
  EXPECT_EQ(failures, 0u) << what;
  failures = 0;
  for (std::size_t n = 0; n < lo.size(); ++n) {
    const bool dead = t[n * static_cast<std::size_t>(p.c.d)] < 0 && !std::isnan(le[n]);
    bool ok;
    if (std::isnan(le[n])) ok = std::isnan(lo[n]);
    else if (dead || le[n] == -INFINITY) ok = lo[n] == -INFINITY && le[n] == -INFINITY;
    else ok = std::abs(static_cast<double>(lo[n]) - le[n]) <= 1e-4 + 1e-5 * std::abs(le[n]);
    if (!ok && failures++ < 5)
      ADD_FAILURE() << what << ": logsumexp row " << n << " got " << lo[n] << ", SIMT " << le[n];
  }
  EXPECT_EQ(failures, 0u) << what;
  // Fixed MMA and summation orders: a second run gives the same bits.
  const Result again = run(p, true);
  EXPECT_EQ(bits(again.out), bits(got.out)) << "out repeats, " << what;
  EXPECT_EQ(bits(again.lse), bits(got.lse)) << "logsumexp repeats, " << what;
}

class HalfMmaForward : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

constexpr MaskShape kKeyPad{true, false, false, true}, kFull{true, true, true, true}, kRowsKeys{false, false, true, true},
    kHeadsKeys{false, true, false, true}, kRowsOnly{false, false, true, false};
constexpr auto kNone = AttentionMaskKind::None, kBool = AttentionMaskKind::Bool, kAdd = AttentionMaskKind::Additive;

// The routing predicate needs no device: F16/BF16, D = Dv in {64, 128}, any mask, dropout or not, dense, q, k, v
// and out on the 16-byte grid, row tiles within grid y.
TEST(HalfMmaForwardFits, TakesHalfTypesMaskedOrNot) {
  alignas(16) static std::uint16_t storage[16];
  attention::Pointers p;
  p.q = p.k = p.v = p.mask = storage;
  p.result = storage;
  Problem pr{Case{2, 4, 2, 77, 130, 64, false, kBool, kKeyPad}, DType::BF16, {}, {}, {}, {}, {}, {}, {}, {}};
  for (const DType half : {DType::BF16, DType::F16})
    for (const auto kind : {kNone, kBool, kAdd})
      for (const std::int64_t d : {64, 128}) {
        pr.half = half;
        pr.c.mask = kind;
        pr.c.d = d;
        pr.c.sq = 77;
        EXPECT_TRUE(attention::half_mma_forward_fits(desc_of(pr), p)) << pr.c.what();
        pr.c.sq = 65535 * 128;
        EXPECT_TRUE(attention::half_mma_forward_fits(desc_of(pr), p)) << "65535 row tiles, " << pr.c.what();
        pr.c.sq = 65535 * 128 + 1;
        EXPECT_FALSE(attention::half_mma_forward_fits(desc_of(pr), p)) << "65536 row tiles, " << pr.c.what();
      }
  pr.c.sq = 77;
  pr.c.dropout = 0.3;
  EXPECT_TRUE(attention::half_mma_forward_fits(desc_of(pr), p)) << "dropout";
  pr.c.dropout = 0;
  pr.c.d = 80;
  EXPECT_FALSE(attention::half_mma_forward_fits(desc_of(pr), p)) << "D = 80";
  pr.c.d = 64;
  pr.half = DType::F32;
  EXPECT_FALSE(attention::half_mma_forward_fits(desc_of(pr), p)) << "F32";
  pr.half = DType::BF16;
  attention::Pointers off = p;
  off.result = storage + 1;  // off the 16-byte grid
  EXPECT_FALSE(attention::half_mma_forward_fits(desc_of(pr), off));
}

TEST_F(HalfMmaForward, AgreesWithTheSimtForward) {
  const std::vector<Case> cases{
      // No mask: causal, GQA, ragged, Sq != Sk, several row and key tiles.
      {2, 2, 2, 77, 77, 64, false, kNone, {}},
      {1, 3, 3, 300, 300, 128, true, kNone, {}},
      {2, 4, 2, 130, 77, 64, true, kNone, {}},
      {1, 4, 1, 77, 200, 128, false, kNone, {}},
      {1, 2, 2, 40, 130, 64, true, kNone, {}},
      {1, 2, 1, 1000, 1000, 128, true, kNone, {}},
      // Sk = 0: out 0, logsumexp -inf; few rows against many keys.
      {1, 2, 2, 20, 0, 128, false, kNone, {}},
      {1, 2, 2, 8, 1000, 128, false, kBool, kKeyPad},
      // Bool: key padding (cp.async when Sk % 16 = 0, else plain loads), full, rows x keys, heads x keys, rows only.
      {2, 4, 2, 200, 256, 128, false, kBool, kKeyPad},
      {2, 4, 2, 200, 200, 64, true, kBool, kKeyPad},
      {2, 4, 2, 77, 130, 64, false, kBool, kKeyPad},
      {2, 2, 1, 129, 256, 128, false, kBool, kFull},
      {1, 2, 2, 130, 77, 128, true, kBool, kFull},
      {1, 2, 2, 300, 96, 64, false, kBool, kRowsKeys},
      {2, 2, 2, 40, 130, 128, true, kBool, kHeadsKeys},
      {1, 2, 2, 70, 90, 64, false, kBool, kRowsOnly},
      // Additive: the same shapes (cp.async when Sk % 8 = 0).
      {2, 4, 2, 200, 256, 128, false, kAdd, kKeyPad},
      {1, 2, 2, 64, 333, 64, false, kAdd, kKeyPad},
      {2, 2, 2, 128, 128, 128, false, kAdd, kFull},
      {2, 4, 2, 300, 96, 128, true, kAdd, kRowsKeys},
      {1, 2, 2, 130, 77, 64, false, kAdd, kFull},
      {2, 2, 2, 40, 130, 64, false, kAdd, kHeadsKeys},
      {1, 2, 2, 70, 90, 128, true, kAdd, kRowsOnly},
  };
  unsigned seed = 1;
  for (const Case& c : cases)
    for (const DType half : {DType::BF16, DType::F16})
      for (const bool dead : {false, true}) {
        if (dead && c.mask == kNone) continue;
        expect_agrees(make(c, half, seed++, dead, false));
      }
}

// Dropout (the kDropout instantiations) against the SIMT forward at the same draw: Sk a multiple
// of 4 (the lanes share Philox groups, attention_dropout_lanes.hpp) and not (one group a score),
// causal, GQA, several row and key tiles, masks, p = 1 (out 0, logsumexp as without dropout). A
// weight the two forwards dropped differently would move out by a whole term c P_j v_j / l.
TEST_F(HalfMmaForward, DropoutAgreesWithTheSimtForward) {
  const std::vector<Case> cases{
      {2, 2, 2, 77, 200, 64, false, kNone, {}, 0.2},
      {1, 3, 3, 300, 300, 128, true, kNone, {}, 0.5},
      {2, 4, 2, 130, 77, 64, true, kNone, {}, 0.1},
      {1, 4, 1, 77, 128, 128, false, kNone, {}, 0.3},
      {1, 2, 2, 8, 1000, 128, false, kNone, {}, 0.2},
      {2, 4, 2, 200, 256, 128, false, kBool, kKeyPad, 0.25},
      {2, 2, 2, 40, 130, 64, true, kAdd, kHeadsKeys, 0.3},
      {1, 2, 2, 64, 64, 64, false, kNone, {}, 1.0},
  };
  unsigned seed = 200;
  for (const Case& c : cases)
    for (const DType half : {DType::BF16, DType::F16}) expect_agrees(make(c, half, seed++, false, false));
}

// A NaN in q (row 3 of head 0), k (the last key of the last key/value head) and, additive, the
// mask's last element: NaN rows exactly where the SIMT forward's are (a key hidden by the mask or
// by causal keeps its NaN out), the rest within the bound.
TEST_F(HalfMmaForward, NaNAsTheSimtForward) {
  const std::vector<Case> cases{
      {1, 4, 2, 130, 70, 64, false, kNone, {}},
      {1, 4, 2, 130, 70, 128, true, kNone, {}},
      {2, 4, 2, 130, 70, 64, false, kBool, kFull},
      {2, 4, 2, 130, 64, 128, true, kBool, kKeyPad},
      {2, 4, 2, 130, 70, 128, false, kAdd, kFull},
      {2, 4, 2, 130, 64, 64, false, kAdd, kRowsKeys},
  };
  unsigned seed = 100;
  for (const Case& c : cases)
    for (const DType half : {DType::BF16, DType::F16}) expect_agrees(make(c, half, seed++, false, true));
}

// Through the front end (nn::scaled_dot_product_attention: cuda_attention_ops.cpp routes masked
// F16/BF16 forwards with D = 128 to this kernel unless FERRITE_ATTENTION_HALF_FWD=simt; since
// session 14 only with FERRITE_ATTENTION_CUDNN_MASKS=off, else to cuDNN first) against
// the CPU backend at the conformance suite's CUDA-vs-CPU tolerance: a Bool key-padding mask
// (batch 1 fully masked: out 0, logsumexp -inf) and an additive [1, 1, Sq, Sk] one, causal too.
TEST_F(HalfMmaForward, RoutedThroughTheFrontEndAgreesWithTheCpuBackend) {
  const Device gpu = Device::cuda(0), cpu = Device::cpu();
  for (const DType half : {DType::BF16, DType::F16})
    for (const bool causal : {false, true})
      for (const auto kind : {kBool, kAdd}) {
        const Case c{2, 4, 2, 200, 256, 128, causal, kind, kind == kBool ? kKeyPad : kRowsKeys};
        const Problem p = make(c, half, 7u, kind == kBool, false);  // Bool: batch 0 fully masked
        const nn::AttentionOptions o{.causal = causal, .mask = p.mask};
        const nn::AttentionOptions oc{.causal = causal, .mask = p.mask.to(cpu)};
        const auto g = nn::scaled_dot_product_attention(p.q, p.k, p.v, o);
        const auto r = nn::scaled_dot_product_attention(p.q.to(cpu), p.k.to(cpu), p.v.to(cpu), oc);
        const double rtol = half == DType::BF16 ? 3e-2 : 5e-3, atol = half == DType::BF16 ? 1e-2 : 2e-3;
        const std::vector<float> a = host(g.out), e = host(r.out), la = host(g.logsumexp), le = host(r.logsumexp);
        std::size_t bad = 0;
        for (std::size_t n = 0; n < a.size(); ++n)
          if (!(std::abs(static_cast<double>(a[n]) - e[n]) <= atol + rtol * std::abs(e[n]))) ++bad;
        for (std::size_t n = 0; n < la.size(); ++n)
          if (!(la[n] == le[n] || std::abs(static_cast<double>(la[n]) - le[n]) <= 1e-3 + 1e-3 * std::abs(le[n]))) ++bad;
        EXPECT_EQ(bad, 0u) << dtype_name(half) << ", " << c.what();
      }
}

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA
