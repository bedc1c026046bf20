// The backend interface of scaled dot-product attention (ferrite/nn.hpp). A backend hands it
// out through Backend::attention_ops(); each backend implements it in its own files
// (src/cpu/attention/, src/cuda/attention/). Like Backend, it receives validated, dense
// row-major Buffers from the front end and may only assert.
#pragma once

#include <array>
#include <cstdint>

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"

namespace ferrite {

enum class AttentionMaskKind : std::uint8_t { None, Bool, Additive };

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
  double scale = 1;
  AttentionMaskKind mask = AttentionMaskKind::None;
  /// Element strides of the mask over [batch, heads_q, seq_q, seq_k]; 0 where broadcast.
  std::array<std::int64_t, 4> mask_strides{};

  std::int64_t group() const { return heads_kv > 0 ? heads_q / heads_kv : 1; }
};

class AttentionOps {
 public:
  virtual ~AttentionOps() = default;
  /// Whether attention runs for inputs of `dtype` on this backend.
  virtual bool supports(DType dtype) const = 0;
  /// out and logsumexp from q, k, v (mask is an empty Buffer when desc.mask is None).
  virtual void forward(const AttentionDesc& desc, const Buffer& q, const Buffer& k, const Buffer& v,
                       const Buffer& mask, const Buffer& out, const Buffer& logsumexp) = 0;
  /// dq, dk, dv (dk/dv summed over the query heads sharing a key/value head), deterministic.
  virtual void backward(const AttentionDesc& desc, const Buffer& grad_out, const Buffer& q, const Buffer& k,
                        const Buffer& v, const Buffer& out, const Buffer& logsumexp, const Buffer& mask,
                        const Buffer& dq, const Buffer& dk, const Buffer& dv) = 0;
};

}  // namespace ferrite
