// The register-blocked F32 attention kernels (src/cuda/attention/attention_f32_tiled.cu and
// attention_f32_tiled_bwd.cu; attention_kernels.cuh is an internal header: the routing
// predicates are not public API): which problems they take, and their results (forward and
// backward) against the general kernels on the same GPU at shapes beyond the conformance
// suite's (several row blocks, ragged 64-row tiles, causal with Sq > Sk and Sq < Sk, GQA).
#include <gtest/gtest.h>

#include <cstdint>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include "cuda/attention/attention_kernels.cuh"

namespace ferrite {
namespace {

namespace attention = cuda::attention;

AttentionDesc desc_of(DType dtype, std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t sq, std::int64_t sk,
                      std::int64_t d, std::int64_t dv) {
  AttentionDesc x;
  x.dtype = dtype;
  x.batch = b;
  x.heads_q = hq;
  x.heads_kv = hkv;
  x.seq_q = sq;
  x.seq_k = sk;
  x.head_dim = d;
  x.value_dim = dv;
  x.scale = 0.1;
  x.set_row_major_strides();
  return x;
}

// The routing predicate needs no device: it reads the problem and the pointers only.
TEST(TiledF32Attention, TakesUnmaskedF32WithHeadDims64And128Only) {
  alignas(16) static float storage[8];
  attention::Pointers p;
  p.q = p.k = p.v = p.result = storage;
  p.logsumexp = storage;
  for (const std::int64_t d : {64, 128}) {
    EXPECT_TRUE(attention::tiled_forward_f32_fits(desc_of(DType::F32, 2, 4, 2, 77, 130, d, d), p)) << d;
    AttentionDesc causal = desc_of(DType::F32, 1, 2, 2, 1000, 1000, d, d);
    causal.causal = true;
    EXPECT_TRUE(attention::tiled_forward_f32_fits(causal, p)) << d;
    EXPECT_TRUE(attention::tiled_forward_f32_fits(desc_of(DType::F32, 1, 2, 2, 20, 0, d, d), p)) << "Sk = 0, " << d;
  }
  EXPECT_FALSE(attention::tiled_forward_f32_fits(desc_of(DType::F32, 1, 2, 2, 17, 17, 32, 32), p));
  EXPECT_FALSE(attention::tiled_forward_f32_fits(desc_of(DType::F32, 1, 2, 2, 17, 17, 256, 256), p));
  EXPECT_FALSE(attention::tiled_forward_f32_fits(desc_of(DType::F32, 1, 2, 2, 33, 47, 64, 32), p)) << "Dv != D";
  EXPECT_FALSE(attention::tiled_forward_f32_fits(desc_of(DType::F64, 1, 2, 2, 64, 64, 64, 64), p));
  EXPECT_FALSE(attention::tiled_forward_f32_fits(desc_of(DType::BF16, 1, 2, 2, 64, 64, 64, 64), p));
  EXPECT_FALSE(attention::tiled_forward_f32_fits(desc_of(DType::F32, 1, 2, 2, 0, 64, 64, 64), p)) << "Sq = 0";
  AttentionDesc masked = desc_of(DType::F32, 1, 2, 2, 64, 64, 64, 64);
  masked.mask = AttentionMaskKind::Bool;
  EXPECT_FALSE(attention::tiled_forward_f32_fits(masked, p));
  AttentionDesc view = desc_of(DType::F32, 1, 2, 2, 64, 64, 64, 64);
  view.q_strides = {64 * 3 * 2 * 64, 64, 3 * 2 * 64, 1};
  EXPECT_FALSE(attention::tiled_forward_f32_fits(view, p)) << "strided q";
  attention::Pointers off = p;
  off.k = storage + 1;  // off the 16-byte grid of cp.async
  EXPECT_FALSE(attention::tiled_forward_f32_fits(desc_of(DType::F32, 1, 2, 2, 64, 64, 64, 64), off));
}

TEST(TiledF32Attention, BackwardTakesWhatTheForwardTakes) {
  alignas(16) static float storage[8];
  attention::Pointers p;
  p.q = p.k = p.v = p.grad_out = p.out = storage;
  p.dq = p.dk = p.dv = p.logsumexp = p.delta = storage;
  for (const std::int64_t d : {64, 128}) {
    EXPECT_TRUE(attention::tiled_backward_f32_fits(desc_of(DType::F32, 2, 4, 2, 77, 130, d, d), p)) << d;
    EXPECT_TRUE(attention::tiled_backward_f32_fits(desc_of(DType::F32, 1, 2, 2, 20, 0, d, d), p)) << "Sk = 0, " << d;
    EXPECT_TRUE(attention::tiled_backward_f32_fits(desc_of(DType::F32, 1, 2, 2, 0, 20, d, d), p)) << "Sq = 0, " << d;
  }
  EXPECT_FALSE(attention::tiled_backward_f32_fits(desc_of(DType::F32, 1, 2, 2, 17, 17, 80, 80), p));
  EXPECT_FALSE(attention::tiled_backward_f32_fits(desc_of(DType::F32, 1, 2, 2, 33, 47, 64, 32), p)) << "Dv != D";
  EXPECT_FALSE(attention::tiled_backward_f32_fits(desc_of(DType::F64, 1, 2, 2, 64, 64, 64, 64), p));
  AttentionDesc masked = desc_of(DType::F32, 1, 2, 2, 64, 64, 64, 64);
  masked.mask = AttentionMaskKind::Additive;
  EXPECT_FALSE(attention::tiled_backward_f32_fits(masked, p));
  attention::Pointers off = p;
  off.dk = storage + 1;  // off the 16-byte grid of the float4 stores
  EXPECT_FALSE(attention::tiled_backward_f32_fits(desc_of(DType::F32, 1, 2, 2, 64, 64, 64, 64), off));
}

// An all-true Bool mask hides nothing but keeps the problem off the tiled kernels (they take
// no mask), so the same functions run on the general kernels: both in F32, in other orders.
TEST(TiledF32Attention, AgreesWithTheGeneralKernel) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(77, gpu);
  struct Problem {
    std::int64_t b, hq, hkv, sq, sk, d;
  };
  for (const Problem& pr : {Problem{2, 4, 2, 333, 517, 64}, Problem{1, 4, 1, 517, 333, 128}, Problem{1, 2, 2, 256, 256, 128},
                            Problem{3, 2, 1, 129, 65, 64}}) {
    for (const bool causal : {false, true}) {
      const Tensor q = random::randn({pr.b, pr.hq, pr.sq, pr.d}, DType::F32, gpu, &generator);
      const Tensor k = random::randn({pr.b, pr.hkv, pr.sk, pr.d}, DType::F32, gpu, &generator);
      const Tensor v = random::randn({pr.b, pr.hkv, pr.sk, pr.d}, DType::F32, gpu, &generator);
      const Tensor go = random::randn({pr.b, pr.hq, pr.sq, pr.d}, DType::F32, gpu, &generator);
      const nn::AttentionOptions plain{.causal = causal};
      const nn::AttentionOptions masked{.causal = causal, .mask = ones({pr.sq, pr.sk}, DType::Bool, gpu)};
      const auto a = nn::scaled_dot_product_attention(q, k, v, plain);
      const auto b = nn::scaled_dot_product_attention(q, k, v, masked);
      const std::string what = "Sq " + std::to_string(pr.sq) + " Sk " + std::to_string(pr.sk) + " D " +
                               std::to_string(pr.d) + " causal " + std::to_string(causal);
      EXPECT_EQ(conformance::compare(a.out, b.out, {1e-4, 1e-5}), "") << "out, " << what;
      EXPECT_EQ(conformance::compare(a.logsumexp, b.logsumexp, {1e-5, 1e-5}), "") << "logsumexp, " << what;
      // Both backwards from the same forward results.
      const auto ga = nn::scaled_dot_product_attention_backward(go, q, k, v, a.out, a.logsumexp, plain);
      const auto gb = nn::scaled_dot_product_attention_backward(go, q, k, v, a.out, a.logsumexp, masked);
      EXPECT_EQ(conformance::compare(ga.dq, gb.dq, {2e-4, 1e-4}), "") << "dq, " << what;
      EXPECT_EQ(conformance::compare(ga.dk, gb.dk, {2e-4, 1e-4}), "") << "dk, " << what;
      EXPECT_EQ(conformance::compare(ga.dv, gb.dv, {2e-4, 1e-4}), "") << "dv, " << what;
    }
  }
}

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA
