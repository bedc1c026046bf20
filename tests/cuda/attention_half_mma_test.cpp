// The F16/BF16 tensor-core attention backward (src/cuda/attention/attention_half_mma_bwd.cu),
// called directly (backward_half_mma: delta_kernel, then its dq and dk/dv kernels), whatever
// FERRITE_ATTENTION_HALF_BWD says, against the SIMT tiled F32 backward
// (attention_f32_tiled_bwd.cu) on the same values: q, k, v and grad_out drawn in F32 and
// rounded to the dtype, the forward's out rounded to the dtype too (the half backward reads it
// as F16/BF16 for delta; the SIMT reference reads the same values widened). Shapes reach every
// edge of the tiles (ragged rows and keys, several row and key blocks, causal with Sq > Sk and
// Sq < Sk, GQA, Sk = 0, Sq = 0), NaN inputs, and a second run must give the same bits.
// Explicit masks (Bool and additive, the kernels' kMask instantiations) are held against the
// general SIMT backward (attention_kernels.cu, the only F32 route that takes masks) on the same
// values, with the SIMT forward's out and logsumexp: broadcast shapes [Sq, Sk], [B, 1, 1, Sk]
// and [B, Hq, Sq, Sk], fully masked rows, -inf and large finite additive entries, causal with
// a mask, GQA, ragged tiles; the bound below holds unchanged (the mask only adds to scores).
//
// The tolerance, per gradient element e (the SIMT backward's, F32) and a (the half kernels'):
// both multiply the same F16/BF16 values exactly and sum in F32; the half kernels then round P
// and dS to the dtype before the second products (dV = P^T dO, dK = scale dS^T Q, dQ = scale
// dS K), each by a relative delta with |delta| <= u (round to nearest: u = 2^-8 for BF16's 8
// significant bits, 2^-11 for F16's 11), and round the gradient once more to the dtype (|.| <= u
// |a|). So a - e is at most u sum_t |t| over the element's product terms t, plus u |e| (and
// the F32 orders' 2e-4 |e| + 1e-4, the tiled kernels' gradient tolerance):
//   |a - e| <= 1.01 u (|e| + sum_t |t|) + 2e-4 |e| + 1e-4 (+ F16: 2^-25 sum_t |b_t|)
// (1.01: the host's term sums use the exact P and dS; F16's last term: P or dS below 2^-14 are
// F16 subnormals, absolute error <= 2^-25 times the term's other factor b_t). A fixed multiple
// of |e| would not do: e cancels where sum |t| does not (see attention_f32_tf32x3_test.cpp's
// 1xTF32 bound, the same argument with u = 2^-11). A fault (a lost MMA, a wrong fragment or
// address, P or dS truncated) moves an element by whole terms and breaks the bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
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
using attention_test::backward_pointers;
using attention_test::desc_of;
using attention_test::expect_same_bits;
using attention_test::forward_pointers;
using attention_test::Grads;
using attention_test::half_subnormal_error;
using attention_test::half_unit_roundoff;
using attention_test::half_values;
using attention_test::host;
using attention_test::name_of;
using attention_test::nan_grads;
using attention_test::Problem;
using attention_test::rounded_to;
using attention_test::stream0;

// An explicit mask: its kind and which of the broadcast shapes it has.
enum class MaskShape { rows_keys, batch_keys, full };  // [Sq, Sk], [B, 1, 1, Sk], [B, Hq, Sq, Sk]
struct Mask {
  AttentionMaskKind kind = AttentionMaskKind::None;
  MaskShape shape = MaskShape::full;
  Tensor values;  // Bool, or F32 holding the dtype's values (additive); on the GPU
};

Shape mask_shape(const Problem& pr, MaskShape ms) {
  switch (ms) {
    case MaskShape::rows_keys: return {pr.sq, pr.sk};
    case MaskShape::batch_keys: return {pr.b, 1, 1, pr.sk};
    default: return {pr.b, pr.hq, pr.sq, pr.sk};
  }
}

// The front end's broadcast strides of mask shape `ms` (attention_test_problems.hpp).
std::array<std::int64_t, 4> mask_strides(const Problem& pr, MaskShape ms) {
  return attention_test::mask_strides(mask_shape(pr, ms));
}

// F32 tensors holding `half` values: q, k, v, grad_out, and the SIMT forward's out (rounded to
// `half`) and logsumexp.
struct Inputs {
  Problem pr;
  DType half;
  Tensor q, k, v, go, out, lse;
  Mask mask;
  double dropout = 0;  // dropout_p of the weights (a fixed draw: attention_test::with_dropout)
};

AttentionDesc desc_of(const Inputs& in, DType dtype) {
  AttentionDesc d = in.mask.kind == AttentionMaskKind::None
                        ? desc_of(in.pr, dtype)
                        : desc_of(in.pr, dtype, in.mask.kind, mask_strides(in.pr, in.mask.shape));
  attention_test::with_dropout(d, in.dropout);
  return d;
}

// With a mask (mask.kind not None) or dropout the forward is the general SIMT one
// (attention::forward: the tiled forward takes neither), whose out and logsumexp the backward then reads.
Inputs prepare(const Problem& pr, DType half, Tensor q, Tensor k, Tensor v, Tensor go, Mask mask = {},
               double dropout = 0) {
  const Device gpu = Device::cuda(0);
  Inputs in{pr,
            half,
            std::move(q),
            std::move(k),
            std::move(v),
            std::move(go),
            zeros({pr.b, pr.hq, pr.sq, pr.d}, DType::F32, gpu),
            zeros({pr.b, pr.hq, pr.sq}, DType::F32, gpu),
            std::move(mask),
            dropout};
  if (pr.sq == 0) return in;  // nothing to run forward: the dk/dv kernels read none of them
  const AttentionDesc d = desc_of(in, DType::F32);
  Tensor out = empty({pr.b, pr.hq, pr.sq, pr.d}, DType::F32, gpu);
  const bool masked = in.mask.kind != AttentionMaskKind::None;
  const attention::Pointers p =
      forward_pointers(in.q, in.k, in.v, masked ? in.mask.values.data_ptr() : nullptr, out, in.lse);
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  if (masked || dropout > 0) {
    attention::forward(d, p, stream0());
  } else {
    EXPECT_TRUE(attention::tiled_forward_f32_fits(d, p));
    attention::tiled_forward_f32(d, p, stream0());
  }
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  in.out = rounded_to(out, half);
  return in;
}

// The SIMT tiled backward on the F32 values (after delta_kernel, through attention::backward's
// own delta), gradients starting as NaN so an unwritten element shows. Masked or with dropout:
// the general SIMT backward (attention::backward itself: the tiled kernels take neither).
Grads reference(const Inputs& in) {
  const Problem& pr = in.pr;
  const Device gpu = Device::cuda(0);
  const AttentionDesc d = desc_of(in, DType::F32);
  const Grads g = nan_grads(in.q, in.k, in.v, DType::F32, gpu);
  const Tensor delta = zeros({pr.b, pr.hq, pr.sq}, DType::F32, gpu);
  attention::Pointers p = backward_pointers(in.q, in.k, in.v, in.out, in.go, in.lse, delta, g);
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  if (in.mask.kind != AttentionMaskKind::None || in.dropout > 0) {
    if (in.mask.kind != AttentionMaskKind::None) p.mask = in.mask.values.data_ptr();
    EXPECT_FALSE(attention::tiled_backward_f32_fits(d, p));
    attention::backward(d, p, stream0());
    EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
    return g;
  }
  attention::backward(d, p, stream0());  // delta (and a first set of gradients, overwritten below)
  EXPECT_TRUE(attention::tiled_backward_f32_fits(d, p));
  if (pr.b * pr.hq * pr.sq > 0) attention::tiled_backward_dq_f32(d, p, stream0());
  if (pr.b * pr.hkv * pr.sk > 0) attention::tiled_backward_dkdv_f32(d, p, stream0());
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  return g;
}

