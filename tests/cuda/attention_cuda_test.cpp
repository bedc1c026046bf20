// Scaled dot-product attention on the GPU beyond the conformance suite: cuDNN's route
// (src/cuda/attention/cudnn_sdpa.hpp, an internal header: the graph cache is not public API)
// builds a graph once per problem, takes the benchmark's shapes, and leaves odd head dims and
// F32 to the own kernels (masked forwards and backwards on cuDNN: attention_cudnn_mask_test.cpp); it reads q/k/v
// views in place with the dense inputs' bits; cuDNN's results agree with the own kernels'; host
// threads running attention at once share the graphs and get the single thread's bits.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include "attention_test_problems.hpp"
#include "cuda/attention/cudnn_sdpa.hpp"
#include "cuda/threaded_calls.hpp"

namespace ferrite {
namespace {

namespace sdpa = cuda::cudnn_sdpa;

class CudnnAttention : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sdpa::compiled()) GTEST_SKIP() << "built without the cuDNN frontend (scripts/install-deps.sh)";
    sdpa::clear_cache(0);
  }
};

// The benchmark-sized problems: seconds natively, far too slow under compute-sanitizer
// (scripts/gpu-check.sh leaves CudnnAttentionLarge out of its memcheck run).
class CudnnAttentionLarge : public CudnnAttention {};

struct Qkv {
  Tensor q, k, v, grad_out;
};

// Standard normal inputs made on the device (the benchmark shapes are too large to fill on
// the host quickly); a fixed generator, so every run sees the same values.
Qkv inputs(std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t sq, std::int64_t sk, std::int64_t d,
           DType dtype, Device device) {
  random::Generator generator(1234, device);
  auto normal = [&](Shape shape) { return random::randn(std::move(shape), DType::F32, device, &generator).to(dtype); };
  return {normal({b, hq, sq, d}), normal({b, hkv, sk, d}), normal({b, hkv, sk, d}), normal({b, hq, sq, d})};
}

void forward_and_backward(const Qkv& x, const nn::AttentionOptions& o) {
  const auto f = nn::scaled_dot_product_attention(x.q, x.k, x.v, o);
  (void)nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, f.out, f.logsumexp, o);
}

// The deterministic backward's gradients `g` against cuDNN's non-deterministic backward of the
// same problem (one graph, no dP work area) at BF16's tolerance; dk and dv too unless `dq_only`.
// That graph must be planned (the call's lookup adds no unsupported entry): declined, the own
// kernels would run it, and a `g` from the own kernels would be compared with itself.
void expect_near_nondeterministic(const nn::AttentionGrads& g, const Qkv& x, const nn::AttentionResult& f,
                                  nn::AttentionOptions o, const std::string& what, bool dq_only = false) {
  o.deterministic = false;
  const sdpa::CacheInfo before = sdpa::cache_info(0);
  const auto n = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, f.out, f.logsumexp, o);
  const sdpa::CacheInfo after = sdpa::cache_info(0);
  EXPECT_GT(after.misses + after.hits, before.misses + before.hits) << "the non-deterministic backward, " << what;
  EXPECT_EQ(after.unsupported, before.unsupported)
      << "the non-deterministic backward's graph is planned, " << what << ": " << after.last_unsupported_reason;
  EXPECT_EQ(conformance::compare(g.dq, n.dq, {3e-2, 1e-2}), "") << "dq against the non-deterministic, " << what;
  if (dq_only) return;
  EXPECT_EQ(conformance::compare(g.dk, n.dk, {3e-2, 1e-2}), "") << "dk against the non-deterministic, " << what;
  EXPECT_EQ(conformance::compare(g.dv, n.dv, {3e-2, 1e-2}), "") << "dv against the non-deterministic, " << what;
}

