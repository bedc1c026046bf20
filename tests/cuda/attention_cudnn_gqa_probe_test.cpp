// A probe for a session with a GPU, disabled by default (it may fail by design):
//   build-gpu/tests/ferrite_cuda_tests --gtest_also_run_disabled_tests \
//     --gtest_filter='CudnnCausalGqaProbe.*'
//
// Session 12 saw cuDNN 9.14's deterministic causal backward put dv 18% off the CPU backend
// (key 0 of batch 1: -0.0898 against -0.0762) for B=2, Hq=8, Hkv=2, S=200, D=128 BF16, both on
// cuDNN's grouped graph and on its multi-head graph with k/v repeated to the query heads (then
// dk/dv summed per group), so the causal grouped-query backward was kept off cuDNN
// (cuda_attention_ops.cpp) and runs on the own kernels at about a third of PyTorch's speed.
// Session 13's CausalBackwardWithHeadsSharingKv ran the same values on the multi-head graph
// through the front end and agreed with the CPU backend. One suspect left is what memory cuDNN
// is handed: session 12's failing calls got gradient buffers and a work area fresh from the
// pool, holding earlier tests' data. This probe calls cudnn_sdpa::backward directly (the routing
// would not) on the grouped problem and on the repeated one, with dq/dk/dv and the pool's free
// memory first filled with 0, NaN or 1e4, three times each, and holds every result to the CPU
// backend with the conformance tolerance of BF16, naming the graph, the fill and the run.
// If only some fills fail, cuDNN reads memory it should not (a zeroing of the outputs or the
// work area before the call would be the fix); if all agree, the fault needs something else
// (the order of earlier tests: run the whole CudnnAttention suite before it); if all fail,
// the fault is cuDNN's on these values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include <cuda_runtime_api.h>

#include "attention_test_problems.hpp"
#include "cuda/attention/cudnn_sdpa.hpp"