// The half kernels on in's values in their dtype; gradients (of that dtype) start as NaN.
Grads run_half(const Inputs& in) {
  const Problem& pr = in.pr;
  const Device gpu = Device::cuda(0);
  const AttentionDesc d = desc_of(in, in.half);
  const Tensor q = in.q.to(in.half), k = in.k.to(in.half), v = in.v.to(in.half), go = in.go.to(in.half),
               out = in.out.to(in.half);
  // The additive mask in the dtype (its values are the dtype's: exact), a Bool one as it is.
  const Tensor mask = in.mask.kind == AttentionMaskKind::Additive ? in.mask.values.to(in.half) : in.mask.values;
  const Grads g = nan_grads(in.q, in.k, in.v, in.half, gpu);
  const Tensor delta = zeros({pr.b, pr.hq, pr.sq}, DType::F32, gpu);
  attention::Pointers p = backward_pointers(q, k, v, out, go, in.lse, delta, g);
  if (in.mask.kind != AttentionMaskKind::None) p.mask = mask.data_ptr();
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  EXPECT_TRUE(attention::backward_half_mma(d, p, stream0()));
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  return g;
}

// Per gradient element: sum_t |t| (`t`) and, for F16's subnormals, sum_t |b_t| (`b`), on the
// host in double from in's values over the visible (row, key) pairs: dq_ic: terms scale dS_ij
// k_jc; dk_jc: scale dS_ij q_ic over the group's query heads and rows i; dv_jc: P_ij dO_ic. P and
// dS as the reference computes them (softmax over the visible keys, delta = dO . out with in's
// rounded out); a NaN input makes the sums it reaches NaN. With dropout (factor f in {0, c},
// c = 1 / (1 - p)) the terms use the bounds |f P dO| <= c P |dO| and |P (f dP - delta)| <=
// P (c |dP| + |delta|), whatever the weight's draw.
struct Sums {
  std::vector<double> t, b;
};
struct TermSums {
  Sums dq, dk, dv;
};

TermSums term_sums(const Inputs& in) {
  const Problem& pr = in.pr;
  const std::vector<float> q = host(in.q), k = host(in.k), v = host(in.v), go = host(in.go), out = host(in.out);
  // The mask's term of score (b, h, i, j): 0 or -inf (Bool), the value (additive); none: 0.
  const bool masked = in.mask.kind != AttentionMaskKind::None;
  const std::vector<float> mvals = masked ? host(in.mask.values) : std::vector<float>{};
  const std::array<std::int64_t, 4> mst = masked ? mask_strides(pr, in.mask.shape) : std::array<std::int64_t, 4>{};
  auto bias = [&](std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) -> double {
    if (!masked) return 0.0;
    const float m = mvals[static_cast<std::size_t>(b * mst[0] + h * mst[1] + i * mst[2] + j * mst[3])];
    if (in.mask.kind == AttentionMaskKind::Bool) return m != 0.f ? 0.0 : -INFINITY;
    return m;
  };
  const std::int64_t D = pr.d;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  auto sums = [](std::size_t n) { return Sums{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)}; };
  TermSums s{sums(q.size()), sums(k.size()), sums(v.size())};
  std::vector<double> p(static_cast<std::size_t>(pr.sk));
  // c (named `drop`: the loops' dim index is c); p = 1 drops every weight (dv = 0, and dS = 0 with out = 0).
  const double drop = frontend::dropout_scale(in.dropout);  // 1 without dropout, 0 at p = 1
  attention_test::for_each_query_row(pr, [&](const attention_test::QueryRow& r) {
    double mx = -INFINITY, l = 0, delta = 0;
    for (std::int64_t j = 0; j < r.keys; ++j) {
      const double m = bias(r.b, r.h, r.i, j);  // a hidden pair: -inf, its dot not taken (a NaN q.k stays out)
      p[static_cast<std::size_t>(j)] = m == -INFINITY ? m : scale * r.dot(q, k, j) + m;
      mx = std::max(mx, p[static_cast<std::size_t>(j)]);
    }
    if (mx == -INFINITY) return;  // fully masked row: zero gradients, no terms
    for (std::int64_t j = 0; j < r.keys; ++j)
      l += (p[static_cast<std::size_t>(j)] = std::exp(p[static_cast<std::size_t>(j)] - mx));
    for (std::int64_t c = 0; c < D; ++c) delta += static_cast<double>(go[r.q_at(c)]) * out[r.q_at(c)];
    for (std::int64_t j = 0; j < r.keys; ++j) {
      if (p[static_cast<std::size_t>(j)] == 0.0 && bias(r.b, r.h, r.i, j) == -INFINITY) continue;  // hidden: no term
      const double pj = p[static_cast<std::size_t>(j)] / l;
      const double dsj = in.dropout > 0 ? pj * (drop * std::abs(r.dot(go, v, j)) + std::abs(delta))
                                        : std::abs(pj * (r.dot(go, v, j) - delta));
      for (std::int64_t c = 0; c < D; ++c) {
        const std::size_t ei = r.q_at(c), ej = r.kv_at(j, c);
        s.dq.t[ei] += scale * dsj * std::abs(k[ej]);
        s.dq.b[ei] += scale * std::abs(k[ej]);
        s.dk.t[ej] += scale * dsj * std::abs(q[ei]);
        s.dk.b[ej] += scale * std::abs(q[ei]);
        s.dv.t[ej] += drop * pj * std::abs(go[ei]);
        s.dv.b[ej] += std::abs(go[ei]);
      }
    }
  });
  return s;
}