TEST_F(CudnnAttention, SecondCallWithTheSameShapeBuildsNoGraph) {
  const Qkv x = inputs(2, 4, 4, 64, 64, 64, DType::BF16, Device::cuda(0));
  forward_and_backward(x, {.causal = true});
  const sdpa::CacheInfo first = sdpa::cache_info(0);
  EXPECT_EQ(first.misses, 2);  // the forward's graph and the backward's
  EXPECT_EQ(first.hits, 0);
  EXPECT_EQ(first.size, 2u);
  // cuDNN on the H200 plans this problem: an unsupported graph here means the route is dead.
  EXPECT_EQ(first.unsupported, 0) << first.last_unsupported_reason;
  forward_and_backward(x, {.causal = true});
  const sdpa::CacheInfo second = sdpa::cache_info(0);
  EXPECT_EQ(second.misses, 2);
  EXPECT_EQ(second.hits, 2);
  EXPECT_EQ(second.size, 2u);
  forward_and_backward(x, {.causal = false});  // another problem: two new graphs
  EXPECT_EQ(sdpa::cache_info(0).misses, 4);
}

// Head dims not multiples of 8 and F32 stay on the own kernels. The masked problem builds two
// graphs, its forward's and its backward's (since session 14 masked F16/BF16 problems run on
// cuDNN with the mask as its bias, attention_cudnn_mask_test.cpp), none with
// FERRITE_ATTENTION_CUDNN_MASKS=off.
TEST_F(CudnnAttention, MaskedAndOddProblemsStayOnTheOwnKernels) {
  const char* masks_env = std::getenv("FERRITE_ATTENTION_CUDNN_MASKS");
  const bool masked_on_cudnn = masks_env == nullptr || *masks_env == '\0' || std::string(masks_env) == "on";
  const Device gpu = Device::cuda(0);
  const Qkv x = inputs(1, 2, 2, 16, 16, 64, DType::F16, gpu);
  forward_and_backward(x, {.mask = ones({16, 16}, DType::Bool, gpu)});
  const Qkv odd = inputs(1, 2, 2, 16, 16, 20, DType::F16, gpu);
  forward_and_backward(odd, {});
  const Qkv f32 = inputs(1, 2, 2, 16, 16, 64, DType::F32, gpu);
  forward_and_backward(f32, {});
  EXPECT_EQ(sdpa::cache_info(0).misses, masked_on_cudnn ? 2 : 0);
}

// The issue's benchmark problems (bench/cases_attention.cpp) all take cuDNN's route.
TEST_F(CudnnAttentionLarge, BenchmarkShapesHaveGraphs) {
  const Device gpu = Device::cuda(0);
  for (const DType dtype : {DType::BF16, DType::F16}) {
    const Qkv x = inputs(8, 16, 16, 4096, 4096, 128, dtype, gpu);
    forward_and_backward(x, {.causal = false});
    forward_and_backward(x, {.causal = true});
  }
  const Qkv decode = inputs(64, 32, 8, 1, 8192, 128, DType::BF16, gpu);
  (void)nn::scaled_dot_product_attention(decode.q, decode.k, decode.v);
  const sdpa::CacheInfo info = sdpa::cache_info(0);
  EXPECT_EQ(info.misses, 9) << "hits " << info.hits << ", unsupported " << info.unsupported;
  EXPECT_EQ(info.unsupported, 0) << info.last_unsupported_reason;
}

// The issue's memory bound: B=1, H=16, S=32768, D=128 BF16 forward + backward peaks below 4x
// the bytes of q, k, v, out and their gradients. cuDNN's deterministic backward keeps its
// block's S x S dP in its work area: one head's is 2 GiB, below the bound of 2.5x the 1 GiB of
// operands (cudnn_sdpa.cpp: work_area_bound), so the backward runs on cuDNN in blocks of one
// head (the largest that fits), the pool then holding the operands and one block's work area.
// Its gradients agree with cuDNN's non-deterministic backward (one graph, no dP work area).
TEST_F(CudnnAttentionLarge, IssueMemoryBoundHolds) {
  const Device gpu = Device::cuda(0);
  const std::int64_t b = 1, h = 16, s = 32768, d = 128;
  const std::int64_t tensor_bytes = b * h * s * d * 2;
  const Qkv x = inputs(b, h, h, s, s, d, DType::BF16, gpu);
  synchronize(gpu);
  cuda::reset_peak_memory(0);
  const nn::AttentionOptions o{.causal = true};
  const auto f = nn::scaled_dot_product_attention(x.q, x.k, x.v, o);
  const auto g = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, f.out, f.logsumexp, o);
  synchronize(gpu);
  const std::int64_t peak = memory_stats(gpu).peak_bytes;
  EXPECT_LT(peak, 4 * 8 * tensor_bytes) << "peak " << peak << " bytes";
  EXPECT_EQ(sdpa::cache_info(0).misses, 2);
  EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << sdpa::cache_info(0).last_unsupported_reason;
  expect_near_nondeterministic(g, x, f, o, "cuDNN in blocks of one head");
}

