// The forward and backward passes, written out by hand with ferrite ops (as llm.c does in C).
// The residual stream is kept as [N, C] with N = B * T, so every linear layer is one matmul.
#include "examples/gpt/model.hpp"

#include "examples/gpt/phase_profile.hpp"

#include <cmath>
#include <numbers>

namespace ferrite::gpt {

namespace {

constexpr double kLayerNormEps = 1e-5;
constexpr GeluApproximation kGelu = GeluApproximation::Tanh;  // GPT-2's gelu

// y = x wᵀ + b for w stored [out, in], x, w and b of one dtype: nn::linear adds the bias
// before the product's one rounding (for BF16 as PyTorch's addmm does in the GEMM's epilogue),
// on CUDA inside the GEMM itself (cuBLASLt's bias epilogue), so the "matmul" phase covers it.
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b, MatmulCompute compute) {
  Phase phase("matmul");
  return nn::linear(x, w, b, {.compute = compute});
}

// t in `dtype` (a no-op when it has it already), timed as a cast.
Tensor cast_to(const Tensor& t, DType dtype) {
  Phase phase("cast");
  return t.to(dtype);
}

// The residual stream's gradient (master dtype) and its rounding to the activations' dtype,
// the input of the next branch's BF16 matmuls (the same tensor when the dtypes agree).
struct StreamGrad {
  Tensor master, act;
};

// A LayerNorm's backward from its saved statistics: dx returned, the weight and bias
// gradients added to dw and db. dy may be in the activations' dtype (the gradient of the
// rounded y the next matmul read, as autograd casts it back); it is widened as it is read.
// `residual` (undefined: none): the gradient the residual stream passes around the block,
// added to dx in the same pass (one kernel, not a separate add). With `act` other than x's
// dtype the same pass also writes dx rounded to `act` (the values of dx.to(act), without the
// cast's second pass over dx).
StreamGrad layer_norm_grad(const Tensor& dy, const Tensor& x, const LayerNormResult& saved, const Tensor& weight,
                           const Tensor& dw, const Tensor& db, const Tensor& residual, DType act) {
  Phase phase("layer_norm (bwd)");
  LayerNormBackwardOptions options{.residual = residual};
  if (act != x.dtype()) options.dx_cast = act;
  const LayerNormGrads g = layer_norm_backward(dy, x, saved.mean, saved.rstd, weight, options);
  dw.add_(g.dweight);
  db.add_(g.dbias);
  return {g.dx, options.dx_cast ? g.dx_cast : g.dx};
}

// Dropout of a training forward pass (cache with p > 0): the kept elements scaled by
// 1 / (1 - p), the mask stored in `keep` for the backward pass. Otherwise x itself.
Tensor dropout_of(const Tensor& x, const ForwardCache* cache, Tensor& keep) {
  if (cache == nullptr || cache->dropout <= 0) return x;
  Phase phase("dropout");
  nn::DropoutResult r = nn::dropout(x, cache->dropout, cache->dropout_generator);
  keep = std::move(r.mask);
  return std::move(r.output);
}

// A residual update x + dropout(linear(a, w, b)) in the master dtype. Without dropout, one
// GEMM: nn::linear's residual option reads x as cuBLASLt's C and writes the new stream (F32)
// directly, with the master (F32) bias in the epilogue; the product is rounded once, to F32,
// where autocast rounds it to the activations' dtype, casts and adds (three passes over the
// stream). With dropout the branch is formed, rounded, dropped out and added as autocast does
// (`cast_bias`: the bias in the activations' dtype).
Tensor residual_linear(const Tensor& x, const Tensor& a, const Tensor& w, const Tensor& master_bias,
                       const Tensor& cast_bias, DType master, MatmulCompute compute, const ForwardCache* cache,
                       Tensor& keep) {
  if (cache == nullptr || cache->dropout <= 0) {
    Phase phase("matmul");
    return nn::linear(a, w, master_bias, {.out_dtype = master, .compute = compute, .residual = x});
  }
  const Tensor branch = cast_to(dropout_of(linear(a, w, cast_bias, compute), cache, keep), master);
  Phase phase("residual add");
  return x + branch;
}

// The gradient through dropout_of: grad where the element was kept (scaled), 0 elsewhere.
Tensor dropout_grad(const Tensor& grad, const ForwardCache& cache, const Tensor& keep) {
  if (cache.dropout <= 0) return grad;
  Phase phase("dropout (bwd)");
  return nn::dropout_backward(grad, keep, cache.dropout);
}

// The gradients of linear(): dx returned (dy's dtype), dw and db added to the gradient
// tensors. Both parameter gradients are accumulated into the F32 gradients by the GEMM itself
// (beta = 1, F32 output): dw += dyᵀ x, and db += dyᵀ 1 (`ones`: N ones in dy's dtype), a
// matrix-vector product reading dy once. One launch each, no product in dy's dtype, no cast,
// no separate add. PyTorch under autocast rounds both to BF16 before adding them to the F32
// gradients; here they are rounded once, to F32.
Tensor linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, const Tensor& dw, const Tensor& db,
                       const Tensor& ones, MatmulCompute compute) {
  {
    Phase phase("matmul (bwd)");
    matmul_out(dw, dy, x, 1.0, 1.0, {.transpose_a = true, .out_dtype = dw.dtype(), .compute = compute});  // [out, in]
  }
  {
    Phase phase("bias grad");
    matmul_out(db, dy, ones, 1.0, 1.0, {.transpose_a = true, .out_dtype = db.dtype(), .compute = compute});  // [out]
  }
  Phase phase("matmul (bwd)");
  return matmul(dy, w, {.compute = compute});  // [N, in]
}