// got (F16/BF16) against the SIMT backward's `ref` within the bound at the top; NaN exactly
// where ref is NaN.
void expect_within_bound(const Tensor& got, const Tensor& ref, const Sums& sums, DType half, const std::string& what) {
  const std::vector<float> a = host(got), e = host(ref);
  ASSERT_EQ(a.size(), sums.t.size()) << what;
  const double u = half_unit_roundoff(half), sub = half_subnormal_error(half);
  std::size_t failures = 0;
  for (std::size_t n = 0; n < a.size(); ++n) {
    const double bound = 1.01 * u * (std::abs(e[n]) + sums.t[n]) + 2e-4 * std::abs(e[n]) + 1e-4 + sub * sums.b[n];
    const bool ok = std::isnan(e[n]) ? std::isnan(a[n]) : std::abs(static_cast<double>(a[n]) - e[n]) <= bound;
    if (!ok && failures++ < 5)
      ADD_FAILURE() << what << ": element " << n << " got " << a[n] << ", SIMT " << e[n] << ", bound " << bound
                    << " (term sum " << sums.t[n] << ")";
  }
  EXPECT_EQ(failures, 0u) << what;
}

void expect_agrees(const Inputs& in, const std::string& what0) {
  const Grads ref = reference(in);
  const Grads got = run_half(in);
  const TermSums sums = term_sums(in);
  const std::string what = std::string(dtype_name(in.half)) + ", " + what0;
  expect_within_bound(got.dq, ref.dq, sums.dq, in.half, "dq, " + what);
  expect_within_bound(got.dk, ref.dk, sums.dk, in.half, "dk, " + what);
  expect_within_bound(got.dv, ref.dv, sums.dv, in.half, "dv, " + what);
  // One owner per element and fixed MMA orders: a second run gives the same bits.
  expect_same_bits(run_half(in), got, what);
}

