// Conformance entries of scaled dot-product attention (ferrite/nn.hpp): forward (out and
// logsumexp) and backward (dq, dk, dv) in one entry, against an F64 composition of ferrite's
// own matmul, softmax and masking on the CPU (the score matrix materialised, as the op never
// does). Inputs in [-1, 1]; every shape of the issue within test time: decoding (Sq = 1),
// Sq != Sk both ways, causal with Sq > Sk, GQA, B = 0, Sk = 0, D not a multiple of 8, Bool and
// additive masks with fully masked rows (0 output, 0 gradient), S = 1000, the F32 tiled
// forward's ragged tiles (tiled_*). On the GPU the F16/BF16 cases run through both of its
// routes (cuDNN's SDPA and the own kernels, see the specs). Dropout cases draw from a
// generator of a fixed seed on each device, and the reference drops the weights nn::dropout
// drops at that draw (of a [B, Hq, Sq, Sk] tensor of ones).
#include <cmath>
#include <limits>

#include "conformance/conformance.hpp"

namespace ferrite::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Spec {
  std::string label;
  std::int64_t b, hq, hkv, sq, sk, d, dv;
  bool causal = false;
  int mask = 0;  // 0 none, 1 Bool [sq, sk] with row 1 all false, 2 additive [b, hq, sq, sk] with an -inf row,
                 // 3 Bool [b, 1, 1, sk]
  double scale = std::nan("");
  // q, k, v passed as the GPT makes them: permuted views of one [B, S, 3, H, D] projection,
  // grad_out a view of [B, S, H, D] (needs hq == hkv, sq == sk, d == dv); cuDNN reads such
  // views in place (docs/families/nn.md, "Strided inputs"), the other routes copy them.
  bool qkv_views = false;
  // dq, dk, dv passed to backward_out as contiguous views one element into their storage (off
  // the 16-byte grid): their buffer() is a copy, so they must be computed apart and copied in
  // (the front end once wrote them into that copy, and the caller's tensors kept their values).
  bool offset_grads = false;
  // Dropout on the attention weights (AttentionOptions::dropout_p); on CUDA never on cuDNN
  // (its dropout stream is not ferrite's): F16/BF16 with D = Dv in {64, 128} on the tensor-core
  // kernels, the rest on the general kernels.
  double dropout = 0;
};

// The seed of the dropout cases' generators (one per device, each at offset 0).
constexpr std::uint64_t kDropoutSeed = 20261201;

const std::vector<Spec>& specs() {
  static const std::vector<Spec> s = {
      {"square", 2, 4, 4, 17, 17, 32, 32},
      {"decode", 1, 2, 2, 1, 128, 64, 64},
      {"causal_sq_gt_sk_gqa", 1, 2, 1, 17, 5, 80, 80, true},
      {"causal_sq_lt_sk_gqa", 1, 4, 2, 5, 70, 128, 128, true},
      {"decode_split_keys_padding", 2, 4, 2, 3, 300, 64, 40, false, 3},
      {"decode_split_keys_additive", 1, 2, 2, 3, 100, 32, 32, false, 2},
      {"causal_128", 1, 2, 2, 128, 128, 64, 64, true},
      {"batch0", 0, 2, 2, 4, 4, 32, 32},
      {"keys0", 1, 2, 2, 3, 0, 32, 32},
      {"one", 1, 1, 1, 1, 1, 32, 32},
      {"odd_dims", 2, 2, 2, 9, 13, 20, 12},
      {"bool_mask_dead_row", 1, 2, 2, 17, 17, 32, 16, false, 1},
      {"additive_mask_inf_row", 2, 2, 2, 8, 12, 64, 64, false, 2},
      {"key_padding_gqa4", 2, 4, 1, 6, 19, 32, 32, false, 3},
      {"causal_and_mask_scale", 1, 2, 2, 10, 10, 32, 32, true, 2, 0.3},
      {"d256", 1, 1, 1, 7, 9, 256, 256},
      // F32 on the GPU: the tiled forward (src/cuda/attention/attention_f32_tiled.cu) takes
      // D = Dv in {64, 128} without a mask, in blocks of 128 query rows and tiles of 64 keys.
      // These give it ragged tiles on both sides (77, 130, 200, 300), several row blocks,
      // causal with Sq > Sk and Sq < Sk, GQA 2:1 and 4:1, B·H > 1, a given scale, and Sk = 0
      // (every row fully masked: out 0, logsumexp -inf; top-left causal always leaves key 0
      // visible, so without a mask no other row is fully masked). The cases above with D = 64
      // or 128 and no mask (causal_128, cudnn_*) reach it too.
      {"tiled_d64_s77", 2, 2, 2, 77, 77, 64, 64},
      {"tiled_causal_d128_s130", 1, 3, 3, 130, 130, 128, 128, true},
      {"tiled_causal_sq_gt_sk_gqa_d64", 2, 4, 2, 130, 77, 64, 64, true},
      {"tiled_sq_lt_sk_gqa4_d128", 1, 4, 1, 77, 200, 128, 128},
      {"tiled_causal_sq_lt_sk_d64_scale", 1, 2, 2, 40, 130, 64, 64, true, 0, 0.2},
      {"tiled_keys0_d128", 1, 2, 2, 20, 0, 128, 128},
      {"tiled_causal_s300_d128", 1, 2, 2, 300, 300, 128, 128, true},
      // F16/BF16 on the GPU: cuDNN's SDPA takes the unmasked and causal cases with head dims
      // multiples of 8 (cuda_attention_ops.cpp), and the masked ones above with such head dims
      // too, forward and backward (the mask as its bias; FERRITE_ATTENTION_CUDNN_MASKS=off keeps
      // them on the own kernels; bool_mask_dead_row and additive_mask_inf_row hold its fully
      // masked rows); the odd-dim and empty ones stay on the own kernels. These cover cuDNN's route: D = 64 and 128, GQA, causal with
      // Sq == Sk and Sq < Sk (top-left: decoding with causal sees key 0 only), decoding,
      // S = 1000, Dv != D, a given scale.
      {"cudnn_s1000_gqa_d64", 1, 4, 2, 1000, 1000, 64, 64},
      {"cudnn_s1000_causal_d128", 1, 2, 2, 1000, 1000, 128, 128, true},
      {"cudnn_causal_gqa_d128", 2, 4, 1, 64, 64, 128, 128, true},
      {"cudnn_causal_sq_lt_sk_d64", 1, 2, 2, 40, 300, 64, 64, true},
      {"cudnn_decode_gqa4_d128", 2, 8, 2, 1, 300, 128, 128},
      {"cudnn_decode_causal_d64", 1, 2, 2, 1, 64, 64, 64, true},
      {"cudnn_dv_ne_d_scale", 1, 2, 2, 33, 47, 64, 32, false, 0, 0.05},
      {"cudnn_qkv_views_causal_d64", 2, 4, 4, 96, 96, 64, 64, true, 0, std::nan(""), true},
      {"cudnn_qkv_views_d128", 1, 2, 2, 40, 40, 128, 128, false, 0, std::nan(""), true},
      // Empty on one side only: no query (out empty; dk and dv exist and are 0), no value
      // feature (out empty; logsumexp and dq, dk as usual with dO empty: dq = dk = 0).
      {"queries0", 1, 2, 2, 0, 5, 32, 32},
      {"value_dim0", 1, 2, 2, 4, 6, 32, 0},
      // No query/key feature: every score 0, out the mean of v, dq and dk empty. A given scale
      // (the default 1/sqrt(0) would make the reference's 0 * inf NaN; PyTorch scales q first).
      {"head_dim0", 1, 2, 1, 3, 5, 0, 8, false, 0, 0.5},
      {"offset_grads_gqa", 2, 4, 2, 9, 13, 20, 12, false, 0, std::nan(""), false, true},
      {"offset_grads_d64", 1, 2, 2, 33, 33, 64, 64, true, 0, std::nan(""), false, true},
      // Dropout: causal GQA with Sq < Sk, a Bool mask with a dead row, decoding (the split-keys
      // shape), D = 128 (the tiled F32 and cuDNN shape), a key-padding mask with GQA 4:1 and
      // p = 1 (every weight dropped: out and gradients 0, logsumexp as without dropout).
      {"dropout_causal_gqa", 1, 4, 2, 33, 40, 64, 64, true, 0, std::nan(""), false, false, 0.3},
      {"dropout_bool_mask_dead_row", 1, 2, 2, 17, 17, 32, 16, false, 1, std::nan(""), false, false, 0.5},
      {"dropout_decode", 2, 2, 2, 1, 130, 64, 64, false, 0, std::nan(""), false, false, 0.1},
      {"dropout_d128", 1, 2, 2, 70, 70, 128, 128, false, 0, 0.1, false, false, 0.2},
      {"dropout_key_padding_gqa4", 2, 4, 1, 6, 19, 32, 32, false, 3, std::nan(""), false, false, 0.25},
      {"dropout_all", 1, 1, 1, 5, 7, 32, 32, false, 0, std::nan(""), false, false, 1.0},
      // Empty problems with dropout: no key (every row fully masked: out 0, logsumexp -inf,
      // dq 0) and no batch.
      {"dropout_keys0", 1, 2, 2, 3, 0, 32, 32, false, 0, std::nan(""), false, false, 0.5},
      {"dropout_batch0", 0, 2, 2, 4, 4, 32, 32, false, 0, std::nan(""), false, false, 0.5},
      // F16/BF16 tensor-core dropout (attention_half_mma_*.cu): Sk a multiple of 4 (lanes share
      // Philox groups) over several row and key tiles with GQA, Sk odd with causal, a Bool
      // key-padding mask, and an additive mask with an -inf row. dropout_causal_gqa,
      // dropout_decode and dropout_d128 above reach them too (Sk 40, 130 and 70).
      {"dropout_tc_gqa_d64_s200", 2, 4, 2, 130, 200, 64, 64, false, 0, std::nan(""), false, false, 0.15},
      {"dropout_tc_causal_d128_sk77", 1, 2, 2, 77, 77, 128, 128, true, 0, std::nan(""), false, false, 0.4},
      {"dropout_tc_key_padding_d64", 2, 4, 1, 40, 64, 64, 64, false, 3, std::nan(""), false, false, 0.3},
      {"dropout_tc_additive_d128", 1, 2, 2, 40, 96, 128, 128, false, 2, std::nan(""), false, false, 0.2},
      {"dropout_tc_all", 1, 2, 1, 33, 40, 64, 64, true, 0, std::nan(""), false, false, 1.0},  // p = 1
  };
  return s;
}

Tensor random_mask(const Spec& s, DType dtype, Rng& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  if (s.mask == 1 || s.mask == 3) {
    const Shape shape = s.mask == 1 ? Shape{s.sq, s.sk} : Shape{s.b, 1, 1, s.sk};
    std::vector<bool> m(static_cast<std::size_t>(shape_numel(shape)));
    for (std::size_t e = 0; e < m.size(); ++e) m[e] = u(rng) < 0.7;
    if (s.mask == 1)
      for (std::int64_t j = 0; j < s.sk; ++j) m[static_cast<std::size_t>(s.sk + j)] = false;  // row 1 dead
    return from_vector(m, shape);
  }
  const Shape shape = {s.b, s.hq, s.sq, s.sk};
  std::vector<double> m(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t e = 0; e < m.size(); ++e) m[e] = u(rng) < 0.2 ? -kInf : u(rng) - 0.5;
  if (s.sq > 2)
    for (std::int64_t j = 0; j < s.sk; ++j) m[static_cast<std::size_t>(2 * s.sk + j)] = -kInf;  // row 2 of head 0
  return from_vector(m, shape).to(dtype);
}

std::vector<Case> attention_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  for (const Spec& s : specs()) {
    Case c;
    c.label = s.label;
    c.inputs = {random({s.b, s.hq, s.sq, s.d}, dtype, rng, -1, 1), random({s.b, s.hkv, s.sk, s.d}, dtype, rng, -1, 1),
                random({s.b, s.hkv, s.sk, s.dv}, dtype, rng, -1, 1),
                random({s.b, s.hq, s.sq, s.dv}, dtype, rng, -1, 1)};
    if (s.mask) c.inputs.push_back(random_mask(s, dtype, rng));
    c.ints = {s.causal ? 1 : 0, s.qkv_views ? 1 : 0, s.offset_grads ? 1 : 0};
    c.reals = {s.scale, s.dropout};
    cases.push_back(std::move(c));
  }
  return cases;
}

nn::AttentionOptions options_of(const Case& c) {
  nn::AttentionOptions o;
  o.causal = c.ints[0] != 0;
  if (!std::isnan(c.reals[0])) o.scale = c.reals[0];
  if (c.inputs.size() > 4) o.mask = c.inputs[4];
  o.dropout_p = c.reals[1];
  return o;
}

std::vector<Tensor> run_attention(const Case& c) {
  nn::AttentionOptions o = options_of(c);
  Tensor q = c.inputs[0], k = c.inputs[1], v = c.inputs[2], go = c.inputs[3];
  random::Generator generator(kDropoutSeed, q.device());
  o.generator = &generator;
  if (c.ints[1] != 0) {
    // [B, H, S, D] each -> one [B, S, 3, H, D] tensor -> q, k, v as its permuted slices.
    const auto bshd = [](const Tensor& x) { return x.permute({0, 2, 1, 3}); };
    const Tensor heads = stack({bshd(q), bshd(k), bshd(v)}, 2).permute({2, 0, 3, 1, 4});
    q = heads.select(0, 0);
    k = heads.select(0, 1);
    v = heads.select(0, 2);
    go = bshd(go).contiguous().permute({0, 2, 1, 3});
  }
  const auto fwd = nn::scaled_dot_product_attention(q, k, v, o);
  o.dropout_state = fwd.dropout_state;  // the backward drops what the forward dropped
  if (c.ints[1] != 0) {
    // The gradients written into the slices of one [B, S, 3, H, D] tensor, as the GPT's
    // backward takes them (cuDNN writes those views in place; the other routes copy).
    const Tensor dqkv = empty({q.size(0), q.size(2), 3, q.size(1), q.size(3)}, q.dtype(), q.device());
    const Tensor heads = dqkv.permute({2, 0, 3, 1, 4});
    const nn::AttentionGrads into{heads.select(0, 0), heads.select(0, 1), heads.select(0, 2)};
    nn::scaled_dot_product_attention_backward_out(into, go, q, k, v, fwd.out, fwd.logsumexp, o);
    return {fwd.out, fwd.logsumexp, into.dq, into.dk, into.dv};
  }
  if (c.ints[2] != 0) {
    // Each gradient a contiguous view starting one element into its storage, filled with NaN
    // so that any element left unwritten shows.
    const auto offset_view = [](const Tensor& like) {
      const Tensor storage = full({like.numel() + 1}, std::nan(""), like.dtype(), like.device());
      return storage.slice(0, 1, like.numel() + 1).view(like.shape());
    };
    const nn::AttentionGrads into{offset_view(q), offset_view(k), offset_view(v)};
    nn::scaled_dot_product_attention_backward_out(into, go, q, k, v, fwd.out, fwd.logsumexp, o);
    return {fwd.out, fwd.logsumexp, into.dq, into.dk, into.dv};
  }
  const auto g = nn::scaled_dot_product_attention_backward(go, q, k, v, fwd.out, fwd.logsumexp, o);
  return {fwd.out, fwd.logsumexp, g.dq, g.dk, g.dv};
}

// [B, Hkv, S, X] -> [B, Hq, S, X]: each key/value head repeated for its group of query heads.
Tensor expand_heads(const Tensor& x, std::int64_t group) {
  const Shape& s = x.shape();
  return repeat(x.reshape({s[0], s[1], 1, s[2], s[3]}), {1, 1, group, 1, 1}).reshape({s[0], s[1] * group, s[2], s[3]});
}

// [B, Hq, S, X] -> [B, Hkv, S, X]: the sum over each group of query heads.
Tensor reduce_heads(const Tensor& x, std::int64_t group) {
  const Shape& s = x.shape();
  return sum(x.reshape({s[0], s[1] / group, group, s[2], s[3]}), 2);
}

std::vector<Tensor> reference_attention(const Case& c) {
  const DType dtype = c.inputs[0].dtype();
  const Tensor q = c.inputs[0].to(DType::F64), go = c.inputs[3].to(DType::F64);
  const std::int64_t hq = q.size(1), hkv = c.inputs[1].size(1), sq = q.size(2), sk = c.inputs[1].size(2);
  const std::int64_t group = hkv > 0 ? hq / hkv : 1;
  const Tensor k = expand_heads(c.inputs[1].to(DType::F64), group), v = expand_heads(c.inputs[2].to(DType::F64), group);
  const double scale = std::isnan(c.reals[0]) ? 1.0 / std::sqrt(static_cast<double>(q.size(3))) : c.reals[0];
  const Tensor neg_inf = full({}, -kInf, DType::F64);
  Tensor s = matmul(q, k, {.transpose_b = true}) * scale;
  if (c.inputs.size() > 4) {
    const Tensor& m = c.inputs[4];
    s = m.dtype() == DType::Bool ? where(m, s, neg_inf) : s + m.to(DType::F64);
  }
  if (c.ints[0] != 0) {
    std::vector<bool> allowed(static_cast<std::size_t>(sq * sk));
    for (std::int64_t i = 0; i < sq; ++i)
      for (std::int64_t j = 0; j < sk; ++j) allowed[static_cast<std::size_t>(i * sk + j)] = j <= i;
    s = where(from_vector(allowed, {sq, sk}), s, neg_inf);
  }
  // Fully masked rows: softmax gives NaN there; the op defines them as 0 (and logsumexp -inf).
  const Tensor row_max = sk > 0 ? amax(s, -1, true) : full({q.size(0), hq, sq, 1}, -kInf, DType::F64);
  const Tensor dead = eq(row_max, neg_inf);
  const Tensor zero = full({}, 0.0, DType::F64);
  const Tensor p = sk > 0 ? where(dead, zero, softmax(s, -1)) : s;
  // Dropout's factors: 1 / (1 - p) where nn::dropout keeps element (b, h, i, j) of a
  // [B, Hq, Sq, Sk] tensor at the same draw, 0 where it drops it; all 1 without dropout.
  const double dropout = c.reals[1];
  random::Generator generator(kDropoutSeed, Device::cpu());
  const Tensor keep = dropout > 0 ? nn::dropout(ones(s.shape(), DType::F64), dropout, &generator).output
                                  : ones(s.shape(), DType::F64);
  const Tensor kept = p * keep;
  const Tensor out = matmul(kept, v);
  Tensor lse = where(dead, neg_inf, row_max + log(sum(exp(s - where(dead, zero, row_max)), -1, true)));
  lse = lse.reshape({q.size(0), hq, sq});
  // Gradients of out = (P * keep) v with P = softmax(s): dL/dP = keep * dO vᵀ, and
  // dS = P (dL/dP - rowsum(dO * out)) (rowsum(P dL/dP) = rowsum(dO * out) still).
  const Tensor dp = matmul(go, v, {.transpose_b = true}) * keep;
  const Tensor ds = p * (dp - sum(go * out, -1, true));
  const Tensor dq = matmul(ds, k) * scale;
  const Tensor dk = reduce_heads(matmul(ds, q, {.transpose_a = true}) * scale, group);
  const Tensor dv = reduce_heads(matmul(kept, go, {.transpose_a = true}), group);
  const DType lse_dtype = dtype == DType::F64 ? DType::F64 : DType::F32;
  return {out.to(dtype), lse.to(lse_dtype), dq.to(dtype), dk.to(dtype), dv.to(dtype)};
}

// The CPU computes in double like the reference and rounds once: a few ulps of the dtype.
Tolerance reference_tol(DType d) {
  switch (d) {
    case DType::F64: return {1e-10, 1e-12};
    case DType::F32: return {1e-5, 1e-6};
    case DType::F16: return {2e-3, 1e-3};  // the backward reads the rounded out (as PyTorch)
    default: return {1.6e-2, 5e-3};  // as F16: the rounded out feeds the backward
  }
}

// CUDA accumulates half types and F32 in F32 in another order than the CPU's double.
Tolerance backend_tol(DType d) {
  switch (d) {
    case DType::F64: return {1e-9, 1e-11};
    case DType::F32: return {1e-4, 1e-5};
    case DType::F16: return {5e-3, 2e-3};
    default: return {3e-2, 1e-2};
  }
}

std::vector<ErrorCase> attention_errors(DType dtype) {
  using nn::scaled_dot_product_attention;
  auto t = [dtype](Shape s, Device dev) { return zeros(std::move(s), dtype, dev); };
  return {
      {"rank", [=](Device d) { scaled_dot_product_attention(t({2, 3, 4}, d), t({1, 2, 3, 4}, d), t({1, 2, 3, 4}, d)); },
       ErrorKind::ShapeMismatch, "must be 4-D"},
      {"heads", [=](Device d) { scaled_dot_product_attention(t({1, 3, 4, 8}, d), t({1, 2, 4, 8}, d), t({1, 2, 4, 8}, d)); },
       ErrorKind::ShapeMismatch, "must divide query heads"},
      {"head_dim", [=](Device d) { scaled_dot_product_attention(t({1, 2, 4, 8}, d), t({1, 2, 4, 6}, d), t({1, 2, 4, 8}, d)); },
       ErrorKind::ShapeMismatch, "do not fit"},
      {"dtype", [=](Device d) {
         scaled_dot_product_attention(t({1, 2, 4, 8}, d), zeros({1, 2, 4, 8}, dtype == DType::F32 ? DType::F64 : DType::F32, d),
                                      t({1, 2, 4, 8}, d));
       },
       ErrorKind::DTypeMismatch, "dtypes differ"},
      {"int_dtype", [=](Device d) {
         const Tensor x = zeros({1, 1, 2, 8}, DType::I32, d);
         scaled_dot_product_attention(x, x, x);
       },
       ErrorKind::Unsupported, "is not supported"},
      {"too_wide", [=](Device d) { scaled_dot_product_attention(t({1, 1, 2, 264}, d), t({1, 1, 2, 264}, d), t({1, 1, 2, 8}, d)); },
       ErrorKind::Unsupported, "up to 256"},
      {"mask_shape", [=](Device d) {
         scaled_dot_product_attention(t({1, 2, 4, 8}, d), t({1, 2, 5, 8}, d), t({1, 2, 5, 8}, d),
                                      {.mask = zeros({4, 4}, DType::Bool, d)});
       },
       ErrorKind::ShapeMismatch, "does not broadcast"},
      {"mask_dtype", [=](Device d) {
         scaled_dot_product_attention(t({1, 2, 4, 8}, d), t({1, 2, 4, 8}, d), t({1, 2, 4, 8}, d),
                                      {.mask = zeros({4, 4}, DType::I32, d)});
       },
       ErrorKind::DTypeMismatch, "must be Bool"},
      {"lse_dtype", [=](Device d) {
         const Tensor x = t({1, 2, 4, 8}, d);
         nn::scaled_dot_product_attention_backward(x, x, x, x, x, zeros({1, 2, 4}, DType::I64, d));
       },
       ErrorKind::DTypeMismatch, "logsumexp"},
      {"grad_shape", [=](Device d) {
         const Tensor x = t({1, 2, 4, 8}, d);
         nn::scaled_dot_product_attention_backward(t({1, 2, 3, 8}, d), x, x, x, x,
                                                   zeros({1, 2, 4}, dtype == DType::F64 ? DType::F64 : DType::F32, d));
       },
       ErrorKind::ShapeMismatch, "grad_out"},
      {"out_grad_shape", [=](Device d) {
         const Tensor x = t({1, 2, 4, 8}, d);
         const nn::AttentionResult f = scaled_dot_product_attention(x, x, x);
         nn::scaled_dot_product_attention_backward_out({t({1, 2, 4, 8}, d), t({1, 2, 5, 8}, d), t({1, 2, 4, 8}, d)}, x,
                                                       x, x, x, f.out, f.logsumexp);
       },
       ErrorKind::ShapeMismatch, "dk"},
      {"out_grad_dtype", [=](Device d) {
         const Tensor x = t({1, 2, 4, 8}, d);
         const nn::AttentionResult f = scaled_dot_product_attention(x, x, x);
         const DType other = dtype == DType::F32 ? DType::F64 : DType::F32;
         nn::scaled_dot_product_attention_backward_out({t({1, 2, 4, 8}, d), t({1, 2, 4, 8}, d), zeros({1, 2, 4, 8}, other, d)},
                                                       x, x, x, x, f.out, f.logsumexp);
       },
       ErrorKind::DTypeMismatch, "dv"},
      {"out_grad_undefined", [=](Device d) {
         const Tensor x = t({1, 2, 4, 8}, d);
         const nn::AttentionResult f = scaled_dot_product_attention(x, x, x);
         nn::scaled_dot_product_attention_backward_out({t({1, 2, 4, 8}, d), Tensor(), t({1, 2, 4, 8}, d)}, x, x, x,
                                                       x, f.out, f.logsumexp);
       },
       ErrorKind::InvalidArgument, "undefined"},
      {"out_grad_overlaps_input", [=](Device d) {
         const Tensor x = t({1, 2, 4, 8}, d), y = t({1, 2, 4, 8}, d);
         const nn::AttentionResult f = scaled_dot_product_attention(x, y, y);
         nn::scaled_dot_product_attention_backward_out({x, t({1, 2, 4, 8}, d), t({1, 2, 4, 8}, d)}, y, x, y, y, f.out,
                                                       f.logsumexp);
       },
       ErrorKind::InvalidArgument, "overlaps an input"},
      {"out_grad_overlaps_mask", [=](Device d) {
         // An additive mask [B, Hq, Sq, Sk] with Sk = D has q's shape: read while dq is written.
         const Tensor x = t({1, 2, 4, 4}, d), y = t({1, 2, 4, 4}, d), mask = t({1, 2, 4, 4}, d);
         const nn::AttentionResult f = scaled_dot_product_attention(x, x, x, {.mask = mask});
         nn::scaled_dot_product_attention_backward_out({mask, t({1, 2, 4, 4}, d), t({1, 2, 4, 4}, d)}, y, x, x, x,
                                                       f.out, f.logsumexp, {.mask = mask});
       },
       ErrorKind::InvalidArgument, "overlaps an input"},
      {"dropout_p", [=](Device d) {
         const Tensor x = t({1, 2, 4, 8}, d);
         scaled_dot_product_attention(x, x, x, {.dropout_p = 1.5});
       },
       ErrorKind::InvalidArgument, "dropout_p must be in [0, 1]"},
      {"dropout_p_nan", [=](Device d) {
         const Tensor x = t({1, 2, 4, 8}, d);
         scaled_dot_product_attention(x, x, x, {.dropout_p = std::nan("")});
       },
       ErrorKind::InvalidArgument, "dropout_p must be in [0, 1]"},
      {"dropout_state_missing", [=](Device d) {
         const Tensor x = t({1, 2, 4, 8}, d);
         const nn::AttentionResult f = scaled_dot_product_attention(x, x, x, {.dropout_p = 0.5});
         nn::scaled_dot_product_attention_backward(x, x, x, x, f.out, f.logsumexp, {.dropout_p = 0.5});
       },
       ErrorKind::InvalidArgument, "no dropout_state"},
      {"out_grads_alias", [=](Device d) {
         const Tensor x = t({1, 2, 4, 8}, d), g = t({1, 2, 4, 8}, d);
         const nn::AttentionResult f = scaled_dot_product_attention(x, x, x);
         nn::scaled_dot_product_attention_backward_out({g, g, t({1, 2, 4, 8}, d)}, x, x, x, x, f.out, f.logsumexp);
       },
       ErrorKind::InvalidArgument, "overlaps dq"},
  };
}

Entry attention_entry() {
  Entry e;
  e.op = "scaled_dot_product_attention";
  e.dtypes = {DType::F32, DType::F64, DType::F16, DType::BF16};
  e.cases = attention_cases;
  e.run_outputs = run_attention;
  e.reference_outputs = reference_attention;
  e.reference_tolerance = reference_tol;
  e.backend_tolerance = backend_tol;
  e.errors = attention_errors;
  return e;
}

FERRITE_CONFORMANCE(attention_entry());

}  // namespace
}  // namespace ferrite::conformance
