// The CPU backend's scaled dot-product attention: the reference the CUDA backend is compared
// with. Every dtype computes in double (inputs widened once, results rounded once). Scores are
// formed one block of keys (or queries, in the key-side backward) at a time with an online
// softmax, so memory stays O(B·H·S·D) as on the GPU. Rows are independent: OpenMP over them;
// dk/dv are owned by one key/value head per thread and summed in a fixed order (deterministic).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/dtype_dispatch.hpp"
#include "core/host_scratch.hpp"
#include "core/random_elements.hpp"
#include "cpu/cpu_families.hpp"
#include "ferrite/backend_families/attention_ops.hpp"

namespace ferrite::cpu {
namespace {

constexpr std::int64_t kBlock = 64;  // keys (or queries) whose scores exist at once
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// std::max(m, NaN) keeps m, so a NaN score would be skipped and a row of NaN scores taken for a
// fully masked one (out 0); PyTorch's softmax gives NaN there. This max propagates NaN.
double nan_max(double a, double b) { return std::isnan(b) ? b : std::max(a, b); }

constexpr const char* kOp = "scaled_dot_product_attention";

// Every copy in double goes through host_scratch: the copies are twice to four times the
// size of the tensors, so a problem whose tensors fit can still run out of host memory, and
// that must be Error(OutOfMemory), not a std::bad_alloc leaving the library.
std::vector<double> scratch(std::int64_t n) { return detail::host_scratch<double>(n, kOp); }

std::vector<double> widen(const Buffer& b) {
  std::vector<double> out = scratch(b.numel());
  detail::visit_dtype(b.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> ||
                  std::is_same_v<T, BFloat16>) {
      const T* p = static_cast<const T*>(b.data());
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(static_cast<float>(p[i]));
      if constexpr (std::is_same_v<T, double>)
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = p[i];
    } else if constexpr (std::is_same_v<T, bool>) {
      const bool* p = static_cast<const bool*>(b.data());
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = p[i] ? 0.0 : kNegInf;  // Bool mask -> additive
    }
  });
  return out;
}

void narrow(const std::vector<double>& v, const Buffer& b) {
  detail::visit_dtype(b.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> ||
                  std::is_same_v<T, BFloat16>) {
      T* p = static_cast<T*>(b.data());
      for (std::size_t i = 0; i < v.size(); ++i) p[i] = T(v[i]);
    }
  });
}

// Shared view of one problem: widened tensors and index helpers.
struct Problem {
  const AttentionDesc& d;
  std::vector<double> q, k, v, mask;

  const double* q_row(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return q.data() + ((b * d.heads_q + h) * d.seq_q + i) * d.head_dim;
  }
  const double* k_row(std::int64_t b, std::int64_t hk, std::int64_t j) const {
    return k.data() + ((b * d.heads_kv + hk) * d.seq_k + j) * d.head_dim;
  }
  const double* v_row(std::int64_t b, std::int64_t hk, std::int64_t j) const {
    return v.data() + ((b * d.heads_kv + hk) * d.seq_k + j) * d.value_dim;
  }
  // The scaled, masked score of query i (head h) against key j.
  double score(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
    if (d.causal && j > i) return kNegInf;
    const double* qi = q_row(b, h, i);
    const double* kj = k_row(b, h / d.group(), j);
    double s = 0;
    for (std::int64_t c = 0; c < d.head_dim; ++c) s += qi[c] * kj[c];
    s *= d.scale;
    if (d.mask != AttentionMaskKind::None) {
      const auto& st = d.mask_strides;
      s += mask[static_cast<std::size_t>(b * st[0] + h * st[1] + i * st[2] + j * st[3])];
    }
    return s;
  }
};

// What attention weight (b, h, i, j) is multiplied by after the softmax: 1 without dropout;
// with it, d.dropout_scale where nn::dropout would keep element (b, h, i, j) of a [B, Hq, Sq,
// Sk] tensor at the same draw, 0 where it would drop it (AttentionDesc::dropout_threshold).
double dropout_factor(const AttentionDesc& d, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  if (!d.has_dropout()) return 1.0;
  const auto e = static_cast<std::uint64_t>(((b * d.heads_q + h) * d.seq_q + i) * d.seq_k + j);
  return detail::philox::dropout_keeps_element(d.dropout_seed, d.dropout_offset, e, d.dropout_threshold)
             ? d.dropout_scale
             : 0.0;
}

class CpuAttentionOps final : public AttentionOps {
 public:
  bool supports(DType dtype) const override {
    return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 || dtype == DType::BF16;
  }

  void forward(const AttentionDesc& d, const Buffer& q, const Buffer& k, const Buffer& v, const Buffer& mask,
               const Buffer& out, const Buffer& logsumexp) override {
    Problem p{d, widen(q), widen(k), widen(v), d.mask == AttentionMaskKind::None ? std::vector<double>{} : widen(mask)};
    std::vector<double> o = scratch(out.numel()), lse = scratch(logsumexp.numel());
    const std::int64_t rows = d.batch * d.heads_q * d.seq_q;
#pragma omp parallel for schedule(dynamic, 16)
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = r % d.seq_q, h = (r / d.seq_q) % d.heads_q, b = r / (d.seq_q * d.heads_q);
      double* acc = o.data() + r * d.value_dim;
      double m = kNegInf, l = 0, s[kBlock];
      for (std::int64_t j0 = 0; j0 < d.seq_k; j0 += kBlock) {
        const std::int64_t n = std::min(kBlock, d.seq_k - j0);
        double block_max = kNegInf;
        for (std::int64_t t = 0; t < n; ++t) block_max = nan_max(block_max, s[t] = p.score(b, h, i, j0 + t));
        const double m_new = nan_max(m, block_max);
        if (m_new == kNegInf) continue;  // everything so far is masked
        const double alpha = std::exp(m - m_new);
        l *= alpha;
        for (std::int64_t c = 0; c < d.value_dim; ++c) acc[c] *= alpha;
        for (std::int64_t t = 0; t < n; ++t) {
          const double w = std::exp(s[t] - m_new);
          l += w;  // the softmax's sum: dropout comes after it
          const double kept = w * dropout_factor(d, b, h, i, j0 + t);
          const double* vj = p.v_row(b, h / d.group(), j0 + t);
          for (std::int64_t c = 0; c < d.value_dim; ++c) acc[c] += kept * vj[c];
        }
        m = m_new;
      }
      // A fully masked row (l == 0) keeps acc = 0 and gets logsumexp -inf. A NaN score makes
      // m, l and acc NaN (as softmax's NaN in PyTorch): the row's out and logsumexp are NaN,
      // not taken for a masked row (l > 0 is false for NaN too, hence the test for 0).
      for (std::int64_t c = 0; c < d.value_dim; ++c) acc[c] = l == 0 ? 0.0 : acc[c] / l;
      lse[static_cast<std::size_t>(r)] = l == 0 ? kNegInf : m + std::log(l);
    }
    narrow(o, out);
    narrow(lse, logsumexp);
  }

  void backward(const AttentionDesc& d, const Buffer& grad_out, const Buffer& q, const Buffer& k, const Buffer& v,
                const Buffer& out, const Buffer& logsumexp, const Buffer& mask, const Buffer& dq, const Buffer& dk,
                const Buffer& dv) override {
    Problem p{d, widen(q), widen(k), widen(v), d.mask == AttentionMaskKind::None ? std::vector<double>{} : widen(mask)};
    const std::vector<double> go = widen(grad_out), o = widen(out), lse = widen(logsumexp);
    const std::int64_t rows = d.batch * d.heads_q * d.seq_q;
    // delta_i = dO_i . O_i, the row term of softmax's backward.
    std::vector<double> delta = scratch(rows);
    for (std::int64_t r = 0; r < rows; ++r) {
      double s = 0;
      for (std::int64_t c = 0; c < d.value_dim; ++c) s += go[r * d.value_dim + c] * o[r * d.value_dim + c];
      delta[static_cast<std::size_t>(r)] = s;
    }
    // P_ij = exp(s_ij - lse_i) (0 for a masked score or a fully masked row), Z_ij its dropout
    // factor (out_i = sum_j P_ij Z_ij v_j); kept = P_ij Z_ij (dv's weight);
    // dS_ij = P_ij (Z_ij dO_i . v_j - delta_i), delta_i = dO_i . out_i as without dropout.
    auto prob_and_ds = [&](std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j, double& prob, double& kept,
                           double& ds) {
      const std::int64_t r = (b * d.heads_q + h) * d.seq_q + i;
      const double l = lse[static_cast<std::size_t>(r)];
      const double s = l == kNegInf ? kNegInf : p.score(b, h, i, j);
      prob = s == kNegInf ? 0.0 : std::exp(s - l);
      if (prob == 0) {
        kept = ds = 0;
        return;
      }
      const double z = dropout_factor(d, b, h, i, j);
      const double* g = go.data() + r * d.value_dim;
      const double* vj = p.v_row(b, h / d.group(), j);
      double dp = 0;
      for (std::int64_t c = 0; c < d.value_dim; ++c) dp += g[c] * vj[c];
      kept = prob * z;
      ds = prob * (dp * z - delta[static_cast<std::size_t>(r)]);
    };
    std::vector<double> gq = scratch(dq.numel());
#pragma omp parallel for schedule(dynamic, 16)
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = r % d.seq_q, h = (r / d.seq_q) % d.heads_q, b = r / (d.seq_q * d.heads_q);
      double* acc = gq.data() + r * d.head_dim;
      for (std::int64_t j = 0; j < d.seq_k; ++j) {
        double prob, kept, ds;
        prob_and_ds(b, h, i, j, prob, kept, ds);
        if (ds == 0) continue;
        const double* kj = p.k_row(b, h / d.group(), j);
        for (std::int64_t c = 0; c < d.head_dim; ++c) acc[c] += d.scale * ds * kj[c];
      }
    }
    narrow(gq, dq);
    std::vector<double> gk = scratch(dk.numel()), gv = scratch(dv.numel());
    const std::int64_t key_rows = d.batch * d.heads_kv * d.seq_k;
#pragma omp parallel for schedule(dynamic, 16)
    for (std::int64_t r = 0; r < key_rows; ++r) {
      const std::int64_t j = r % d.seq_k, hk = (r / d.seq_k) % d.heads_kv, b = r / (d.seq_k * d.heads_kv);
      double* ak = gk.data() + r * d.head_dim;
      double* av = gv.data() + r * d.value_dim;
      for (std::int64_t h = hk * d.group(); h < (hk + 1) * d.group(); ++h) {
        for (std::int64_t i = 0; i < d.seq_q; ++i) {
          double prob, kept, ds;
          prob_and_ds(b, h, i, j, prob, kept, ds);
          if (prob == 0) continue;
          const double* g = go.data() + ((b * d.heads_q + h) * d.seq_q + i) * d.value_dim;
          for (std::int64_t c = 0; c < d.value_dim; ++c) av[c] += kept * g[c];
          const double* qi = p.q_row(b, h, i);
          for (std::int64_t c = 0; c < d.head_dim; ++c) ak[c] += d.scale * ds * qi[c];
        }
      }
    }
    narrow(gk, dk);
    narrow(gv, dv);
  }
};

}  // namespace

std::unique_ptr<AttentionOps> make_cpu_attention_ops() { return std::make_unique<CpuAttentionOps>(); }

}  // namespace ferrite::cpu