class HalfMmaAttention : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// The routing predicate needs no device: F16/BF16, no mask, D = Dv in {64, 128}, dense, 16-byte
// aligned operands and gradients, tile counts within grid y.
TEST(HalfMmaAttentionFits, TakesHalfTypesOfTheTiledShapes) {
  alignas(16) static std::uint16_t storage[16];
  attention::Pointers p;
  p.q = p.k = p.v = p.grad_out = p.out = storage;
  p.dq = p.dk = p.dv = storage;
  for (const DType half : {DType::BF16, DType::F16})
    for (const std::int64_t d : {64, 128})
      for (const bool causal : {false, true}) {
        Problem pr{2, 4, 2, 77, 130, d, causal};
        EXPECT_TRUE(attention::half_mma_backward_fits(desc_of(pr, half), p)) << d;
        pr.sq = 0;
        EXPECT_TRUE(attention::half_mma_backward_fits(desc_of(pr, half), p)) << "Sq = 0, " << d;
        pr.sq = 20, pr.sk = 0;
        EXPECT_TRUE(attention::half_mma_backward_fits(desc_of(pr, half), p)) << "Sk = 0, " << d;
        pr.sq = pr.sk = 65535 * 64;
        EXPECT_TRUE(attention::half_mma_backward_fits(desc_of(pr, half), p)) << "65535 tiles, " << d;
        pr.sq = 65535 * 64 + 1;
        EXPECT_FALSE(attention::half_mma_backward_fits(desc_of(pr, half), p)) << "65536 row tiles, " << d;
      }
  const Problem pr{1, 2, 2, 64, 64, 64, false};
  EXPECT_FALSE(attention::half_mma_backward_fits(desc_of(pr, DType::F32), p)) << "F32";
  EXPECT_FALSE(attention::half_mma_backward_fits(desc_of(Problem{1, 2, 2, 64, 64, 80, false}, DType::BF16), p))
      << "D = 80";
  // Explicit masks: taken with their pointer and the front end's strides, not without the pointer
  // or with a key stride past 1.
  for (const AttentionMaskKind kind : {AttentionMaskKind::Bool, AttentionMaskKind::Additive}) {
    AttentionDesc masked = desc_of(pr, DType::BF16);
    masked.mask = kind;
    masked.mask_strides = mask_strides(pr, MaskShape::full);
    EXPECT_FALSE(attention::half_mma_backward_fits(masked, p)) << "explicit mask without its pointer";
    attention::Pointers with = p;
    with.mask = storage;
    EXPECT_TRUE(attention::half_mma_backward_fits(masked, with)) << "explicit mask";
    masked.mask_strides = mask_strides(pr, MaskShape::batch_keys);
    EXPECT_TRUE(attention::half_mma_backward_fits(masked, with)) << "[B, 1, 1, Sk] mask";
    masked.mask_strides[3] = 2;
    EXPECT_FALSE(attention::half_mma_backward_fits(masked, with)) << "key stride 2";
  }
  AttentionDesc dropped = desc_of(pr, DType::BF16);
  attention_test::with_dropout(dropped, 0.3);
  EXPECT_TRUE(attention::half_mma_backward_fits(dropped, p)) << "dropout";
  attention::Pointers off = p;
  off.dk = storage + 1;  // off the 16-byte grid
  EXPECT_FALSE(attention::half_mma_backward_fits(desc_of(pr, DType::BF16), off));
}

TEST_F(HalfMmaAttention, AgreesWithTheSimtBackward) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(101, gpu);
  for (const Problem& pr : attention_test::backward_problems()) {
    for (const bool normal : {false, true})
      for (const DType half : {DType::BF16, DType::F16}) {
        auto make = [&](Shape s) { return half_values(std::move(s), normal, half, gpu, generator); };
        Tensor q = make({pr.b, pr.hq, pr.sq, pr.d}), go = make({pr.b, pr.hq, pr.sq, pr.d});
        Tensor k = make({pr.b, pr.hkv, pr.sk, pr.d}), v = make({pr.b, pr.hkv, pr.sk, pr.d});
        const Inputs in = prepare(pr, half, std::move(q), std::move(k), std::move(v), std::move(go));
        expect_agrees(in, name_of(pr) + (normal ? " randn" : " uniform"));
      }
  }
}