namespace ferrite {
namespace {

namespace sdpa = cuda::cudnn_sdpa;
using attention_test::backward_pointers;
using attention_test::Grads;
using attention_test::stream0;

// `fill` written into 256 MiB of the pool, then freed: the pool keeps the block for the
// allocations that follow (cuDNN's work area among them).
void poison_pool(double fill) {
  const Device gpu = Device::cuda(0);
  { Tensor junk = full({std::int64_t(64) << 20}, fill, DType::F32, gpu); }
  synchronize(gpu);
}

// cuDNN's deterministic backward of `desc` (row-major operands) into gradient tensors first
// filled with `fill`.
Grads cudnn_backward(AttentionDesc desc, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                     const Tensor& lse, const Tensor& go, double fill) {
  const Device gpu = Device::cuda(0);
  desc.set_row_major_strides();
  Grads g{full(q.shape(), fill, q.dtype(), gpu), full(k.shape(), fill, k.dtype(), gpu),
          full(v.shape(), fill, v.dtype(), gpu)};
  const Tensor lse_copy = lse.clone(), no_delta = empty({1}, DType::F32, gpu);  // unread: cuDNN keeps its own
  const cuda::attention::Pointers p = backward_pointers(q, k, v, out, go, lse_copy, no_delta, g);
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  EXPECT_TRUE(sdpa::eligible(desc));
  EXPECT_TRUE(sdpa::backward(desc, p, 0, stream0())) << sdpa::cache_info(0).last_unsupported_reason;
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  return g;
}

TEST(CudnnCausalGqaProbe, DISABLED_GroupedAndRepeatedAgainstTheCpuBackend) {
  if (!sdpa::compiled()) GTEST_SKIP() << "built without the cuDNN frontend";
  const Device gpu = Device::cuda(0), cpu = Device::cpu();
  const std::int64_t b = 2, hq = 8, hkv = 2, s = 200, d = 128, group = hq / hkv;
  // The values of CudnnAttention's problems (attention_cuda_test.cpp: inputs()).
  random::Generator generator(1234, gpu);
  auto normal = [&](Shape shape) {
    return random::randn(std::move(shape), DType::F32, gpu, &generator).to(DType::BF16);
  };
  const Tensor q = normal({b, hq, s, d}), k = normal({b, hkv, s, d}), v = normal({b, hkv, s, d}),
               go = normal({b, hq, s, d});
  const nn::AttentionOptions o{.causal = true};
  const auto ref = nn::scaled_dot_product_attention(q.to(cpu), k.to(cpu), v.to(cpu), o);
  const auto ref_g = nn::scaled_dot_product_attention_backward(go.to(cpu), q.to(cpu), k.to(cpu), v.to(cpu), ref.out,
                                                               ref.logsumexp, o);
  const auto f = nn::scaled_dot_product_attention(q, k, v, o);
  auto repeat = [&](const Tensor& t) {
    return t.unsqueeze(2).expand({b, hkv, group, s, d}).reshape({b, hq, s, d}).contiguous();
  };
  auto sum_groups = [&](const Tensor& t) {
    return sum(t.to(DType::F32).reshape({b, hkv, group, s, d}), 2).to(DType::BF16);
  };
  AttentionDesc grouped;
  grouped.dtype = DType::BF16;
  grouped.batch = b;
  grouped.heads_q = hq;
  grouped.heads_kv = hkv;
  grouped.seq_q = grouped.seq_k = s;
  grouped.head_dim = grouped.value_dim = d;
  grouped.causal = true;
  grouped.deterministic = true;
  grouped.scale = 1.0 / std::sqrt(static_cast<double>(d));
  AttentionDesc wide = grouped;
  wide.heads_kv = hq;
  const Tensor k_wide = repeat(k), v_wide = repeat(v);
  for (const bool repeated : {false, true})
    for (const double fill : {0.0, double(NAN), 1e4})
      for (int run = 0; run < 3; ++run) {
        poison_pool(fill);
        const std::string what = std::string(repeated ? "multi-head graph, k/v repeated" : "grouped graph") +
                                 ", memory filled with " + std::to_string(fill) + ", run " + std::to_string(run);
        Grads g = repeated ? cudnn_backward(wide, q, k_wide, v_wide, f.out, f.logsumexp, go, fill)
                           : cudnn_backward(grouped, q, k, v, f.out, f.logsumexp, go, fill);
        if (repeated) g = {g.dq, sum_groups(g.dk), sum_groups(g.dv)};
        EXPECT_EQ(conformance::compare(g.dq, ref_g.dq, {3e-2, 1e-2}), "") << "dq, " << what;
        EXPECT_EQ(conformance::compare(g.dk, ref_g.dk, {3e-2, 1e-2}), "") << "dk, " << what;
        EXPECT_EQ(conformance::compare(g.dv, ref_g.dv, {3e-2, 1e-2}), "") << "dv, " << what;
      }
}


// Session 14's run of the probe above: every fill and run failed the same way (dv -0.0898
// against -0.0762 at key 0 of batch 1) on both graphs, so the fault is not in memory handed to
// cuDNN. Yet CausalBackwardWithHeadsSharingKv, whose forward runs on the repeated (multi-head)
// problem, agrees. This probe holds the forward's outputs to blame: it runs cuDNN's multi-head
// backward with out and logsumexp taken from the grouped forward, the multi-head forward, the
// CPU backend, and mixes of them, and prints how far those inputs are from each other.
TEST(CudnnCausalGqaProbe, DISABLED_WhichForwardOutputMatters) {
  if (!sdpa::compiled()) GTEST_SKIP() << "built without the cuDNN frontend";
  const Device gpu = Device::cuda(0), cpu = Device::cpu();
  const std::int64_t b = 2, hq = 8, hkv = 2, s = 200, d = 128, group = hq / hkv;
  random::Generator generator(1234, gpu);
  auto normal = [&](Shape shape) {
    return random::randn(std::move(shape), DType::F32, gpu, &generator).to(DType::BF16);
  };
  const Tensor q = normal({b, hq, s, d}), k = normal({b, hkv, s, d}), v = normal({b, hkv, s, d}),
               go = normal({b, hq, s, d});
  auto repeat = [&](const Tensor& t) {
    return t.unsqueeze(2).expand({b, hkv, group, s, d}).reshape({b, hq, s, d}).contiguous();
  };
  const Tensor k_wide = repeat(k), v_wide = repeat(v);
  const nn::AttentionOptions o{.causal = true};
  const auto ref = nn::scaled_dot_product_attention(q.to(cpu), k_wide.to(cpu), v_wide.to(cpu), o);
  const auto ref_g = nn::scaled_dot_product_attention_backward(go.to(cpu), q.to(cpu), k_wide.to(cpu),
                                                               v_wide.to(cpu), ref.out, ref.logsumexp, o);
  const auto f_gqa = nn::scaled_dot_product_attention(q, k, v, o);
  const auto f_mha = nn::scaled_dot_product_attention(q, k_wide, v_wide, o);
  const Tensor ref_out = ref.out.to(gpu), ref_lse = ref.logsumexp.to(gpu);
  auto report = [](const char* what, const Tensor& a, const Tensor& c) {
    std::printf("%-34s tight: %s | bf16 tolerance: %s\n", what, conformance::compare(a, c, {1e-5, 1e-5}).c_str(),
                conformance::compare(a, c, {3e-2, 1e-2}).c_str());
  };
  report("lse grouped fwd vs cpu", f_gqa.logsumexp, ref.logsumexp);
  report("lse multi-head fwd vs cpu", f_mha.logsumexp, ref.logsumexp);
  report("lse grouped vs multi-head fwd", f_gqa.logsumexp, f_mha.logsumexp);
  report("out grouped vs multi-head fwd", f_gqa.out, f_mha.out);
  std::printf("lse contiguous: grouped %d, multi-head %d; rank %d\n", int(f_gqa.logsumexp.is_contiguous()),
              int(f_mha.logsumexp.is_contiguous()), int(f_gqa.logsumexp.shape().size()));
  AttentionDesc wide;
  wide.dtype = DType::BF16;
  wide.batch = b;
  wide.heads_q = wide.heads_kv = hq;
  wide.seq_q = wide.seq_k = s;
  wide.head_dim = wide.value_dim = d;
  wide.causal = true;
  wide.deterministic = true;
  wide.scale = 1.0 / std::sqrt(static_cast<double>(d));
  struct Case {
    const char* name;
    const Tensor& out;
    const Tensor& lse;
  };
  for (const Case& c : {Case{"out, lse of the multi-head fwd", f_mha.out, f_mha.logsumexp},
                        Case{"out, lse of the grouped fwd", f_gqa.out, f_gqa.logsumexp},
                        Case{"multi-head out, grouped lse", f_mha.out, f_gqa.logsumexp},
                        Case{"grouped out, multi-head lse", f_gqa.out, f_mha.logsumexp},
                        Case{"out, lse of the cpu", ref_out, ref_lse}}) {
    const Grads g = cudnn_backward(wide, q, k_wide, v_wide, c.out.contiguous(), c.lse.contiguous(), go, 0.0);
    std::printf("[%s] dq: %s | dk: %s | dv: %s\n", c.name, conformance::compare(g.dq, ref_g.dq, {3e-2, 1e-2}).c_str(),
                conformance::compare(g.dk, ref_g.dk, {3e-2, 1e-2}).c_str(),
                conformance::compare(g.dv, ref_g.dv, {3e-2, 1e-2}).c_str());
  }
}

}  // namespace
}  // namespace ferrite
#endif
