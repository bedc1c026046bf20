// For the GPU tests of the tiled tensor-core attention backwards (attention_f32_tf32x3_test.cpp:
// 3xTF32 and 1xTF32; attention_half_mma_test.cpp: F16/BF16 in the dtype): the problem shape they
// loop over, its row-major AttentionDesc, its name in failure messages, the backward shapes the
// reduced-precision modes are held to, and inputs drawn as F16/BF16 values.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ferrite/backend_families/attention_ops.hpp"
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

/// F32 values that `half` (BF16 or F16) holds, so TF32 holds them too.
inline Tensor rounded_to(const Tensor& t, DType half) { return t.to(half).to(DType::F32); }

/// An F32 tensor of shape `s` on `device`, standard normal (`normal`) or uniform in [-1, 1),
/// rounded to `half`'s values.
inline Tensor half_values(Shape s, bool normal, DType half, Device device, random::Generator& generator) {
  Tensor t = empty(std::move(s), DType::F32, device);
  t = normal ? random::normal_(t, 0, 1, &generator) : random::uniform_(t, -1, 1, &generator);
  return rounded_to(t, half);
}

}  // namespace ferrite::attention_test