// A deterministic backward whose single key/value head's dP reaches the bound is declined (the
// reason names it) and runs on the own kernels: B=1, H=1, S=16384, D=64 has 16 MiB of operands,
// so the bound is the 256 MiB floor, and one head's dP is 512 MiB. The own backward's gradients
// agree with cuDNN's non-deterministic one (which keeps no dP and so takes the problem).
TEST_F(CudnnAttentionLarge, OneHeadsDpAtTheBoundIsDeclined) {
  const Device gpu = Device::cuda(0);
  const Qkv x = inputs(1, 1, 1, 16384, 16384, 64, DType::BF16, gpu);
  const nn::AttentionOptions o{.causal = true};
  const auto f = nn::scaled_dot_product_attention(x.q, x.k, x.v, o);
  const auto g = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, f.out, f.logsumexp, o);
  EXPECT_EQ(sdpa::cache_info(0).misses, 2);
  EXPECT_EQ(sdpa::cache_info(0).unsupported, 1) << "the deterministic backward's graph is declined";
  EXPECT_NE(sdpa::cache_info(0).last_unsupported_reason.find("one key/value head's dP"), std::string::npos)
      << sdpa::cache_info(0).last_unsupported_reason;
  expect_near_nondeterministic(g, x, f, o, "the own kernels");
}

// A deterministic backward whose whole dP would pass the work-area bound runs in blocks, one
// graph for all: of batches (B=4, H=4, S=4096, D=64: dP 512 MiB whole, the bound 256 MiB, so
// blocks of one batch) or of one batch's key/value heads (B=1, Hq=16 over Hkv=4, the same
// sizes: blocks of one key/value head and its four query heads). The pool's peak during the
// backward stays below one whole dP; the gradients are bit for bit those of the blocks run as
// problems of their own (slices of the inputs: the same graph, as it has the same shape and
// strides), and agree with cuDNN's non-deterministic backward (one graph, no dP), causal and not
// (the grouped causal problem's dk and dv excepted: each backward rounds per query head before
// the group sum, BothRoutesAgreeWithTheCpuBackend, so the two may differ by several roundings of
// the early keys' large per-head gradients).
TEST_F(CudnnAttentionLarge, DeterministicBackwardRunsInBlocks) {
  const Device gpu = Device::cuda(0);
  const std::int64_t s = 4096, d = 64, whole_dp = 2 * 16 * s * s;
  for (const bool grouped : {false, true})
    for (const bool causal : {false, true}) {
      const std::int64_t b = grouped ? 1 : 4, hq = grouped ? 16 : 4, hkv = 4, blocks = 4;
      const Qkv x = inputs(b, hq, hkv, s, s, d, DType::BF16, gpu);
      const nn::AttentionOptions o{.causal = causal};
      const auto f = nn::scaled_dot_product_attention(x.q, x.k, x.v, o);
      synchronize(gpu);
      const std::int64_t before = memory_stats(gpu).in_use_bytes;
      cuda::reset_peak_memory(0);
      const auto g = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, f.out, f.logsumexp, o);
      synchronize(gpu);
      const std::string what = std::string(grouped ? "blocks of heads" : "blocks of batches") +
                               (causal ? ", causal" : "");
      EXPECT_LT(memory_stats(gpu).peak_bytes - before, whole_dp / 2) << what;
      EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << what << ": " << sdpa::cache_info(0).last_unsupported_reason;
      attention_test::expect_same_as_blocks(g, {grouped, hq / hkv}, blocks, x.grad_out, x.q, x.k, x.v, f.out,
                                            f.logsumexp, [&](std::int64_t) { return o; }, what);
      expect_near_nondeterministic(g, x, f, o, what, grouped && causal);
      EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << what << ": " << sdpa::cache_info(0).last_unsupported_reason;
    }
}

// cuDNN against the own kernels on the same GPU: the own kernels take the problem when a
// mask that hides nothing is given (an all-true Bool mask means no mask). Since branches
// cudnnmask and cudnnmaskbwd the masked forward and backward run on cuDNN too (with a zero bias)
// unless FERRITE_ATTENTION_CUDNN_MASKS=off: by default this compares cuDNN's plain and biased
// graphs; run it with the switch off for the own kernels (which HalfMmaForward.*,
// CudnnMaskedForward.* and CudnnMaskedBackward.* also hold against other routes).
TEST_F(CudnnAttention, AgreesWithTheOwnKernels) {
  const Device gpu = Device::cuda(0);
  for (const bool causal : {false, true}) {
    const Qkv x = inputs(2, 8, 2, 200, 200, 128, DType::BF16, gpu);
    const nn::AttentionOptions plain{.causal = causal};
    const nn::AttentionOptions masked{.causal = causal, .mask = ones({200, 200}, DType::Bool, gpu)};
    const auto a = nn::scaled_dot_product_attention(x.q, x.k, x.v, plain);
    const auto b = nn::scaled_dot_product_attention(x.q, x.k, x.v, masked);
    EXPECT_EQ(conformance::compare(a.out, b.out, {3e-2, 1e-2}), "") << "out, causal " << causal;
    EXPECT_EQ(conformance::compare(a.logsumexp, b.logsumexp, {1e-3, 1e-3}), "") << "logsumexp, causal " << causal;
    const auto ga = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, a.out, a.logsumexp, plain);
    const auto gb = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, a.out, a.logsumexp, masked);
    EXPECT_EQ(conformance::compare(ga.dq, gb.dq, {3e-2, 1e-2}), "") << "dq, causal " << causal;
    EXPECT_EQ(conformance::compare(ga.dk, gb.dk, {3e-2, 1e-2}), "") << "dk, causal " << causal;
    EXPECT_EQ(conformance::compare(ga.dv, gb.dv, {3e-2, 1e-2}), "") << "dv, causal " << causal;
  }
  EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << sdpa::cache_info(0).last_unsupported_reason;
}

// Each route against the CPU backend on the problem above, so that a disagreement between the
// two routes names the one that is off ("own kernels": the masked forward and backward are
// cuDNN's biased graphs unless FERRITE_ATTENTION_CUDNN_MASKS=off, as above). dk and dv are held
// to the grouped bound (attention_test_problems.hpp: compare_grouped): cuDNN rounds each query
// head's gradient before summing the group, which at key 0 of the causal problem's batch 1 puts
// dv 0.014 from the CPU backend's single rounding (-0.0898 against -0.0762), outside the plain
// BF16 tolerance; sessions 12 and 13 took that for a cuDNN fault.
TEST_F(CudnnAttention, BothRoutesAgreeWithTheCpuBackend) {
  const Device gpu = Device::cuda(0), cpu = Device::cpu();
  for (const bool causal : {false, true}) {
    const Qkv x = inputs(2, 8, 2, 200, 200, 128, DType::BF16, gpu);
    const Qkv h{x.q.to(cpu), x.k.to(cpu), x.v.to(cpu), x.grad_out.to(cpu)};
    const nn::AttentionOptions plain{.causal = causal};
    const nn::AttentionOptions masked{.causal = causal, .mask = ones({200, 200}, DType::Bool, gpu)};
    const auto ref = nn::scaled_dot_product_attention(h.q, h.k, h.v, plain);
    const auto ref_g = nn::scaled_dot_product_attention_backward(h.grad_out, h.q, h.k, h.v, ref.out, ref.logsumexp, plain);
    const Tensor k_heads = attention_test::repeat_heads(h.k, 8), v_heads = attention_test::repeat_heads(h.v, 8);
    const auto per_head = nn::scaled_dot_product_attention_backward(h.grad_out, h.q, k_heads, v_heads, ref.out,
                                                                    ref.logsumexp, plain);
    for (const bool own : {false, true}) {
      const nn::AttentionOptions& o = own ? masked : plain;
      const auto f = nn::scaled_dot_product_attention(x.q, x.k, x.v, o);
      const auto g = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, f.out, f.logsumexp, o);
      const char* route = own ? "own kernels" : "cuDNN";
      EXPECT_EQ(conformance::compare(f.out, ref.out, {3e-2, 1e-2}), "") << route << " out, causal " << causal;
      EXPECT_EQ(conformance::compare(g.dq, ref_g.dq, {3e-2, 1e-2}), "") << route << " dq, causal " << causal;
      EXPECT_EQ(attention_test::compare_grouped(g.dk, ref_g.dk, per_head.dk, DType::BF16, 3e-2, 1e-2), "")
          << route << " dk, causal " << causal;
      EXPECT_EQ(attention_test::compare_grouped(g.dv, ref_g.dv, per_head.dv, DType::BF16, 3e-2, 1e-2), "")
          << route << " dv, causal " << causal;
    }
  }
}

