// The GPT model: parameters, forward pass (keeping what the backward pass needs) and the
// hand-written backward pass. Linear weights are stored [out, in] as torch.nn.Linear does, so
// a checkpoint loads into the PyTorch model of examples/gpt/torch_reference.py unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "examples/gpt/attention.hpp"
#include "examples/gpt/config.hpp"
#include "examples/gpt/loss.hpp"
#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

struct BlockWeights {
  Tensor ln1_w, ln1_b;    // [C]
  Tensor attn_w, attn_b;  // [3C, C], [3C]
  Tensor proj_w, proj_b;  // [C, C], [C]
  Tensor ln2_w, ln2_b;    // [C]
  Tensor fc_w, fc_b;      // [4C, C], [4C]
  Tensor out_w, out_b;    // [C, 4C], [C]
};

/// The parameters, or (same layout) their gradients or an optimizer moment.
struct Weights {
  Tensor wte;  // [vocab, C], also the LM head
  Tensor wpe;  // [context, C]
  std::vector<BlockWeights> blocks;
  Tensor lnf_w, lnf_b;  // [C]
  /// The one buffer every tensor above is a view of (zeros_like_flat, flatten), or undefined.
  Tensor flat;

  /// Every tensor with its checkpoint name (GPT-2's: "h.0.attn.c_attn.weight", ...), in a
  /// fixed order. The pointers stay valid while this object lives and is not resized.
  std::vector<std::pair<std::string, Tensor*>> named();
  std::vector<std::pair<std::string, const Tensor*>> named() const;
};

/// GPT-2's initialisation from `seed`: normal(0, 0.02) matrices and embeddings, the residual
/// projections scaled by 1 / sqrt(2 * layers), zero biases, unit LayerNorm gains. Drawn on
/// the host (a reproducible stream) and copied to `device` once.
Weights init_weights(const ModelConfig& config, std::uint64_t seed, DType dtype, Device device);
/// Zeros of every parameter's shape for `config` (to be filled from a checkpoint).
Weights zero_weights(const ModelConfig& config, DType dtype, Device device);
/// Zeros of every parameter's shape (gradients, optimizer moments).
Weights zeros_like(const Weights& weights);
/// Zero tensors shaped as `weights`, all views of one buffer (returned in `flat`; each view
/// starts on a 256-byte boundary, the gaps between them stay zero): the gradients, so that
/// zeroing, the global norm and clipping are one launch each rather than one per tensor.
Weights zeros_like_flat(const Weights& weights, Tensor& flat);
/// The same values as `weights`, as views of one buffer laid out as zeros_like_flat's (kept
/// in the result's `flat`): the training loop's master weights, so that the forward pass
/// casts them to the activations' dtype in one launch instead of one per tensor.
Weights flatten(const Weights& weights);

/// The dtypes of a pass. With MatmulCompute::BF16 (--precision bf16) the model mirrors
/// PyTorch's autocast: linear layers read and write BF16 activations (BF16 copies of the
/// weights, F32 accumulation), GELU, attention and the logits are BF16 (the fused loss reads
/// BF16 logits with F32 accumulation, as cross_entropy(logits.float()) computes), while the
/// residual stream, LayerNorm and the loss stay in the master weights' dtype (F32). Otherwise
/// every activation has the weights' dtype and `compute` is passed to the matmuls.
struct Precision {
  DType act;              // linear layers' inputs and outputs, GELU, attention
  MatmulCompute compute;  // the matmuls' option (Default for BF16/F16 operands)
};
Precision precision_of(DType weights, MatmulCompute compute);

struct BlockCache {
  Tensor x;              // block input, [N, C], master dtype
  LayerNormResult ln1;   // y in the activations' dtype (the next linear layer's input)
  AttentionCache attn;
  Tensor attn_y;  // [N, C], activations' dtype
  Tensor x_mid;   // after the attention residual, master dtype
  LayerNormResult ln2;
  Tensor fc;      // pre-activation [N, 4C], activations' dtype
  Tensor fc_act;  // gelu(fc)
  Tensor attn_keep, mlp_keep;  // dropout masks of the two residual branches (Bool; with dropout)
};

struct ForwardCache {
  /// Dropout of the embeddings' sum and of each residual branch's output before it is added
  /// (GPT-2's embd_pdrop and resid_pdrop; the attention probabilities are not dropped: the
  /// fused attention has no dropout), drawn from `dropout_generator`. Set by the caller before
  /// forward(); p = 0 (the default) draws nothing.
  double dropout = 0;
  random::Generator* dropout_generator = nullptr;
  Tensor embd_keep;  // the embeddings' dropout mask (Bool; with dropout)
  MatmulCompute compute = MatmulCompute::Default;  // forward's, reused by backward
  Tensor idx;  // [B, T] I64
  Weights matmul_weights;  // the matrices and biases in the activations' dtype
  std::vector<BlockCache> blocks;
  Tensor x_final;
  LayerNormResult lnf;
  LossCache loss;
};

/// Logits [B * T, vocab] in the activations' dtype (Precision::act) for the tokens idx [B, T]
/// (T <= context). With
/// a cache, it keeps what backward() needs. `compute` is the precision: Default (the
/// weights' dtype), F32 (no TF32), or, for F32 weights, MatmulCompute::BF16 (see Precision).
Tensor forward(const Weights& weights, const ModelConfig& config, const Tensor& idx, ForwardCache* cache,
               MatmulCompute compute = MatmulCompute::Default);

/// forward() plus the mean cross-entropy against targets [B, T]: a 0-d tensor.
Tensor forward_loss(const Weights& weights, const ModelConfig& config, const Tensor& idx, const Tensor& targets,
                    ForwardCache& cache, MatmulCompute compute = MatmulCompute::Default);

/// Adds the gradients of (loss * loss_scale) to `grads` (the cache from forward_loss()).
void backward(const Weights& weights, const ModelConfig& config, const ForwardCache& cache, double loss_scale,
              Weights& grads);

/// Adds to `grads` the gradients of any function of the logits whose gradient with respect to
/// them is `dlogits` ([B * T, vocab]): backward() is cross_entropy_backward() then this.
void backward_from_logits(const Weights& weights, const ModelConfig& config, const ForwardCache& cache,
                          const Tensor& dlogits, Weights& grads);

}  // namespace ferrite::gpt
