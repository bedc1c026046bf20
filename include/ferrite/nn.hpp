// Neural-network ops (namespace ferrite::nn). Each op group has its own section or header
// (convolution, pooling and recurrent cells: nn_conv.hpp); validation happens in
// src/frontend/, backends receive checked Buffers.
#pragma once

#include "ferrite/nn_conv.hpp"

#include <optional>
#include <utility>

#include "ferrite/matmul.hpp"
#include "ferrite/random.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::nn {

// ---- linear (torch.nn.functional.linear, docs/families/matmul.md) --------------------------

/// linear's precision options, with matmul's meaning (ferrite/matmul.hpp).
struct LinearOptions {
  /// The result's dtype: the inputs' (default) or F32 for F16/BF16 inputs.
  std::optional<DType> out_dtype = std::nullopt;
  MatmulCompute compute = MatmulCompute::Default;
  /// A residual added to the result: y = residual + (x·weightᵀ + bias). Of the result's shape
  /// and dtype (so F32 with BF16 inputs and out_dtype F32: a transformer's F32 residual
  /// stream), on x's device, read once and never written (linear_out's out must not overlap
  /// it, unless out is the very same tensor: then the sum is accumulated in place). On CUDA it
  /// is cuBLASLt's C matrix (D = A·B + C + bias, with C and D distinct buffers), so the GEMM
  /// writes the new residual stream directly, where a separate cast and add would otherwise
  /// read and write it twice more; the product, bias and residual meet in the accumulation
  /// precision and are rounded once. Where the backend has no fused form (the CPU, F64,
  /// combinations cuBLASLt declines) the result starts as the residual, the bias is added to
  /// it, and the product is accumulated onto that (beta = 1): residual + bias is then rounded
  /// to the result's dtype first, a second rounding that matters only for F16/BF16 results.
  std::optional<Tensor> residual = std::nullopt;
};

/// torch.nn.functional.linear: y = x·weightᵀ + bias with x [..., in], weight [out, in] (a
/// Linear layer's layout, never transposed in memory) and bias [out], or none (nullopt or an
/// undefined Tensor) -> y [..., out]. x and weight share one dtype (F32, F64, F16, BF16; never
/// promoted) and device; the bias has x's dtype or the result's (an F32 bias with BF16 inputs
/// and out_dtype F32), on the same device. The bias is added to the product before its one rounding to
/// the result's dtype, as torch.addmm does (on CUDA inside the GEMM, through cuBLASLt's bias
/// epilogue, where cuBLASLt offers one).
Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              const LinearOptions& options = {});
/// linear into `out`, which must have linear's result shape, dtype and device and must not
/// overlap x, weight or bias, nor options.residual unless out is that very tensor (same
/// storage, offset, shape and strides: out += x·weightᵀ + bias). Returns out.
const Tensor& linear_out(const Tensor& out, const Tensor& x, const Tensor& weight,
                         const std::optional<Tensor>& bias = std::nullopt, const LinearOptions& options = {});

// ---- scaled dot-product attention (issue #16, docs/families/nn.md) -------------------------

struct AttentionOptions {
  /// Key j is hidden from query i when j > i (top-left aligned when seq_q != seq_k, as PyTorch).
  bool causal = false;
  /// Multiplies q . k; default 1 / sqrt(head_dim).
  std::optional<double> scale = std::nullopt;
  /// Bool (true = attend) or additive (the inputs' dtype, added to the scaled scores; -inf
  /// hides), broadcastable to [B, Hq, Sq, Sk]. May be combined with `causal`.
  std::optional<Tensor> mask = std::nullopt;
  /// The backward repeats bit for bit (the default). false lets the CUDA backend run cuDNN's
  /// fastest F16/BF16 backward, which accumulates dq with atomics in an order that varies
  /// between calls (PyTorch's default; on the H200 8-11% faster at D = 128, 35-53% at D = 64
  /// and 256); every other route (the own kernels, the CPU backend, the forward) is
  /// deterministic either way.
  bool deterministic = true;
  /// Dropout on the attention weights (PyTorch's dropout_p, in [0, 1]): each weight
  /// softmax(...)[b, h, i, j] is kept with probability 1 - dropout_p and then scaled by
  /// 1 / (1 - dropout_p) (all dropped at 1: out and the gradients 0). The logsumexp is that of
  /// the weights before dropout. Weight (b, h, i, j) is kept exactly when nn::dropout, drawing
  /// at the same generator state, keeps element (b, h, i, j) of a [B, Hq, Sq, Sk] tensor, on
  /// every backend and device (docs/families/random.md); the weights themselves are never
  /// stored. On CUDA a problem with dropout runs on the general kernels (not cuDNN's: its
  /// random stream is not ferrite's), which are slower.
  double dropout_p = 0;
  /// The forward's random stream when dropout_p > 0 (one draw a call); nullptr: the default
  /// generator of the inputs' device. Must be on that device.
  random::Generator* generator = nullptr;
  /// The backward's record of the forward's draw (AttentionResult::dropout_state): required
  /// when dropout_p > 0, so the backward drops exactly the weights the forward dropped.
  std::optional<random::RngState> dropout_state = std::nullopt;
};

struct AttentionResult {
  /// [B, Hq, Sq, Dv], the inputs' dtype; laid out in q's dim order where the backend writes
  /// that layout (cuDNN, for q a view such as a slice of a [B, S, 3, H, D] projection: then
  /// [B, Sq, Hq, Dv] in memory, as PyTorch's attention allocates it), else row-major.
  Tensor out;
  Tensor logsumexp;  ///< [B, Hq, Sq], F32 (F64 for F64 inputs); -inf for fully masked rows
  /// The generator state the dropout drew from (options.dropout_p > 0; else not drawn, {}):
  /// pass it to the backward as AttentionOptions::dropout_state.
  random::RngState dropout_state{};
};

/// softmax(scale * q kᵀ + mask) v without ever forming the score matrix. q [B, Hq, Sq, D],
/// k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv]; grouped-query attention when Hkv divides Hq. Dtypes
/// F32, F64, F16, BF16 (half types accumulate in F32). Fully masked rows give 0 (not NaN).
AttentionResult scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const AttentionOptions& options = {});

struct AttentionGrads {
  Tensor dq, dk, dv;
};

/// Gradients of scaled_dot_product_attention from its saved out and logsumexp; dk and dv are
/// summed over the query heads that share them. Deterministic (repeats bit for bit) unless
/// options.deterministic is false. Fully
/// masked rows contribute nothing. The mask gets no gradient.
AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& out, const Tensor& logsumexp,
                                                     const AttentionOptions& options = {});
/// The same gradients written into `grads` (dq, dk, dv defined, each of its input's shape and
/// dtype, on its device, any strides: e.g. the three slices of one [B, S, 3, H, D] gradient of
/// a fused q/k/v projection, which then needs no copy to assemble). Where the backend writes
/// such views (cuDNN) they are written in place; otherwise through a dense result and one
/// copy. The gradients must not overlap each other or the inputs. Returns grads.
const AttentionGrads& scaled_dot_product_attention_backward_out(const AttentionGrads& grads, const Tensor& grad_out,
                                                                const Tensor& q, const Tensor& k, const Tensor& v,
                                                                const Tensor& out, const Tensor& logsumexp,
                                                                const AttentionOptions& options = {});

}  // namespace ferrite::nn