// A reproducible normal stream: splitmix64 into Box-Muller.
class HostNormal {
 public:
  explicit HostNormal(std::uint64_t seed) : state_(seed) {}
  double next() {
    const double u1 = (static_cast<double>(bits() >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
    const double u2 = static_cast<double>(bits() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  std::uint64_t bits() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

Tensor normal(HostNormal& rng, Shape shape, double stddev, DType dtype, Device device) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (double& value : values) value = rng.next() * stddev;
  return from_vector(values, std::move(shape)).to(dtype).to(device);
}

}  // namespace

Precision precision_of(DType weights, MatmulCompute compute) {
  switch (compute) {
    case MatmulCompute::BF16: return {DType::BF16, MatmulCompute::Default};
    case MatmulCompute::F16: return {DType::F16, MatmulCompute::Default};
    default: return {weights, compute};
  }
}

std::vector<std::pair<std::string, Tensor*>> Weights::named() {
  std::vector<std::pair<std::string, Tensor*>> out = {{"wte.weight", &wte}, {"wpe.weight", &wpe}};
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    BlockWeights& b = blocks[i];
    const std::string p = "h." + std::to_string(i) + ".";
    out.insert(out.end(), {{p + "ln_1.weight", &b.ln1_w},
                           {p + "ln_1.bias", &b.ln1_b},
                           {p + "attn.c_attn.weight", &b.attn_w},
                           {p + "attn.c_attn.bias", &b.attn_b},
                           {p + "attn.c_proj.weight", &b.proj_w},
                           {p + "attn.c_proj.bias", &b.proj_b},
                           {p + "ln_2.weight", &b.ln2_w},
                           {p + "ln_2.bias", &b.ln2_b},
                           {p + "mlp.c_fc.weight", &b.fc_w},
                           {p + "mlp.c_fc.bias", &b.fc_b},
                           {p + "mlp.c_proj.weight", &b.out_w},
                           {p + "mlp.c_proj.bias", &b.out_b}});
  }
  out.insert(out.end(), {{"ln_f.weight", &lnf_w}, {"ln_f.bias", &lnf_b}});
  return out;
}

std::vector<std::pair<std::string, const Tensor*>> Weights::named() const {
  std::vector<std::pair<std::string, const Tensor*>> out;
  for (const auto& [name, tensor] : const_cast<Weights*>(this)->named()) out.emplace_back(name, tensor);
  return out;
}

namespace {

// The parameters' shapes, each tensor made by make(shape, init_stddev) (stddev 0 for biases,
// -1 for LayerNorm gains).
template <class Make>
Weights build_weights(const ModelConfig& config, Make&& make) {
  FERRITE_CHECK(config.n_embd % config.n_head == 0, InvalidArgument, "gpt: width ", config.n_embd,
                " is not a multiple of the head count ", config.n_head);
  const std::int64_t c = config.n_embd;
  const double std_dev = 0.02;
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config.n_layer));
  Weights w;
  w.wte = make(Shape{config.vocab, c}, std_dev);
  w.wpe = make(Shape{config.context, c}, std_dev);
  for (std::int64_t i = 0; i < config.n_layer; ++i) {
    BlockWeights b;
    b.ln1_w = make(Shape{c}, -1.0);
    b.ln1_b = make(Shape{c}, 0.0);
    b.attn_w = make(Shape{3 * c, c}, std_dev);
    b.attn_b = make(Shape{3 * c}, 0.0);
    b.proj_w = make(Shape{c, c}, residual_std);
    b.proj_b = make(Shape{c}, 0.0);
    b.ln2_w = make(Shape{c}, -1.0);
    b.ln2_b = make(Shape{c}, 0.0);
    b.fc_w = make(Shape{4 * c, c}, std_dev);
    b.fc_b = make(Shape{4 * c}, 0.0);
    b.out_w = make(Shape{c, 4 * c}, residual_std);
    b.out_b = make(Shape{c}, 0.0);
    w.blocks.push_back(std::move(b));
  }
  w.lnf_w = make(Shape{c}, -1.0);
  w.lnf_b = make(Shape{c}, 0.0);
  return w;
}

}  // namespace

Weights init_weights(const ModelConfig& config, std::uint64_t seed, DType dtype, Device device) {
  HostNormal rng(seed);
  return build_weights(config, [&](Shape shape, double stddev) {
    if (stddev < 0) return ones(shape, dtype, device);
    if (stddev == 0) return zeros(shape, dtype, device);
    return normal(rng, std::move(shape), stddev, dtype, device);
  });
}

Weights zero_weights(const ModelConfig& config, DType dtype, Device device) {
  return build_weights(config, [&](Shape shape, double) { return zeros(std::move(shape), dtype, device); });
}

Weights zeros_like(const Weights& weights) {
  Weights out = weights;  // same structure; every tensor replaced below
  for (auto& [name, tensor] : out.named()) *tensor = ferrite::zeros_like(*tensor);
  return out;
}

Weights zeros_like_flat(const Weights& weights, Tensor& flat) {
  constexpr std::int64_t kAlignBytes = 256;
  const Tensor& first = weights.wte;
  const std::int64_t align = kAlignBytes / static_cast<std::int64_t>(dtype_size(first.dtype()));
  auto padded = [&](std::int64_t n) { return (n + align - 1) / align * align; };
  Weights out = weights;  // same structure; every tensor replaced below
  std::int64_t total = 0;
  for (const auto& [name, tensor] : weights.named()) total += padded(tensor->numel());
  flat = zeros({total}, first.dtype(), first.device());
  std::int64_t offset = 0;
  for (auto& [name, tensor] : out.named()) {
    *tensor = flat.narrow(0, offset, tensor->numel()).view(tensor->shape());
    offset += padded(tensor->numel());
  }
  out.flat = flat;
  return out;
}

Weights flatten(const Weights& weights) {
  Tensor flat;
  Weights out = zeros_like_flat(weights, flat);
  const auto from = weights.named();
  const auto to = out.named();
  for (std::size_t i = 0; i < from.size(); ++i) to[i].second->copy_(*from[i].second);
  return out;
}

namespace {

// The weights the matmuls read, in the activations' dtype (autocast's casts, made once per
// forward pass and kept for the backward pass, as autocast keeps them). The LayerNorm
// parameters and the position table are not matmul operands: they stay the master copies.
// In F32 every to() returns the tensor itself: no copy.
Weights matmul_weights(const Weights& weights, DType act) {
  Weights out = weights;
  if (weights.flat.defined() && weights.flat.dtype() != act) {
    // Master weights in one buffer: one cast of all of it (the LayerNorm parameters and the
    // position table too, a few MB), each matmul weight a view of the result at its offset.
    const Tensor cast = weights.flat.to(act);
    const std::int64_t base = weights.flat.storage_offset();
    auto view_of = [&](const Tensor& master) {
      return cast.narrow(0, master.storage_offset() - base, master.numel()).view(master.shape());
    };
    out.wte = view_of(weights.wte);
    for (std::size_t i = 0; i < out.blocks.size(); ++i) {
      const BlockWeights& w = weights.blocks[i];
      BlockWeights& b = out.blocks[i];
      b.attn_w = view_of(w.attn_w), b.attn_b = view_of(w.attn_b), b.proj_w = view_of(w.proj_w);
      b.proj_b = view_of(w.proj_b), b.fc_w = view_of(w.fc_w), b.fc_b = view_of(w.fc_b);
      b.out_w = view_of(w.out_w), b.out_b = view_of(w.out_b);
    }
    out.flat = cast;
    return out;
  }
  out.wte = weights.wte.to(act);
  for (BlockWeights& b : out.blocks) {
    for (Tensor* t : {&b.attn_w, &b.attn_b, &b.proj_w, &b.proj_b, &b.fc_w, &b.fc_b, &b.out_w, &b.out_b})
      *t = t->to(act);
  }
  return out;
}

}  // namespace