// The causal grouped-query backward runs on cuDNN (since session 14, cuda_attention_ops.cpp): a
// forward graph and a backward graph, both planned.
TEST_F(CudnnAttention, CausalGroupedBackwardRunsOnCudnn) {
  forward_and_backward(inputs(2, 8, 2, 200, 200, 128, DType::BF16, Device::cuda(0)), {.causal = true});
  const sdpa::CacheInfo info = sdpa::cache_info(0);
  EXPECT_EQ(info.misses, 2);
  EXPECT_EQ(info.unsupported, 0) << info.last_unsupported_reason;
}

// Heads sharing k/v values (k/v repeated from 2 heads to 8, as a model that repeats its KV heads
// before calling attention passes them, Hq = Hkv) on cuDNN's causal multi-head backward, each
// (B, S, shared) combination against the CPU backend per head. Written when session 12 took the
// grouped dv's rounding (BothRoutesAgreeWithTheCpuBackend) for a cuDNN fault with such inputs;
// per head the gradients agree.
TEST_F(CudnnAttention, CausalBackwardWithHeadsSharingKv) {
  const Device gpu = Device::cuda(0), cpu = Device::cpu();
  const std::int64_t h = 8, d = 128;
  for (const std::int64_t b : {1, 2})
    for (const std::int64_t s : {200, 256})
      for (const bool shared : {false, true}) {
        const Qkv drawn = inputs(b, h, shared ? 2 : h, s, s, d, DType::BF16, gpu);
        auto heads = [&](const Tensor& t) { return shared ? attention_test::repeat_heads(t, h) : t; };
        const Qkv x{drawn.q, heads(drawn.k), heads(drawn.v), drawn.grad_out};
        const Qkv on_cpu{x.q.to(cpu), x.k.to(cpu), x.v.to(cpu), x.grad_out.to(cpu)};
        const nn::AttentionOptions o{.causal = true};
        const auto ref = nn::scaled_dot_product_attention(on_cpu.q, on_cpu.k, on_cpu.v, o);
        const auto ref_g = nn::scaled_dot_product_attention_backward(on_cpu.grad_out, on_cpu.q, on_cpu.k, on_cpu.v,
                                                                     ref.out, ref.logsumexp, o);
        const auto f = nn::scaled_dot_product_attention(x.q, x.k, x.v, o);
        const auto g = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, f.out, f.logsumexp, o);
        const std::string what = "B " + std::to_string(b) + ", S " + std::to_string(s) +
                                 (shared ? ", k/v shared by 4 heads" : ", independent k/v");
        EXPECT_EQ(conformance::compare(f.out, ref.out, {3e-2, 1e-2}), "") << "out, " << what;
        EXPECT_EQ(conformance::compare(g.dq, ref_g.dq, {3e-2, 1e-2}), "") << "dq, " << what;
        EXPECT_EQ(conformance::compare(g.dk, ref_g.dk, {3e-2, 1e-2}), "") << "dk, " << what;
        EXPECT_EQ(conformance::compare(g.dv, ref_g.dv, {3e-2, 1e-2}), "") << "dv, " << what;
      }
}

// deterministic = false: cuDNN's own choice of backward (atomic dq, as PyTorch's default) gets
// a graph of its own beside the deterministic one, and the gradients of both agree with the CPU
// backend. Hq = Hkv = 8 with the shape of the grouped problem above: the deterministic route is
// checked here on it too.
TEST_F(CudnnAttention, NondeterministicBackwardAgreesWithTheCpuBackend) {
  const Device gpu = Device::cuda(0), cpu = Device::cpu();
  for (const bool causal : {false, true}) {
    const Qkv x = inputs(2, 8, 8, 200, 200, 128, DType::BF16, gpu);
    const Qkv h{x.q.to(cpu), x.k.to(cpu), x.v.to(cpu), x.grad_out.to(cpu)};
    const nn::AttentionOptions exact{.causal = causal};
    const nn::AttentionOptions fast{.causal = causal, .deterministic = false};
    const auto ref = nn::scaled_dot_product_attention(h.q, h.k, h.v, exact);
    const auto ref_g = nn::scaled_dot_product_attention_backward(h.grad_out, h.q, h.k, h.v, ref.out, ref.logsumexp, exact);
    const auto f = nn::scaled_dot_product_attention(x.q, x.k, x.v, exact);
    const std::int64_t misses = sdpa::cache_info(0).misses;
    const auto e = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, f.out, f.logsumexp, exact);
    EXPECT_EQ(conformance::compare(e.dq, ref_g.dq, {3e-2, 1e-2}), "") << "deterministic dq, causal " << causal;
    EXPECT_EQ(conformance::compare(e.dk, ref_g.dk, {3e-2, 1e-2}), "") << "deterministic dk, causal " << causal;
    EXPECT_EQ(conformance::compare(e.dv, ref_g.dv, {3e-2, 1e-2}), "") << "deterministic dv, causal " << causal;
    const auto g = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, f.out, f.logsumexp, fast);
    EXPECT_EQ(sdpa::cache_info(0).misses, misses + 2) << "one backward graph for each setting";
    EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << sdpa::cache_info(0).last_unsupported_reason;
    EXPECT_EQ(conformance::compare(g.dq, ref_g.dq, {3e-2, 1e-2}), "") << "dq, causal " << causal;
    EXPECT_EQ(conformance::compare(g.dk, ref_g.dk, {3e-2, 1e-2}), "") << "dk, causal " << causal;
    EXPECT_EQ(conformance::compare(g.dv, ref_g.dv, {3e-2, 1e-2}), "") << "dv, causal " << causal;
  }
}

// q, k, v permuted out of one [B, T, 3, H, D] projection and grad_out out of [B, T, H, D], as
// the GPT makes them (examples/gpt/attention.cpp): cuDNN reads the views in place, through
// graphs declared with their strides (two more graphs, all planned), and the results are the
// dense inputs' bit for bit (the same computation with other strides). F32 runs on the own
// kernels, which get dense copies: same bits, no graph.
TEST_F(CudnnAttention, PermutedProjectionViewsRunWithoutCopies) {
  const Device gpu = Device::cuda(0);
  const std::int64_t b = 2, t = 96, h = 4, d = 64;
  auto bytes = [](const Tensor& x) { return x.to(Device::cpu()).to_bytes(); };
  for (const DType dtype : {DType::BF16, DType::F16, DType::F32}) {
    for (const bool causal : {false, true}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + (causal ? " causal" : ""));
      sdpa::clear_cache(0);
      random::Generator generator(99, gpu);
      const Tensor qkv = random::randn({b, t, 3, h, d}, DType::F32, gpu, &generator).to(dtype);
      const Tensor heads = qkv.permute({2, 0, 3, 1, 4});
      const Tensor q = heads.select(0, 0), k = heads.select(0, 1), v = heads.select(0, 2);
      const Tensor grad_out =
          random::randn({b, t, h, d}, DType::F32, gpu, &generator).to(dtype).permute({0, 2, 1, 3});
      ASSERT_FALSE(q.is_contiguous());
      ASSERT_FALSE(grad_out.is_contiguous());
      const nn::AttentionOptions o{.causal = causal};
      const Tensor qd = q.contiguous(), kd = k.contiguous(), vd = v.contiguous(), gd = grad_out.contiguous();
      const auto fd = nn::scaled_dot_product_attention(qd, kd, vd, o);
      const auto bd = nn::scaled_dot_product_attention_backward(gd, qd, kd, vd, fd.out, fd.logsumexp, o);
      const auto fv = nn::scaled_dot_product_attention(q, k, v, o);
      const auto bv = nn::scaled_dot_product_attention_backward(grad_out, q, k, v, fv.out, fv.logsumexp, o);
      const sdpa::CacheInfo info = sdpa::cache_info(0);
      if (dtype == DType::F32) {
        EXPECT_EQ(info.size, 0u);
      } else {
        // Dense forward and backward, then the views' forward and backward: four graphs, each
        // built once (the views' by reads_views, which counts no hit) and run once.
        EXPECT_EQ(info.size, 4u);
        EXPECT_EQ(info.misses, 4);
        EXPECT_EQ(info.hits, 2);
        EXPECT_EQ(info.unsupported, 0) << info.last_unsupported_reason;
      }
      const std::vector<std::pair<const char*, std::pair<Tensor, Tensor>>> results = {
          {"out", {fv.out, fd.out}}, {"logsumexp", {fv.logsumexp, fd.logsumexp}},
          {"dq", {bv.dq, bd.dq}},    {"dk", {bv.dk, bd.dk}},
          {"dv", {bv.dv, bd.dv}}};
      // cuDNN writes the views' out in q's layout, [B, T, H, D] in memory (as PyTorch's SDPA);
      // the own kernels (F32) write it row-major.
      EXPECT_TRUE(dtype == DType::F32 ? fv.out.is_contiguous() : fv.out.permute({0, 2, 1, 3}).is_contiguous());
      // The gradients written straight into the slices of one [B, T, 3, H, D] tensor: cuDNN
      // plans that graph too (one more, no decline), and the bits are the dense call's.
      const Tensor dqkv = empty({b, t, 3, h, d}, dtype, gpu);
      const Tensor dheads = dqkv.permute({2, 0, 3, 1, 4});
      const nn::AttentionGrads into{dheads.select(0, 0), dheads.select(0, 1), dheads.select(0, 2)};
      nn::scaled_dot_product_attention_backward_out(into, grad_out, q, k, v, fv.out, fv.logsumexp, o);
      if (dtype != DType::F32) {
        const sdpa::CacheInfo after = sdpa::cache_info(0);
        EXPECT_EQ(after.size, 5u);
        EXPECT_EQ(after.unsupported, 0) << after.last_unsupported_reason;
      }
      for (const auto& [name, view, dense] : {std::tuple{"dq into", into.dq, bd.dq}, std::tuple{"dk into", into.dk, bd.dk},
                                              std::tuple{"dv into", into.dv, bd.dv}})
        EXPECT_TRUE(bytes(view) == bytes(dense)) << name;
      for (const auto& [name, pair] : results) {
        if (std::string(name) != "out") EXPECT_TRUE(pair.first.is_contiguous()) << name;
        EXPECT_TRUE(bytes(pair.first) == bytes(pair.second))
            << name << " from views differs from the dense inputs' (within the usual tolerance: \""
            << conformance::compare(pair.first.to(Device::cpu()), pair.second.to(Device::cpu()), {3e-2, 1e-2})
            << "\", empty when within)";
      }
    }
  }
}

// Each thread runs on a cuDNN handle of its own and enqueues the shared graphs without the
// cache's lock: every result must still be the single-threaded one bit for bit (the forward
// and the deterministic backward repeat exactly), and the two graphs are built once.
TEST_F(CudnnAttention, ThreadsShareTheGraphs) {
  const Qkv x = inputs(2, 4, 4, 64, 64, 64, DType::BF16, Device::cuda(0));
  const nn::AttentionOptions o{.causal = true};
  auto results = [&] {
    auto bytes = [](const Tensor& t) { return t.to(Device::cpu()).to_bytes(); };
    const auto f = nn::scaled_dot_product_attention(x.q, x.k, x.v, o);
    const auto g = nn::scaled_dot_product_attention_backward(x.grad_out, x.q, x.k, x.v, f.out, f.logsumexp, o);
    return std::vector{bytes(f.out), bytes(f.logsumexp), bytes(g.dq), bytes(g.dk), bytes(g.dv)};
  };
  const auto expected = results();
  constexpr int kThreads = 6, kRounds = 8;
  EXPECT_EQ(cuda_tests::disagreements_across_threads(kThreads, kRounds, [&] { return results() == expected; }), 0);
  const sdpa::CacheInfo info = sdpa::cache_info(0);
  EXPECT_EQ(info.misses, 2);
  EXPECT_EQ(info.hits, 2 * kThreads * kRounds);
  EXPECT_EQ(info.unsupported, 0) << info.last_unsupported_reason;
}

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA
