// The backend interface of scaled dot-product attention (ferrite/nn.hpp). A backend hands it
// out through Backend::attention_ops(); each backend implements it in its own files
// (src/cpu/attention/, src/cuda/attention/). Like Backend, it receives validated Buffers from
// the front end and may only assert: dense row-major ones, except that q, k, v (and in the
// backward out and grad_out) may be views read through their strides, and the outputs (the
// forward's out, the backward's dq, dk, dv) views written through theirs, when the backend
// said it takes them (AttentionOps::reads_views).
#pragma once

#include <array>
#include <cstdint>

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"

namespace ferrite {

enum class AttentionMaskKind : std::uint8_t { None, Bool, Additive };

/// Element strides of one 4-D attention operand over its dims [batch, heads, seq, head dim].
using AttentionStrides = std::array<std::int64_t, 4>;

/// The row-major strides of [n0, n1, n2, n3].
constexpr AttentionStrides dense_attention_strides(std::int64_t n1, std::int64_t n2, std::int64_t n3) {
  return {n1 * n2 * n3, n2 * n3, n3, 1};
}

/// One attention problem. q [batch, heads_q, seq_q, head_dim], k [batch, heads_kv, seq_k,
/// head_dim], v [batch, heads_kv, seq_k, value_dim], out [batch, heads_q, seq_q, value_dim],
/// logsumexp [batch, heads_q, seq_q] (F32, or F64 for F64 inputs); query head h reads key/value
/// head h / (heads_q / heads_kv). Score s_ij = scale * q_i . k_j (+ mask), -inf where masked
/// (a false Bool mask element, or j > i under `causal`). A row whose every score is -inf has
/// out = 0, logsumexp = -inf and zero gradients.
struct AttentionDesc {
  DType dtype = DType::F32;  // of q, k, v, out and the gradients
  std::int64_t batch = 0, heads_q = 0, heads_kv = 0, seq_q = 0, seq_k = 0, head_dim = 0, value_dim = 0;
  bool causal = false;
  /// Whether the backward must repeat bit for bit (AttentionOptions::deterministic).
  bool deterministic = true;
  double scale = 1;
  AttentionMaskKind mask = AttentionMaskKind::None;
  /// Element strides of the mask over [batch, heads_q, seq_q, seq_k]; 0 where broadcast.
  std::array<std::int64_t, 4> mask_strides{};
  /// Element strides of q, k, v, out (written by the forward, read by the backward),
  /// grad_out and the backward's dq, dk, dv, relative to each Buffer's data(). Row-major
  /// unless the front end passes views (AttentionOps::reads_views): then the head-dim stride
  /// is 1, every other stride of a dim longer than 1 is a positive multiple of 16 bytes (a
  /// dim of extent 1 has its row-major stride over the inner dims' strides), and each view's
  /// first element is 16-byte aligned. An output view addresses each element once. The
  /// forward ignores grad_out_strides and the gradients' strides.
  AttentionStrides q_strides{}, k_strides{}, v_strides{}, out_strides{}, grad_out_strides{};
  AttentionStrides dq_strides{}, dk_strides{}, dv_strides{};
  /// Dropout on the attention weights (AttentionOptions::dropout_p): weight (b, h, i, j), with
  /// e = ((b·heads_q + h)·seq_q + i)·seq_k + j its row-major index, is kept iff
  /// detail::philox::dropout_keep(word e % 4 of group_words(dropout_seed, dropout_offset, e / 4),
  /// dropout_threshold) (nn::dropout's decision for element e), and kept weights are multiplied
  /// by dropout_scale. dropout_threshold 0: no dropout.
  std::uint64_t dropout_seed = 0, dropout_offset = 0;
  std::uint32_t dropout_threshold = 0;
  double dropout_scale = 1;

  bool has_dropout() const { return dropout_threshold != 0; }
  std::int64_t group() const { return heads_kv > 0 ? heads_q / heads_kv : 1; }
  /// Every operand's strides row-major for the sizes above (what dense() checks).
  void set_row_major_strides() {
    q_strides = dq_strides = dense_attention_strides(heads_q, seq_q, head_dim);
    k_strides = dk_strides = dense_attention_strides(heads_kv, seq_k, head_dim);
    v_strides = dv_strides = dense_attention_strides(heads_kv, seq_k, value_dim);
    out_strides = grad_out_strides = dense_attention_strides(heads_q, seq_q, value_dim);
  }
  /// Whether every operand's strides are the row-major ones.
  bool dense() const {
    return q_strides == dense_attention_strides(heads_q, seq_q, head_dim) &&
           k_strides == dense_attention_strides(heads_kv, seq_k, head_dim) &&
           v_strides == dense_attention_strides(heads_kv, seq_k, value_dim) &&
           out_strides == dense_attention_strides(heads_q, seq_q, value_dim) &&
           grad_out_strides == dense_attention_strides(heads_q, seq_q, value_dim) &&
           dq_strides == dense_attention_strides(heads_q, seq_q, head_dim) &&
           dk_strides == dense_attention_strides(heads_kv, seq_k, head_dim) &&
           dv_strides == dense_attention_strides(heads_kv, seq_k, value_dim);
  }
};

class AttentionOps {
 public:
  virtual ~AttentionOps() = default;
  /// Whether attention runs for inputs of `dtype` on this backend.
  virtual bool supports(DType dtype) const = 0;
  /// Whether forward (backward: false/true) reads its inputs and writes its outputs through
  /// desc's strides as given, on `device`. The front end asks only when some operand is a
  /// view (desc.dense() is false); on false it asks again with dense outputs (when it had
  /// asked for output views), then makes every view dense (Tensor::buffer) and passes
  /// row-major strides. A backend that says true must run that call without copying the
  /// views. Default: never.
  virtual bool reads_views(const AttentionDesc& desc, bool backward, Device device) {
    (void)desc;
    (void)backward;
    (void)device;
    return false;
  }
  /// out and logsumexp from q, k, v (mask is an empty Buffer when desc.mask is None).
  virtual void forward(const AttentionDesc& desc, const Buffer& q, const Buffer& k, const Buffer& v,
                       const Buffer& mask, const Buffer& out, const Buffer& logsumexp) = 0;
  /// dq, dk, dv (dk/dv summed over the query heads sharing a key/value head), deterministic.
  virtual void backward(const AttentionDesc& desc, const Buffer& grad_out, const Buffer& q, const Buffer& k,
                        const Buffer& v, const Buffer& out, const Buffer& logsumexp, const Buffer& mask,
                        const Buffer& dq, const Buffer& dk, const Buffer& dv) = 0;
};

}  // namespace ferrite