Tensor forward(const Weights& weights, const ModelConfig& config, const Tensor& idx, ForwardCache* cache,
               MatmulCompute compute) {
  const std::int64_t b = idx.size(0), t = idx.size(1), c = config.n_embd;
  FERRITE_CHECK(t <= config.context, InvalidArgument, "gpt: ", t, " tokens exceed the context of ", config.context);
  const DType master = weights.wte.dtype();
  const Precision p = precision_of(master, compute);
  Weights mw;
  {
    Phase phase("cast");
    mw = matmul_weights(weights, p.act);
  }
  Tensor x;
  {
    Phase phase("embedding");
    const Tensor positions = arange(t, DType::I64, idx.device());
    // [B, T, C] + [T, C] broadcast, then the residual stream as [N, C], in the master dtype.
    x = (nn::embedding(weights.wte, idx) + nn::embedding(weights.wpe, positions)).view({b * t, c});
  }
  Tensor embd_keep;
  x = dropout_of(x, cache, embd_keep);
  if (cache) {
    cache->compute = compute;
    cache->idx = idx;
    cache->blocks.assign(weights.blocks.size(), {});
    cache->embd_keep = embd_keep;
  }
  for (std::size_t i = 0; i < weights.blocks.size(); ++i) {
    const BlockWeights& w = weights.blocks[i];
    const BlockWeights& m = mw.blocks[i];
    BlockCache local;
    BlockCache& bc = cache ? cache->blocks[i] : local;
    bc.x = x;
    // LayerNorm computes in the master dtype (autocast runs layer_norm in F32) and writes its
    // output rounded to the activations' dtype, the next linear layer's input: the same
    // values as layer_norm(x).y.to(act), without the F32 y and the cast's pass over it.
    {
      Phase phase("layer_norm");
      bc.ln1 = layer_norm(x, w.ln1_w, w.ln1_b, kLayerNormEps, {.out_dtype = p.act});
    }
    const Tensor qkv = linear(bc.ln1.y, m.attn_w, m.attn_b, p.compute).view({b, t, 3 * c});
    bc.attn_y = causal_attention(qkv, config.n_head, bc.attn).view({b * t, c});
    bc.x_mid = residual_linear(x, bc.attn_y, m.proj_w, w.proj_b, m.proj_b, master, p.compute, cache, bc.attn_keep);
    {
      Phase phase("layer_norm");
      bc.ln2 = layer_norm(bc.x_mid, w.ln2_w, w.ln2_b, kLayerNormEps, {.out_dtype = p.act});
    }
    bc.fc = linear(bc.ln2.y, m.fc_w, m.fc_b, p.compute);
    {
      Phase phase("gelu");
      bc.fc_act = gelu(bc.fc, kGelu);
    }
    x = residual_linear(bc.x_mid, bc.fc_act, m.out_w, w.out_b, m.out_b, master, p.compute, cache, bc.mlp_keep);
  }
  LayerNormResult lnf;
  {
    Phase phase("layer_norm");
    lnf = layer_norm(x, weights.lnf_w, weights.lnf_b, kLayerNormEps, {.out_dtype = p.act});
  }
  // Tied head: [N, vocab] in the activations' dtype. Autocast's recipe casts BF16 logits to
  // F32 for the loss (logits.float()); the fused loss reads them as they are and accumulates
  // in F32, which is the same arithmetic (the cast is exact) without an F32 copy of the
  // largest activation (3.3 GB for gpt2-small's [16384, 50304]) and its cast passes.
  Tensor logits;
  {
    Phase phase("head matmul");
    logits = matmul(lnf.y, mw.wte, {.transpose_b = true, .compute = p.compute});
  }
  if (cache) {
    cache->matmul_weights = mw;
    cache->x_final = x;
    cache->lnf = std::move(lnf);
  }
  return logits;
}

Tensor forward_loss(const Weights& weights, const ModelConfig& config, const Tensor& idx, const Tensor& targets,
                    ForwardCache& cache, MatmulCompute compute) {
  const Tensor logits = forward(weights, config, idx, &cache, compute);
  Phase phase("loss");
  return cross_entropy(logits, targets.reshape({-1}), cache.loss);
}

void backward(const Weights& weights, const ModelConfig& config, const ForwardCache& cache, double loss_scale,
              Weights& grads) {
  Tensor dlogits;
  {
    Phase phase("loss (bwd)");
    dlogits = cross_entropy_backward(cache.loss, loss_scale);
  }
  backward_from_logits(weights, config, cache, dlogits, grads);
}

void backward_from_logits(const Weights& weights, const ModelConfig& config, const ForwardCache& cache,
                          const Tensor& dlogits, Weights& grads) {
  const std::int64_t b = cache.idx.size(0), t = cache.idx.size(1), c = config.n_embd;
  const DType master = weights.wte.dtype();
  const Precision p = precision_of(master, cache.compute);
  const Weights& mw = cache.matmul_weights;
  // Gradients of activations stored in p.act are rounded to it where they enter that part of
  // the graph (autograd casts a gradient to its input's dtype); LayerNorm's backward and the
  // residual stream stay in the master dtype (LayerNorm reads its p.act gradient widened, and
  // adds the residual stream's gradient in the same pass).
  const Tensor dlog = cast_to(dlogits, p.act);  // [N, vocab] (already p.act from the fused loss)
  const Tensor ones = ferrite::ones({b * t}, p.act, dlogits.device());  // for the bias gradients
  Tensor dlnf;
  {
    Phase phase("head matmul (bwd)");
    // logits = lnf.y wteᵀ: the head's share of the tied embedding's gradient.
    matmul_out(grads.wte, dlog, cache.lnf.y, 1.0, 1.0, {.transpose_a = true, .out_dtype = master, .compute = p.compute});
    dlnf = matmul(dlog, mw.wte, {.compute = p.compute});
  }
  // The gradient of the residual stream, [N, C].
  StreamGrad dx = layer_norm_grad(dlnf, cache.x_final, cache.lnf, weights.lnf_w, grads.lnf_w, grads.lnf_b, {}, p.act);
  for (std::size_t i = weights.blocks.size(); i-- > 0;) {
    const BlockWeights& w = weights.blocks[i];
    const BlockWeights& m = mw.blocks[i];
    BlockWeights& g = grads.blocks[i];
    const BlockCache& bc = cache.blocks[i];
    // x = x_mid + mlp(ln2(x_mid)): the residual passes dx through; the MLP adds its share.
    const Tensor dmlp = dropout_grad(dx.act, cache, bc.mlp_keep);
    const Tensor dact = linear_backward(dmlp, bc.fc_act, m.out_w, g.out_w, g.out_b, ones, p.compute);
    Tensor dfc;
    {
      Phase phase("gelu (bwd)");
      dfc = gelu_backward(dact, bc.fc, kGelu);
    }
    // dx_mid = dx (around the MLP) + the LayerNorm's share, in one pass.
    const Tensor dln2 = linear_backward(dfc, bc.ln2.y, m.fc_w, g.fc_w, g.fc_b, ones, p.compute);
    const StreamGrad dx_mid = layer_norm_grad(dln2, bc.x_mid, bc.ln2, w.ln2_w, g.ln2_w, g.ln2_b, dx.master, p.act);
    // x_mid = x + proj(attention(ln1(x))).
    const Tensor dproj = dropout_grad(dx_mid.act, cache, bc.attn_keep);
    const Tensor dattn_y = linear_backward(dproj, bc.attn_y, m.proj_w, g.proj_w, g.proj_b, ones, p.compute);
    const Tensor dqkv = causal_attention_backward(dattn_y.view({b, t, c}), bc.attn).view({b * t, 3 * c});
    const Tensor dln1 = linear_backward(dqkv, bc.ln1.y, m.attn_w, g.attn_w, g.attn_b, ones, p.compute);
    // Below block 0 the stream's gradient goes to the embeddings, in the master dtype only.
    dx = layer_norm_grad(dln1, bc.x, bc.ln1, w.ln1_w, g.ln1_w, g.ln1_b, dx_mid.master, i > 0 ? p.act : master);
  }
  // x = wte[idx] + wpe[positions]: rows of the token table receive their tokens' gradients,
  // each position's row the sum over the batch.
  const Tensor dembd = dropout_grad(dx.master, cache, cache.embd_keep);
  Phase phase("embedding (bwd)");
  grads.wte.add_(nn::embedding_backward(dembd.view({b, t, c}), cache.idx, config.vocab));
  grads.wpe.narrow(0, 0, t).add_(sum(dembd.view({b, t, c}), 0));
}

}  // namespace ferrite::gpt