// A NaN in q, k, v or grad_out: NaN gradients exactly where the SIMT backward's are (a zero P or
// dS times a NaN operand is NaN in both: the NaN spreads through the same 64-row or 64-key
// tiles; a NaN P or dS stays NaN through its rounding to the dtype), the rest within the bound.
TEST_F(HalfMmaAttention, NaNAsTheSimtBackward) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(102, gpu);
  const std::int64_t sq = 130, sk = 70;
  for (const DType half : {DType::BF16, DType::F16})
    for (const std::int64_t d : {64, 128})
      for (const bool causal : {false, true})
        for (int which = 0; which < 4; ++which) {  // the NaN in q, k, v, grad_out
          const Problem pr{1, 4, 2, sq, sk, d, causal};
          auto values = [&](Shape s) {
            return host(rounded_to(random::randn(std::move(s), DType::F32, gpu, &generator), half));
          };
          std::vector<float> qh = values({1, 4, sq, d}), kh = values({1, 2, sk, d});
          std::vector<float> vh = values({1, 2, sk, d}), gh = values({1, 4, sq, d});
          if (which == 0) qh[static_cast<std::size_t>((0 * sq + 100) * d + 3)] = NAN;  // head 0, query 100
          if (which == 1) kh[static_cast<std::size_t>((1 * sk + 69) * d + 5)] = NAN;   // kv head 1, key 69
          if (which == 2) vh[static_cast<std::size_t>((0 * sk + 10) * d + 7)] = NAN;   // kv head 0, key 10
          if (which == 3) gh[static_cast<std::size_t>((3 * sq + 129) * d + 1)] = NAN;  // head 3, query 129
          const Inputs in =
              prepare(pr, half, from_vector(qh, {1, 4, sq, d}).to(gpu), from_vector(kh, {1, 2, sk, d}).to(gpu),
                      from_vector(vh, {1, 2, sk, d}).to(gpu), from_vector(gh, {1, 4, sq, d}).to(gpu));
          expect_agrees(in, "NaN in input " + std::to_string(which) + ", D " + std::to_string(d) +
                                (causal ? " causal" : ""));
        }
}

// A mask of `kind` and `shape` drawn on the host (F32 holding `half` values for additive; Bool
// otherwise), with fully masked rows: Bool true with probability 0.7, row 1 of every (b, h) false
// where the shape has rows, all of batch 1 false for [B, 1, 1, Sk] (B > 1: every row of that
// batch dead); additive uniform in [-2, 2] with -inf at probability 0.2, row 2 all -inf, and row
// 3 at -1000 + [-2, 2] (finite: a logsumexp near -1000, where the additive kernels' exp takes x -
// lse rather than a pre-scaled lse).
Mask draw_mask(const Problem& pr, AttentionMaskKind kind, MaskShape shape, DType half, std::mt19937& rng) {
  const Shape sh = mask_shape(pr, shape);
  const std::int64_t n = shape_numel(sh);
  std::uniform_real_distribution<double> u(0, 1);
  const bool has_rows = shape != MaskShape::batch_keys;
  // Element e's row (query index) and position among the keys, for the shapes' last two dims.
  auto row_of = [&](std::int64_t e) { return has_rows ? (e / pr.sk) % pr.sq : -1; };
  Mask m{kind, shape, Tensor()};
  if (kind == AttentionMaskKind::Bool) {
    std::vector<bool> v(static_cast<std::size_t>(n));
    for (std::int64_t e = 0; e < n; ++e) {
      bool on = u(rng) < 0.7;
      if (row_of(e) == 1) on = false;
      if (shape == MaskShape::batch_keys && pr.b > 1 && e / pr.sk == 1) on = false;
      v[static_cast<std::size_t>(e)] = on;
    }
    m.values = from_vector(v, sh).to(Device::cuda(0));
  } else {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::int64_t e = 0; e < n; ++e) {
      double x = u(rng) < 0.2 ? -INFINITY : 4 * u(rng) - 2;
      if (row_of(e) == 2) x = -INFINITY;
      if (row_of(e) == 3) x = -1000 + 4 * u(rng) - 2;
      v[static_cast<std::size_t>(e)] = static_cast<float>(x);
    }
    m.values = rounded_to(from_vector(v, sh).to(Device::cuda(0)), half);
  }
  return m;
}

std::string mask_name(const Mask& m) {
  const char* shape = m.shape == MaskShape::rows_keys ? "[Sq, Sk]" : m.shape == MaskShape::batch_keys ? "[B, 1, 1, Sk]"
                                                                                                      : "[B, Hq, Sq, Sk]";
  return std::string(m.kind == AttentionMaskKind::Bool ? "Bool " : "additive ") + shape;
}

// Masked problems (the kMask instantiations) against the general SIMT backward.
TEST_F(HalfMmaAttention, MaskedAgreesWithTheSimtBackward) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(103, gpu);
  std::mt19937 rng(104);
  for (const Problem& pr : {Problem{2, 4, 2, 130, 77, 64, false}, Problem{1, 3, 3, 130, 130, 128, true},
                            Problem{2, 4, 1, 77, 200, 128, false}, Problem{1, 2, 2, 300, 300, 64, true},
                            Problem{2, 6, 2, 200, 330, 128, true}, Problem{2, 2, 2, 8, 12, 64, false},
                            Problem{1, 4, 2, 517, 333, 128, false}, Problem{2, 2, 1, 40, 130, 64, true}})
    for (const AttentionMaskKind kind : {AttentionMaskKind::Bool, AttentionMaskKind::Additive})
      for (const MaskShape shape : {MaskShape::rows_keys, MaskShape::batch_keys, MaskShape::full})
        for (const DType half : {DType::BF16, DType::F16}) {
          auto make = [&](Shape s) { return half_values(std::move(s), true, half, gpu, generator); };
          Tensor q = make({pr.b, pr.hq, pr.sq, pr.d}), go = make({pr.b, pr.hq, pr.sq, pr.d});
          Tensor k = make({pr.b, pr.hkv, pr.sk, pr.d}), v = make({pr.b, pr.hkv, pr.sk, pr.d});
          Mask mask = draw_mask(pr, kind, shape, half, rng);
          const std::string name = mask_name(mask);
          const Inputs in = prepare(pr, half, std::move(q), std::move(k), std::move(v), std::move(go), std::move(mask));
          expect_agrees(in, name + ", " + name_of(pr));
        }
}

// Dropout (the kDropout instantiations) against the general SIMT backward at the same draw:
// Sk a multiple of 4 (the lanes share Philox groups, attention_dropout_lanes.hpp) and not (one
// group a score), causal, GQA, several row and key tiles, with and without a mask, p = 0.1 to
// 0.5, and p = 1 (every gradient 0). A dropped weight the two backwards disagreed on would move dv
// by a whole term c P dO.
TEST_F(HalfMmaAttention, DropoutAgreesWithTheSimtBackward) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(109, gpu);
  std::mt19937 rng(110);
  struct DropoutCase {
    Problem pr;
    AttentionMaskKind kind;
    double p;
  };
  const auto none = AttentionMaskKind::None, boolean = AttentionMaskKind::Bool, add = AttentionMaskKind::Additive;
  for (const DropoutCase& c : {DropoutCase{{2, 4, 2, 130, 200, 64, false}, none, 0.2},
                               DropoutCase{{1, 3, 3, 130, 128, 128, true}, none, 0.5},
                               DropoutCase{{2, 4, 2, 130, 77, 64, true}, none, 0.1},
                               DropoutCase{{1, 4, 1, 77, 70, 128, false}, none, 0.3},
                               DropoutCase{{2, 2, 2, 70, 96, 64, false}, boolean, 0.25},
                               DropoutCase{{1, 2, 1, 40, 130, 128, true}, add, 0.3},
                               DropoutCase{{1, 2, 2, 64, 72, 64, true}, none, 1.0}})
    for (const DType half : {DType::BF16, DType::F16}) {
      const Problem& pr = c.pr;
      auto make = [&](Shape s) { return half_values(std::move(s), true, half, gpu, generator); };
      Tensor q = make({pr.b, pr.hq, pr.sq, pr.d}), go = make({pr.b, pr.hq, pr.sq, pr.d});
      Tensor k = make({pr.b, pr.hkv, pr.sk, pr.d}), v = make({pr.b, pr.hkv, pr.sk, pr.d});
      Mask mask = c.kind == none ? Mask{} : draw_mask(pr, c.kind, MaskShape::batch_keys, half, rng);
      const std::string name = (c.kind == none ? std::string("no mask") : mask_name(mask)) + ", dropout " +
                               std::to_string(c.p) + ", " + name_of(pr);
      const Inputs in =
          prepare(pr, half, std::move(q), std::move(k), std::move(v), std::move(go), std::move(mask), c.p);
      expect_agrees(in, name);
    }
}

// Small problems through the half kernels only (no SIMT reference), each twice: finite
// gradients, the same bits both times. Sized for compute-sanitizer's racecheck, under which
// the tests above do not finish in minutes (session 13): every kernel variant (D = 64 and 128;
// no mask, causal, Bool and additive masks; GQA; ragged tiles; both dtypes; with dropout and
// without) runs a few blocks.
//   compute-sanitizer --tool racecheck build-gpu/tests/ferrite_cuda_tests \
//     --gtest_filter='HalfMmaAttention.SmallProblemsRepeat'
TEST_F(HalfMmaAttention, SmallProblemsRepeat) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(107, gpu);
  std::mt19937 rng(108);
  for (const Problem& pr : {Problem{1, 2, 1, 70, 90, 64, true}, Problem{1, 2, 2, 130, 77, 128, false}})
    for (const AttentionMaskKind kind :
         {AttentionMaskKind::None, AttentionMaskKind::Bool, AttentionMaskKind::Additive})
      for (const DType half : {DType::BF16, DType::F16})
        for (const double dropout : {0.0, 0.3}) {
        auto make = [&](Shape s) { return half_values(std::move(s), true, half, gpu, generator); };
        Tensor q = make({pr.b, pr.hq, pr.sq, pr.d}), go = make({pr.b, pr.hq, pr.sq, pr.d});
        Tensor k = make({pr.b, pr.hkv, pr.sk, pr.d}), v = make({pr.b, pr.hkv, pr.sk, pr.d});
        Mask mask = kind == AttentionMaskKind::None ? Mask{} : draw_mask(pr, kind, MaskShape::batch_keys, half, rng);
        const std::string what = std::string(dtype_name(half)) + ", " +
                                 (kind == AttentionMaskKind::None ? std::string("no mask") : mask_name(mask)) + ", " +
                                 (dropout > 0 ? "dropout, " : "") + name_of(pr);
        const Inputs in =
            prepare(pr, half, std::move(q), std::move(k), std::move(v), std::move(go), std::move(mask), dropout);
        const Grads got = run_half(in), again = run_half(in);
        const std::array<std::pair<const char*, const Tensor*>, 3> grads{
            {{"dq", &got.dq}, {"dk", &got.dk}, {"dv", &got.dv}}};
        for (const auto& [name, t] : grads) {
          const std::vector<float> h = host(*t);
          EXPECT_TRUE(std::all_of(h.begin(), h.end(), [](float x) { return std::isfinite(x); }))
              << name << " not all finite, " << what;
        }
        expect_same_bits(again, got, what);
      }
}

// A NaN additive mask entry makes its row's scores NaN (out and logsumexp NaN in the forward):
// NaN gradients exactly where the SIMT backward's are (that row's dq and the dk/dv of the keys
// it sees; a hidden pair of it contributes 0), the rest within the bound.
TEST_F(HalfMmaAttention, MaskNaNAsTheSimtBackward) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(105, gpu);
  std::mt19937 rng(106);
  for (const DType half : {DType::BF16, DType::F16})
    for (const std::int64_t d : {64, 128})
      for (const bool causal : {false, true}) {
        const Problem pr{1, 4, 2, 130, 70, d, causal};
        auto make = [&](Shape s) { return rounded_to(random::randn(std::move(s), DType::F32, gpu, &generator), half); };
        Tensor q = make({1, 4, 130, d}), go = make({1, 4, 130, d});
        Tensor k = make({1, 2, 70, d}), v = make({1, 2, 70, d});
        Mask mask = draw_mask(pr, AttentionMaskKind::Additive, MaskShape::full, half, rng);
        std::vector<float> mv = host(mask.values);
        mv[static_cast<std::size_t>((1 * 130 + 100) * 70 + 50)] = NAN;  // head 1, query 100, key 50
        mask.values = from_vector(mv, mask.values.shape()).to(gpu);
        const Inputs in = prepare(pr, half, std::move(q), std::move(k), std::move(v), std::move(go), std::move(mask));
        expect_agrees(in, "NaN additive mask entry, D " + std::to_string(d) + (causal ? " causal" : ""));
      }
}

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA
