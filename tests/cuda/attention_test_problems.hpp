// For the GPU tests of the tiled tensor-core attentions (attention_f32_tf32x3_test.cpp: 3xTF32
// and 1xTF32; attention_half_mma_test.cpp: the F16/BF16 backward; attention_half_mma_fwd_test.cpp:
// the F16/BF16 forward): the problem shape the backward tests loop over, its row-major
// AttentionDesc, its name in failure messages, the backward shapes the reduced-precision modes
// are held to, inputs drawn as F16/BF16 values, the query rows their host term sums walk, the
// F16/BF16 bounds' rounding constants, a mask's broadcast strides, a masked AttentionDesc and
// the masked-forward tests' random mask (with attention_cudnn_mask_test.cpp), a forward's
// Pointers and a run of one into NaN outputs, the gradients and the backward's Pointers, and
// reading results back (values, bits, stream 0). Included by CUDA builds only (after
// FERRITE_WITH_CUDA).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "conformance/conformance.hpp"
#include "cuda/attention/attention_kernels.cuh"
#include "ferrite/backend_families/attention_ops.hpp"
#include "frontend/dropout_draw.hpp"
#include "ferrite/cuda.hpp"
#include "ferrite/ferrite.hpp"

namespace ferrite::attention_test {

struct Problem {
  std::int64_t b, hq, hkv, sq, sk, d;
  bool causal;
};

/// `pr` with row-major strides, scale 1 / sqrt(D), no mask.
inline AttentionDesc desc_of(const Problem& pr, DType dtype) {
  AttentionDesc d;
  d.dtype = dtype;
  d.batch = pr.b;
  d.heads_q = pr.hq;
  d.heads_kv = pr.hkv;
  d.seq_q = pr.sq;
  d.seq_k = pr.sk;
  d.head_dim = d.value_dim = pr.d;
  d.causal = pr.causal;
  d.scale = 1.0 / std::sqrt(static_cast<double>(pr.d));
  d.set_row_major_strides();
  return d;
}

/// The front end's broadcast strides of a mask of `shape` (attention.cpp): row-major over the
/// mask's own dims, right-aligned to [B, Hq, Sq, Sk], 0 where the mask's extent is 1.
inline std::array<std::int64_t, 4> mask_strides(const Shape& shape) {
  std::array<std::int64_t, 4> st{};
  std::int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    const std::int64_t md = i - (4 - static_cast<std::int64_t>(shape.size()));
    const std::int64_t size = md >= 0 ? shape[static_cast<std::size_t>(md)] : 1;
    st[static_cast<std::size_t>(i)] = size == 1 ? 0 : stride;
    stride *= size;
  }
  return st;
}

/// desc_of(pr, dtype) with a mask of `kind` read at `strides` (elements; mask_strides).
inline AttentionDesc desc_of(const Problem& pr, DType dtype, AttentionMaskKind kind,
                             const std::array<std::int64_t, 4>& strides) {
  AttentionDesc d = desc_of(pr, dtype);
  d.mask = kind;
  d.mask_strides = strides;
  return d;
}

/// Dropout of probability p (none when 0) on d's weights at a fixed draw (seed, offset): the
/// threshold and scale the front end derives from p (frontend/dropout_draw.hpp).
inline void with_dropout(AttentionDesc& d, double p) {
  if (p <= 0) return;
  d.dropout_seed = 0x5eed0fa77e7710ull;
  d.dropout_offset = 12;
  d.dropout_threshold = frontend::dropout_threshold(p);
  d.dropout_scale = frontend::dropout_scale(p);
}

/// "B 2 Hq 4 Hkv 2 Sq 130 Sk 77 D 64 causal".
inline std::string name_of(const Problem& pr) {
  return "B " + std::to_string(pr.b) + " Hq " + std::to_string(pr.hq) + " Hkv " + std::to_string(pr.hkv) + " Sq " +
         std::to_string(pr.sq) + " Sk " + std::to_string(pr.sk) + " D " + std::to_string(pr.d) +
         (pr.causal ? " causal" : "");
}

/// The backward shapes the 1xTF32 and F16/BF16 tensor-core kernels are held to: ragged row and
/// key tiles, several of each, causal with Sq > Sk and Sq < Sk, GQA (groups 2, 3, 4), Sk = 0,
/// Sq = 0 (the 3xTF32 backward's own list, on main before them, lacks the group-4 256 x 256).
inline const std::vector<Problem>& backward_problems() {
  static const std::vector<Problem> problems{
      {2, 2, 2, 77, 77, 64, false},    {1, 3, 3, 130, 130, 128, true}, {2, 4, 2, 130, 77, 64, true},
      {1, 4, 1, 77, 200, 128, false},  {1, 2, 2, 40, 130, 64, true},   {1, 2, 2, 300, 300, 128, true},
      {1, 4, 2, 517, 333, 128, false}, {1, 2, 2, 1000, 1000, 128, true}, {1, 6, 2, 200, 330, 64, true},
      {1, 8, 2, 256, 256, 128, true},  {1, 2, 2, 20, 0, 128, false},   {1, 2, 2, 0, 20, 64, false},
      {1, 2, 1, 0, 90, 128, true}};
  return problems;
}

/// A query row (b, h, i) of a problem as the backward tests' host term sums walk them
/// (for_each_query_row): the keys it sees (causal top-left: j <= i; `keys` of them, from 0), the
/// offset of its element c in a [B, Hq, Sq, D] tensor (q_at) and of key j's in a [B, Hkv, Sk, D]
/// one (kv_at, its key/value head's), and dot: its row of x times key row j of y, in double.
struct QueryRow {
  std::int64_t b, h, i, keys, d;
  std::size_t q0, kv0;
  std::size_t q_at(std::int64_t c) const { return q0 + static_cast<std::size_t>(c); }
  std::size_t kv_at(std::int64_t j, std::int64_t c) const { return kv0 + static_cast<std::size_t>(j * d + c); }
  double dot(const std::vector<float>& x, const std::vector<float>& y, std::int64_t j) const {
    double sum = 0;
    for (std::int64_t c = 0; c < d; ++c) sum += static_cast<double>(x[q_at(c)]) * y[kv_at(j, c)];
    return sum;
  }
};

/// f(row) for every query row of `pr` that sees at least one key, in (b, h, i) order.
template <class F>
void for_each_query_row(const Problem& pr, F&& f) {
  const std::int64_t group = pr.hq / pr.hkv;
  for (std::int64_t b = 0; b < pr.b; ++b)
    for (std::int64_t h = 0; h < pr.hq; ++h)
      for (std::int64_t i = 0; i < pr.sq; ++i) {
        const std::int64_t keys = pr.causal ? std::min(pr.sk, i + 1) : pr.sk;  // top-left: j <= i
        if (keys == 0) continue;
        f(QueryRow{b, h, i, keys, pr.d, static_cast<std::size_t>(((b * pr.hq + h) * pr.sq + i) * pr.d),
                   static_cast<std::size_t>((b * pr.hkv + h / group) * pr.sk * pr.d)});
      }
}

/// F32 values that `half` (BF16 or F16) holds, so TF32 holds them too.
inline Tensor rounded_to(const Tensor& t, DType half) { return t.to(half).to(DType::F32); }

/// An F32 tensor of shape `s` on `device`, standard normal (`normal`) or uniform in [-1, 1),
/// rounded to `half`'s values.
inline Tensor half_values(Shape s, bool normal, DType half, Device device, random::Generator& generator) {
  Tensor t = empty(std::move(s), DType::F32, device);
  t = normal ? random::normal_(t, 0, 1, &generator) : random::uniform_(t, -1, 1, &generator);
  return rounded_to(t, half);
}

/// The unit roundoff of rounding to nearest in `half`: 2^-8 (BF16's 8 significant bits), 2^-11 (F16's 11).
inline double half_unit_roundoff(DType half) {
  return half == DType::BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
}
/// The absolute error of rounding a value below F16's smallest normal (2^-14) to F16: 2^-25;
/// 0 for BF16 (whose normal range F32's covers).
inline double half_subnormal_error(DType half) { return half == DType::F16 ? std::ldexp(1.0, -25) : 0.0; }

/// A tensor's values as F32 on the host (row-major).
inline std::vector<float> host(const Tensor& t) {
  return t.to(Device::cpu()).to(DType::F32).contiguous().to_vector<float>();
}

/// A random explicit mask as the masked-forward tests draw it (random_mask).
struct RandomMask {
  Tensor mask;                          // on the GPU: Bool, or additive in the problem's dtype
  std::vector<float> bias;              // its values as the kernels add them (Bool: 0 / -inf)
  std::array<std::int64_t, 4> strides;  // mask_strides of its extents
};

/// A `kind` mask of extents `ext` over [B, Hq, Sq, Sk] (1: broadcast): Bool true with
/// probability 0.7, additive -inf with 0.3, else 2 N(0, 1) rounded to `dtype`; an element with
/// hidden(b, i, j) (its batch, query row, key) hides its key and draws nothing; `nan_last`: the
/// additive mask's last element NaN. Draws from the caller's rng and distributions in element
/// order, after whatever the caller drew from them before (the inputs).
template <class Hidden>
RandomMask random_mask(AttentionMaskKind kind, DType dtype, const std::array<std::int64_t, 4>& ext, bool nan_last,
                       std::mt19937& rng, std::normal_distribution<float>& normal,
                       std::uniform_real_distribution<float>& unit, Hidden&& hidden) {
  const Shape shape{ext[0], ext[1], ext[2], ext[3]};
  RandomMask m{{}, {}, mask_strides(shape)};
  const std::int64_t n = ext[0] * ext[1] * ext[2] * ext[3];
  m.bias.resize(static_cast<std::size_t>(n));
  std::vector<bool> keep(static_cast<std::size_t>(n));
  for (std::int64_t e = 0; e < n; ++e) {
    const std::int64_t j = e % ext[3], i = (e / ext[3]) % ext[2], b = e / (ext[3] * ext[2] * ext[1]);
    const bool hide = hidden(b, i, j);
    const auto at = static_cast<std::size_t>(e);
    if (kind == AttentionMaskKind::Bool) {
      keep[at] = !hide && unit(rng) < 0.7f;
      m.bias[at] = keep[at] ? 0.f : -INFINITY;
    } else {
      m.bias[at] = hide || unit(rng) < 0.3f ? -INFINITY : 2.f * normal(rng);
    }
  }
  const Device gpu = Device::cuda(0);
  if (kind == AttentionMaskKind::Bool) {
    m.mask = from_vector(keep, shape).to(gpu);
    return m;
  }
  if (nan_last && n > 0) m.bias.back() = NAN;
  Tensor t = from_vector(m.bias, shape).to(dtype);
  m.bias = host(t);  // the rounded values
  m.mask = t.to(gpu);
  return m;
}

/// k or v ([B, Hkv, S, D]) repeated to `hq` heads as grouped-query attention reads them: query
/// head h uses key/value head h / (hq / Hkv).
inline Tensor repeat_heads(const Tensor& t, std::int64_t hq) {
  const std::int64_t b = t.shape()[0], hkv = t.shape()[1], s = t.shape()[2], d = t.shape()[3];
  return t.unsqueeze(2).expand({b, hkv, hq / hkv, s, d}).reshape({b, hq, s, d}).contiguous();
}

/// What cuDNN (and PyTorch) may add to each element of a grouped-query dk or dv ([B, Hkv, S, D])
/// by computing it as one gradient per query head, each rounded to `half`, then summed over the
/// group: 2u·Σ|g_h| over the element's group of heads (u: half_unit_roundoff; g_h: `per_head`,
/// the CPU backend's [B, Hq, S, D] gradient of the problem with k and v repeated to the query
/// heads, repeat_heads), one u for each head's rounding, one for the sum's. Causal problems need
/// it: early keys gather per-head gradients of size 1 whose group sum is small.
inline std::vector<double> grouped_rounding_slack(const Tensor& per_head, std::int64_t hkv, DType half) {
  const std::int64_t b = per_head.shape()[0], hq = per_head.shape()[1], group = hq / hkv;
  const std::int64_t inner = per_head.numel() / (b * hq);  // one head's S·D elements
  const std::vector<float> h = host(per_head);
  const double two_u = 2 * half_unit_roundoff(half);
  std::vector<double> slack(static_cast<std::size_t>(b * hkv * inner), 0.0);
  for (std::size_t i = 0; i < slack.size(); ++i) {
    const std::size_t outer = i / inner, at = i % inner;  // outer = batch·Hkv + kv head
    double heads = 0;
    for (std::int64_t j = 0; j < group; ++j) heads += std::fabs(h[(outer * group + j) * inner + at]);
    slack[i] = two_u * heads;
  }
  return slack;
}

/// A grouped-query dk or dv (`got`, [B, Hkv, S, D] in F16/BF16) against the CPU backend's
/// `expected`: besides atol + rtol·|expected| an element may be off by grouped_rounding_slack.
/// "" when all hold, else the first element outside, as conformance::compare.
inline std::string compare_grouped(const Tensor& got, const Tensor& expected, const Tensor& per_head, DType half,
                                   double rtol, double atol) {
  if (got.shape() != expected.shape()) return "shapes differ";
  const std::vector<float> g = host(got), e = host(expected);
  const std::vector<double> slack = grouped_rounding_slack(per_head, got.shape()[1], half);
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double bound = atol + rtol * std::fabs(e[i]) + slack[i];
    const bool ok = std::isnan(e[i]) ? std::isnan(g[i]) : std::fabs(double(g[i]) - e[i]) <= bound;
    if (!ok)
      return "element " + std::to_string(i) + " of " + std::to_string(got.numel()) + ": got " + std::to_string(g[i]) +
             ", expected " + std::to_string(e[i]) + " (bound " + std::to_string(bound) + ", of which " +
             std::to_string(slack[i]) + " for the group's per-head roundings)";
  }
  return "";
}

/// The bytes of a tensor's elements: "the same bits" must hold for NaN elements too, which
/// compare unequal as floats.
inline std::vector<std::uint8_t> bits(const Tensor& t) { return t.to(Device::cpu()).to_bytes(); }
inline cudaStream_t stream0() { return static_cast<cudaStream_t>(cuda::current_stream(0)); }

/// A backward's gradients.
struct Grads {
  Tensor dq, dk, dv;
};

/// Gradients shaped as q, k and v in `dtype`, every element NaN: an element a kernel fails to
/// write shows.
inline Grads nan_grads(const Tensor& q, const Tensor& k, const Tensor& v, DType dtype, Device device) {
  return {full(q.shape(), NAN, dtype, device), full(k.shape(), NAN, dtype, device),
          full(v.shape(), NAN, dtype, device)};
}

/// A forward's outputs: out [B, Hq, Sq, D] and logsumexp [B, Hq, Sq] (F32).
struct ForwardOutputs {
  Tensor out, lse;
};


/// A forward's operands (`mask` nullptr: none) and its outputs into `out` and `logsumexp`.
inline cuda::attention::Pointers forward_pointers(const Tensor& q, const Tensor& k, const Tensor& v, const void* mask,
                                                  const Tensor& out, const Tensor& logsumexp) {
  cuda::attention::Pointers p;
  p.q = q.data_ptr();
  p.k = k.data_ptr();
  p.v = v.data_ptr();
  p.mask = mask;
  p.result = out.mutable_data_ptr();
  p.logsumexp = logsumexp.mutable_data_ptr();
  return p;
}

/// A forward of `pr` (`run(pointers)`: the kernel under test, on stream 0) on the GPU's q, k, v and
/// `mask` (nullptr: none) into outputs that start as NaN, out in `dtype`, so an unwritten element
/// shows; the stream synchronised before and after, each checked.
template <class Run>
ForwardOutputs run_forward(const Problem& pr, DType dtype, const Tensor& q, const Tensor& k, const Tensor& v,
                           const void* mask, Run&& run) {
  const Device gpu = Device::cuda(0);
  ForwardOutputs r{full({pr.b, pr.hq, pr.sq, pr.d}, NAN, dtype, gpu), full({pr.b, pr.hq, pr.sq}, NAN, DType::F32, gpu)};
  const cuda::attention::Pointers ptr = forward_pointers(q, k, v, mask, r.out, r.lse);
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  run(ptr);
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  return r;
}

/// A backward's operands (no mask) and its gradients into g's tensors.
inline cuda::attention::Pointers backward_pointers(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                                   const Tensor& grad_out, const Tensor& logsumexp, const Tensor& delta,
                                                   const Grads& g) {
  cuda::attention::Pointers p;
  p.q = q.data_ptr();
  p.k = k.data_ptr();
  p.v = v.data_ptr();
  p.out = out.data_ptr();
  p.grad_out = grad_out.data_ptr();
  p.logsumexp = logsumexp.mutable_data_ptr();
  p.delta = delta.mutable_data_ptr();
  p.dq = g.dq.mutable_data_ptr();
  p.dk = g.dk.mutable_data_ptr();
  p.dv = g.dv.mutable_data_ptr();
  return p;
}

/// A second run's gradients bit for bit the first's (fixed MMA and summation orders).
inline void expect_same_bits(const Grads& again, const Grads& first, const std::string& what) {
  EXPECT_EQ(bits(again.dq), bits(first.dq)) << "dq repeats, " << what;
  EXPECT_EQ(bits(again.dk), bits(first.dk)) << "dk repeats, " << what;
  EXPECT_EQ(bits(again.dv), bits(first.dv)) << "dv repeats, " << what;
}

/// The blocks a deterministic cuDNN backward runs in (cudnn_sdpa.cpp: candidate_blocks), as
/// slices: one batch each, or (`grouped`) one key/value head each with its `group` query heads.
struct BlockSlices {
  bool grouped;
  std::int64_t group;
  /// Block i of a query-side tensor: q, out, dO, a per-head mask ([B, Hq, ...]) or the
  /// logsumexp ([B, Hq, Sq]).
  Tensor query_side(const Tensor& t, std::int64_t i) const {
    return grouped ? t.slice(1, group * i, group * (i + 1)) : t.slice(0, i, i + 1);
  }
  /// Block i of k or v.
  Tensor kv_side(const Tensor& t, std::int64_t i) const {
    return grouped ? t.slice(1, i, i + 1) : t.slice(0, i, i + 1);
  }
};

/// The whole backward's gradients `g` bit for bit those of its `blocks` blocks run as problems of
/// their own (`options_of(i)`: block i's options, its mask sliced where it has one), side by side.
inline void expect_same_as_blocks(const nn::AttentionGrads& g, const BlockSlices& at, std::int64_t blocks,
                                  const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                                  const Tensor& out, const Tensor& logsumexp,
                                  const std::function<nn::AttentionOptions(std::int64_t)>& options_of,
                                  const std::string& what) {
  std::vector<Tensor> dq, dk, dv;
  for (std::int64_t i = 0; i < blocks; ++i) {
    const auto part = nn::scaled_dot_product_attention_backward(
        at.query_side(grad_out, i), at.query_side(q, i), at.kv_side(k, i), at.kv_side(v, i), at.query_side(out, i),
        at.query_side(logsumexp, i), options_of(i));
    dq.push_back(part.dq);
    dk.push_back(part.dk);
    dv.push_back(part.dv);
  }
  const std::int64_t axis = at.grouped ? 1 : 0;
  EXPECT_EQ(conformance::compare(g.dq, cat(dq, axis), {0, 0}), "") << "dq, " << what;
  EXPECT_EQ(conformance::compare(g.dk, cat(dk, axis), {0, 0}), "") << "dk, " << what;
  EXPECT_EQ(conformance::compare(g.dv, cat(dv, axis), {0, 0}), "") << "dv, " << what;
}

}  // namespace ferrite::attention_test
