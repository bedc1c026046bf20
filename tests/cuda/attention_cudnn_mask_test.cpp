// Masked F16/BF16 attention forwards and backwards on cuDNN's SDPA (src/cuda/attention/cudnn_sdpa.cpp:
// the mask as cuDNN's additive bias; cudnn_sdpa_mask.cu: the Bool -> bias copy, each mask row's
// first visible key, the fix-up of fully masked rows, and the backward's Stats with those rows'
// -inf made +inf). Forwards (CudnnMaskedForward): cuDNN's forward, called directly
// (cudnn_sdpa::forward), against the own F16/BF16 tensor-core forward (half_mma_forward) on the same
// inputs and mask, and against the CPU backend, at the conformance suite's CUDA-vs-CPU tolerance:
// Bool and additive masks [Sq, Sk] (through the front end), [B, 1, 1, Sk], [B, Hq, Sq, Sk],
// [1, 1, Sq, Sk], with and without causal, GQA, D = 64 and 128, BF16 and F16, fully masked rows
// (Bool all false, additive all -inf: exactly out 0 and logsumexp -inf), a dead batch and left
// padding (each row's first keys hidden) for key padding, additive masks read in place and
// copied (Sk not a multiple of 8); the own backward on cuDNN's forward against the CPU's; the
// graph cache (a second call builds nothing, another mask layout builds a graph); and the A/B
// switch's routing through the front end (docs/families/nn.md, "Masked forwards on cuDNN"; first
// run on the H200 in session 14, as the backwards below).
// Backwards (CudnnMaskedBackward): cuDNN's
// masked backward (cudnn_sdpa::backward with the mask) on cuDNN's masked forward against the own
// F16/BF16 tensor-core backward (backward_half_mma) and the CPU backend, on the forward's cases
// (causal grouped-query ones as multi-head; the front-end test has them grouped), fully masked rows
// giving dq rows exactly 0 and a dead batch dk = dv = 0 exactly; a bit-for-bit repeat;
// deterministic = false; the cache; the front end's routing either way of the switch; and a
// backward large enough to run in blocks (of batches, of key/value heads), bit for bit the
// blocks run alone (docs/families/nn.md, "Masked backwards on cuDNN").
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "conformance/conformance.hpp"
#include "ferrite/cuda.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include <cuda_runtime_api.h>

#include "attention_test_problems.hpp"
#include "cuda/attention/attention_kernels.cuh"
#include "cuda/attention/cudnn_sdpa.hpp"

namespace ferrite {
namespace {

namespace attention = cuda::attention;
namespace sdpa = cuda::cudnn_sdpa;
using attention_test::backward_pointers;
using attention_test::bits;
using attention_test::Grads;
using attention_test::host;
using attention_test::nan_grads;
using attention_test::run_forward;
using attention_test::stream0;

constexpr auto kBool = AttentionMaskKind::Bool, kAdd = AttentionMaskKind::Additive;

// Which of [B, Hq, Sq, Sk] the mask keeps (false: extent 1, broadcast).
struct Keep {
  bool b, h, i, j;
};
constexpr Keep kKeyPad{true, false, false, true}, kFull{true, true, true, true}, kRowsKeys{false, false, true, true};

// How the mask hides keys beyond its random pattern.
enum class Dead {
  none,
  rows,        // mask rows 1 and 5 (Sq kept) hide every key
  batch,       // batch 0 (B kept) hides every key: key padding's dead batch
  left_padded  // every mask row hides its first 70 keys (cuDNN's first key tile is all -inf)
};

struct Case {
  std::int64_t b, hq, hkv, sq, sk, d;
  bool causal;
  AttentionMaskKind kind;
  Keep keep;
  Dead dead;
  std::string what(DType dtype) const {
    std::string s = std::string(dtype_name(dtype)) + " B " + std::to_string(b) + " Hq " + std::to_string(hq) +
                    " Hkv " + std::to_string(hkv) + " Sq " + std::to_string(sq) + " Sk " + std::to_string(sk) +
                    " D " + std::to_string(d) + (causal ? " causal" : "");
    s += kind == kBool ? " bool [" : " additive [";
    s += std::string(keep.b ? "B," : "1,") + (keep.h ? "H," : "1,") + (keep.i ? "Sq," : "1,") + (keep.j ? "Sk]" : "1]");
    const char* dead_names[] = {"", " dead rows", " dead batch", " left padded"};
    return s + dead_names[static_cast<int>(dead)];
  }
};

struct Problem {
  Case c;
  DType dtype;
  Tensor q, k, v, grad_out, mask;  // on the GPU
  std::vector<float> mh;           // the mask's values as bias (Bool: 0 / -inf)
  std::array<std::int64_t, 4> mext{1, 1, 1, 1}, mstr{0, 0, 0, 0};
};

Problem make(const Case& c, DType dtype, unsigned seed) {
  const Device gpu = Device::cuda(0);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  Problem p{c, dtype, {}, {}, {}, {}, {}, {}};
  auto values = [&](Shape s) {
    std::int64_t n = 1;
    for (auto e : s) n *= e;
    std::vector<float> x(static_cast<std::size_t>(n));
    for (float& e : x) e = 1.5f * normal(rng);
    return from_vector(x, s).to(dtype).to(gpu);
  };
  p.q = values({c.b, c.hq, c.sq, c.d});
  p.k = values({c.b, c.hkv, c.sk, c.d});
  p.v = values({c.b, c.hkv, c.sk, c.d});
  p.grad_out = values({c.b, c.hq, c.sq, c.d});
  p.mext = {c.keep.b ? c.b : 1, c.keep.h ? c.hq : 1, c.keep.i ? c.sq : 1, c.keep.j ? c.sk : 1};
  const auto mask = attention_test::random_mask(
      c.kind, dtype, p.mext, false, rng, normal, unit, [&](std::int64_t bb, std::int64_t i, std::int64_t j) {
        return (c.dead == Dead::rows && c.keep.i && (i == 1 || i == 5)) ||
               (c.dead == Dead::batch && c.keep.b && bb == 0) || (c.dead == Dead::left_padded && j < 70);
      });
  p.mask = mask.mask;
  p.mh = mask.bias;
  p.mstr = mask.strides;
  return p;
}

// Case c as the shared tests' problem shape (attention_test_problems.hpp).
attention_test::Problem shape_of(const Case& c) { return {c.b, c.hq, c.hkv, c.sq, c.sk, c.d, c.causal}; }

AttentionDesc desc_of(const Problem& p) {
  return attention_test::desc_of(shape_of(p.c), p.dtype, p.c.kind, p.mstr);
}

// Whether problem row (b, h, i) has no visible key (host, from the mask's values). A case that
// promises fully masked rows (Dead::rows, Dead::batch) must have some, or it tests nothing.
std::vector<bool> dead_rows(const Problem& p) {
  const Case& c = p.c;
  std::vector<bool> dead(static_cast<std::size_t>(c.b * c.hq * c.sq), true);
  for (std::int64_t b = 0; b < c.b; ++b)
    for (std::int64_t h = 0; h < c.hq; ++h)
      for (std::int64_t i = 0; i < c.sq; ++i)
        for (std::int64_t j = 0; j < c.sk; ++j) {
          const float m = p.mh[static_cast<std::size_t>(b * p.mstr[0] + h * p.mstr[1] + i * p.mstr[2] + j * p.mstr[3])];
          if (m != -INFINITY && !(c.causal && j > i)) {
            dead[static_cast<std::size_t>((b * c.hq + h) * c.sq + i)] = false;
            break;
          }
        }
  if (c.dead == Dead::rows || c.dead == Dead::batch)
    EXPECT_NE(std::count(dead.begin(), dead.end(), true), 0) << c.what(p.dtype) << ": the case has no dead row";
  return dead;
}

using Result = attention_test::ForwardOutputs;

// cudnn: sdpa::forward (which must plan the graph); else half_mma_forward. Outputs start as NaN
// so an unwritten element shows (attention_test::run_forward).
Result run(const Problem& p, bool cudnn) {
  const Case& c = p.c;
  const AttentionDesc d = desc_of(p);
  return run_forward(shape_of(c), p.dtype, p.q, p.k, p.v, p.mask.data_ptr(), [&](const attention::Pointers& ptr) {
    if (cudnn) {
      EXPECT_TRUE(sdpa::masked_eligible(d)) << c.what(p.dtype);
      EXPECT_TRUE(sdpa::forward(d, ptr, 0, stream0()))
          << c.what(p.dtype) << ": no plan, " << sdpa::cache_info(0).last_unsupported_reason;
    } else {
      EXPECT_TRUE(attention::half_mma_forward_fits(d, ptr)) << c.what(p.dtype);
      attention::half_mma_forward(d, ptr, stream0());
    }
  });
}

// The conformance suite's CUDA-vs-CPU tolerance (tests/conformance/attention_entries.cpp).
double rtol_of(DType dtype) { return dtype == DType::BF16 ? 3e-2 : 5e-3; }
double atol_of(DType dtype) { return dtype == DType::BF16 ? 1e-2 : 2e-3; }

// `got` against `expected` (out and logsumexp): dead rows exactly out 0 and logsumexp -inf in
// `got`, every other element finite and within the tolerance.
void expect_close(const Result& got, const Result& expected, const std::vector<bool>& dead, const Problem& p,
                  const std::string& against) {
  const std::string what = p.c.what(p.dtype) + " against " + against;
  const std::vector<float> o = host(got.out), e = host(expected.out), lo = host(got.lse), le = host(expected.lse);
  const double rtol = rtol_of(p.dtype), atol = atol_of(p.dtype);
  const std::size_t dv = static_cast<std::size_t>(p.c.d);
  std::size_t failures = 0;
  for (std::size_t n = 0; n < o.size(); ++n) {
    const bool ok = dead[n / dv] ? o[n] == 0.f && !std::signbit(o[n])
                                 : std::isfinite(o[n]) && std::abs(static_cast<double>(o[n]) - e[n]) <= atol + rtol * std::abs(e[n]);
    if (!ok && failures++ < 5)
      ADD_FAILURE() << what << ": out element " << n << " (row " << n / dv << (dead[n / dv] ? ", dead" : "")
                    << ") got " << o[n] << ", expected " << e[n];
  }
  for (std::size_t n = 0; n < lo.size(); ++n) {
    const bool ok = dead[n] ? lo[n] == -INFINITY
                            : std::isfinite(lo[n]) &&
                                  std::abs(static_cast<double>(lo[n]) - le[n]) <= 1e-3 + 1e-3 * std::abs(le[n]);
    if (!ok && failures++ < 10)
      ADD_FAILURE() << what << ": logsumexp row " << n << (dead[n] ? " (dead)" : "") << " got " << lo[n]
                    << ", expected " << le[n];
  }
  EXPECT_EQ(failures, 0u) << what;
}

Result cpu_forward(const Problem& p) {
  const Device cpu = Device::cpu();
  const nn::AttentionOptions o{.causal = p.c.causal, .mask = p.mask.to(cpu)};
  const auto r = nn::scaled_dot_product_attention(p.q.to(cpu), p.k.to(cpu), p.v.to(cpu), o);
  return {r.out, r.logsumexp};
}

// The CPU backend's gradients of p (its own forward first, as the reference of everything).
Grads cpu_backward(const Problem& p) {
  const Device cpu = Device::cpu();
  const nn::AttentionOptions o{.causal = p.c.causal, .mask = p.mask.to(cpu)};
  const Tensor q = p.q.to(cpu), k = p.k.to(cpu), v = p.v.to(cpu);
  const auto f = nn::scaled_dot_product_attention(q, k, v, o);
  const auto g = nn::scaled_dot_product_attention_backward(p.grad_out.to(cpu), q, k, v, f.out, f.logsumexp, o);
  return {g.dq, g.dk, g.dv};
}

// Gradients `got` against `expected`: every element finite and within atol + rtol |e| + rtol / 10
// of its tensor's largest |e| (`slack` times that: 2 where both sides are reduced-precision
// backwards, each that far from the exact), since a gradient sums many rounded terms (the rounded
// out feeds delta = rowsum(dO * out)); in `got`, the dq row of every fully masked row exactly 0,
// and dk and dv exactly 0 in a batch whose every row is fully masked (no row adds to them).
void expect_grads_close(const Grads& got, const Grads& expected, const std::vector<bool>& dead, const Problem& p,
                        const std::string& against, double slack = 1) {
  const Case& c = p.c;
  const std::string what = c.what(p.dtype) + " against " + against;
  const double rtol = slack * rtol_of(p.dtype), atol = slack * atol_of(p.dtype);
  // Batches whose every row is dead.
  std::vector<bool> dead_batch(static_cast<std::size_t>(c.b), true);
  for (std::size_t r = 0; r < dead.size(); ++r)
    if (!dead[r]) dead_batch[r / static_cast<std::size_t>(c.hq * c.sq)] = false;
  const std::array<std::pair<const Tensor*, const Tensor*>, 3> pairs{
      {{&got.dq, &expected.dq}, {&got.dk, &expected.dk}, {&got.dv, &expected.dv}}};
  const char* names[] = {"dq", "dk", "dv"};
  const std::size_t d = static_cast<std::size_t>(c.d);
  for (std::size_t t = 0; t < 3; ++t) {
    const std::vector<float> a = host(*pairs[t].first), e = host(*pairs[t].second);
    ASSERT_EQ(a.size(), e.size()) << what;
    double largest = 0;
    for (float x : e) largest = std::max(largest, std::abs(static_cast<double>(x)));
    // Elements a batch holds: dq [B, Hq, Sq, D], dk/dv [B, Hkv, Sk, D].
    const std::size_t per_batch = a.size() / static_cast<std::size_t>(c.b);
    std::size_t bad = 0;
    for (std::size_t n = 0; n < a.size(); ++n) {
      const bool must_be_zero = (t == 0 && dead[n / d]) || (t > 0 && dead_batch[n / per_batch]);
      const bool ok = must_be_zero ? a[n] == 0.f
                                   : std::isfinite(a[n]) && std::abs(static_cast<double>(a[n]) - e[n]) <=
                                                                atol + rtol * std::abs(e[n]) + rtol / 10 * largest;
      if (!ok && bad++ < 3)
        ADD_FAILURE() << what << ": " << names[t] << "[" << n << "]" << (must_be_zero ? " (must be 0)" : "") << " got "
                      << a[n] << ", expected " << e[n];
    }
    EXPECT_EQ(bad, 0u) << what << ", " << names[t];
  }
}

class CudnnMaskedForward : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    if (!sdpa::compiled()) GTEST_SKIP() << "built without the cuDNN frontend (scripts/install-deps.sh)";
    sdpa::clear_cache(0);
  }
};

const std::vector<Case>& cases() {
  static const std::vector<Case> list{
      // Key padding [B, 1, 1, Sk]: dead batch, left padding, causal, GQA, both D.
      {2, 4, 2, 200, 256, 128, false, kBool, kKeyPad, Dead::batch},
      {2, 4, 2, 200, 256, 64, true, kBool, kKeyPad, Dead::left_padded},
      {2, 4, 4, 130, 256, 128, true, kAdd, kKeyPad, Dead::batch},
      {2, 4, 1, 200, 256, 64, false, kAdd, kKeyPad, Dead::left_padded},
      // Full [B, Hq, Sq, Sk]: dead rows; Sk = 77 (the additive mask copied: rows not on 16 bytes).
      {2, 4, 2, 130, 256, 128, false, kBool, kFull, Dead::rows},
      {1, 2, 2, 130, 77, 64, true, kBool, kFull, Dead::rows},
      {2, 4, 2, 130, 256, 64, true, kAdd, kFull, Dead::rows},
      {1, 4, 2, 130, 77, 128, false, kAdd, kFull, Dead::rows},
      // [1, 1, Sq, Sk] (the benchmark's additive shape), causal with dead rows: rows hidden by the
      // mask and causal together.
      {2, 4, 2, 300, 256, 128, false, kAdd, kRowsKeys, Dead::rows},
      {2, 4, 2, 300, 256, 64, true, kAdd, kRowsKeys, Dead::left_padded},
      {2, 4, 2, 200, 200, 128, true, kBool, kRowsKeys, Dead::rows},
      {1, 4, 4, 200, 96, 64, false, kBool, kRowsKeys, Dead::none},
  };
  return list;
}

TEST_F(CudnnMaskedForward, AgreesWithTheOwnForwardAndTheCpu) {
  unsigned seed = 1;
  for (const Case& c : cases())
    for (const DType dtype : {DType::BF16, DType::F16}) {
      const Problem p = make(c, dtype, seed++);
      const std::vector<bool> dead = dead_rows(p);
      const Result got = run(p, true);
      expect_close(got, run(p, false), dead, p, "the own half-mma forward");
      expect_close(got, cpu_forward(p), dead, p, "the CPU backend");
    }
  EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << sdpa::cache_info(0).last_unsupported_reason;
}

// The backward through the front end (cuDNN's masked backward; the own kernels with
// FERRITE_ATTENTION_CUDNN_MASKS=off)
// reading cuDNN's out and logsumexp, against the CPU backend's forward and backward. Gradients sum many
// terms: besides the elementwise tolerance each may be off by rtol / 10 of its tensor's largest
// magnitude (the rounded out feeds delta = rowsum(dO * out)).
TEST_F(CudnnMaskedForward, OwnBackwardOnCudnnForwardAgreesWithTheCpu) {
  const Device cpu = Device::cpu();
  unsigned seed = 50;
  for (const Case& c : {cases()[0], cases()[2], cases()[5], cases()[9]})
    for (const DType dtype : {DType::BF16, DType::F16}) {
      const Problem p = make(c, dtype, seed++);
      const nn::AttentionOptions o{.causal = c.causal, .mask = p.mask};
      const nn::AttentionOptions oc{.causal = c.causal, .mask = p.mask.to(cpu)};
      const auto f = nn::scaled_dot_product_attention(p.q, p.k, p.v, o);
      EXPECT_GE(sdpa::cache_info(0).misses, 1) << "the forward went to cuDNN";
      const auto g = nn::scaled_dot_product_attention_backward(p.grad_out, p.q, p.k, p.v, f.out, f.logsumexp, o);
      const Tensor qc = p.q.to(cpu), kc = p.k.to(cpu), vc = p.v.to(cpu);
      const auto fc = nn::scaled_dot_product_attention(qc, kc, vc, oc);
      const auto gc = nn::scaled_dot_product_attention_backward(p.grad_out.to(cpu), qc, kc, vc, fc.out, fc.logsumexp, oc);
      const double rtol = rtol_of(dtype), atol = atol_of(dtype);
      const std::array<std::pair<Tensor, Tensor>, 3> grads{{{g.dq, gc.dq}, {g.dk, gc.dk}, {g.dv, gc.dv}}};
      const char* names[] = {"dq", "dk", "dv"};
      // Grouped dk and dv: cuDNN rounds each query head's gradient before summing the group
      // (attention_test_problems.hpp: grouped_rounding_slack).
      const std::int64_t group = c.hq / c.hkv;
      nn::AttentionGrads per_head;
      if (group > 1)
        per_head = nn::scaled_dot_product_attention_backward(p.grad_out.to(cpu), qc, attention_test::repeat_heads(kc, c.hq),
                                                             attention_test::repeat_heads(vc, c.hq), fc.out, fc.logsumexp, oc);
      for (std::size_t t = 0; t < 3; ++t) {
        const std::vector<float> a = host(grads[t].first), e = host(grads[t].second);
        const std::vector<double> slack =
            group > 1 && t > 0 ? attention_test::grouped_rounding_slack(t == 1 ? per_head.dk : per_head.dv, c.hkv, dtype)
                               : std::vector<double>(a.size(), 0.0);
        double largest = 0;
        for (float x : e) largest = std::max(largest, std::abs(static_cast<double>(x)));
        std::size_t bad = 0;
        for (std::size_t n = 0; n < a.size(); ++n)
          if (!(std::abs(static_cast<double>(a[n]) - e[n]) <=
                atol + rtol * std::abs(e[n]) + rtol / 10 * largest + slack[n]))
            if (bad++ < 3) ADD_FAILURE() << c.what(dtype) << ": " << names[t] << "[" << n << "] " << a[n] << " vs " << e[n];
        EXPECT_EQ(bad, 0u) << c.what(dtype) << ", " << names[t];
      }
    }
}

// The cache tells masks apart: the same masked problem again builds nothing; another mask layout
// (key padding against a full mask; Bool against additive), or no mask, builds a graph of its own.
TEST_F(CudnnMaskedForward, CacheDistinguishesMasks) {
  const Problem keypad = make({2, 4, 2, 128, 128, 64, false, kBool, kKeyPad, Dead::none}, DType::BF16, 3);
  (void)run(keypad, true);
  EXPECT_EQ(sdpa::cache_info(0).misses, 1);
  (void)run(keypad, true);
  EXPECT_EQ(sdpa::cache_info(0).misses, 1);
  EXPECT_EQ(sdpa::cache_info(0).hits, 1);
  const Problem full_mask = make({2, 4, 2, 128, 128, 64, false, kBool, kFull, Dead::none}, DType::BF16, 4);
  (void)run(full_mask, true);
  EXPECT_EQ(sdpa::cache_info(0).misses, 2);
  const Problem additive = make({2, 4, 2, 128, 128, 64, false, kAdd, kKeyPad, Dead::none}, DType::BF16, 5);
  (void)run(additive, true);
  EXPECT_EQ(sdpa::cache_info(0).misses, 3);
  (void)nn::scaled_dot_product_attention(keypad.q, keypad.k, keypad.v);  // unmasked: its own graph
  EXPECT_EQ(sdpa::cache_info(0).misses, 4);
  EXPECT_EQ(sdpa::cache_info(0).size, 4u);
  EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << sdpa::cache_info(0).last_unsupported_reason;
}

// Through the front end: a 2-D [Sq, Sk] mask (broadcast over B and Hq; row 5 fully masked) and a
// [B, 1, 1, Sk] one (batch 0 fully masked) go to cuDNN, forward and (non-causal grouped-query)
// backward, a graph each, unless FERRITE_ATTENTION_CUDNN_MASKS=off (then none is built), and
// agree with the CPU backend either way: out and logsumexp, and the gradients (dead rows' dq
// exactly 0, the dead batch's dk and dv exactly 0).
TEST_F(CudnnMaskedForward, FrontEndRoutesMaskedForwardsToCudnn) {
  const char* env = std::getenv("FERRITE_ATTENTION_CUDNN_MASKS");
  const bool on = env == nullptr || *env == '\0' || std::string(env) == "on";
  const Device gpu = Device::cuda(0), cpu = Device::cpu();
  Problem p = make({2, 4, 2, 200, 256, 128, false, kAdd, kKeyPad, Dead::batch}, DType::BF16, 9);
  std::vector<float> m2(200 * 256);
  std::mt19937 rng(10);
  for (float& x : m2) x = rng() % 4 == 0 ? -INFINITY : 0.5f;
  for (std::size_t i = 0; i < 256; ++i) m2[5 * 256 + i] = -INFINITY;  // row 5 fully masked
  const Tensor two_d_host = from_vector(m2, {200, 256}).to(DType::BF16);
  Problem two_d = p;  // the same inputs with the 2-D mask (its values as bias, broadcast strides)
  two_d.mask = two_d_host.to(gpu);
  two_d.mh = host(two_d_host);
  two_d.mstr = {0, 0, 256, 1};
  for (const Problem* pm : {&two_d, &p}) {
    const Tensor& mask = pm->mask;
    sdpa::clear_cache(0);
    const nn::AttentionOptions o{.causal = false, .mask = mask}, oc{.causal = false, .mask = mask.to(cpu)};
    const auto g = nn::scaled_dot_product_attention(p.q, p.k, p.v, o);
    EXPECT_EQ(sdpa::cache_info(0).misses, on ? 1 : 0);
    const auto grads = nn::scaled_dot_product_attention_backward(p.grad_out, p.q, p.k, p.v, g.out, g.logsumexp, o);
    EXPECT_EQ(sdpa::cache_info(0).misses, on ? 2 : 0) << "the masked backward's graph";
    EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << sdpa::cache_info(0).last_unsupported_reason;
    expect_grads_close({grads.dq, grads.dk, grads.dv}, cpu_backward(*pm), dead_rows(*pm), *pm, "the CPU backend");
    const auto r = nn::scaled_dot_product_attention(p.q.to(cpu), p.k.to(cpu), p.v.to(cpu), oc);
    const std::vector<float> a = host(g.out), e = host(r.out), la = host(g.logsumexp), le = host(r.logsumexp);
    std::size_t bad = 0;
    for (std::size_t n = 0; n < a.size(); ++n)
      if (!(std::abs(static_cast<double>(a[n]) - e[n]) <= 1e-2 + 3e-2 * std::abs(e[n]))) ++bad;
    for (std::size_t n = 0; n < la.size(); ++n)
      if (!(la[n] == le[n] || std::abs(static_cast<double>(la[n]) - le[n]) <= 1e-3 + 1e-3 * std::abs(le[n]))) ++bad;
    EXPECT_EQ(bad, 0u) << "mask of rank " << mask.dim();
  }
}

// A NaN in an additive mask: the own kernels make its row NaN (out and logsumexp), as PyTorch's
// softmax; what cuDNN gives is not specified (docs/families/nn.md), so it is only reported, as
// CudnnAttentionNaN does for NaN inputs. Rows without the NaN must still agree with the CPU.
TEST_F(CudnnMaskedForward, NaNInTheMaskIsReported) {
  Problem p = make({1, 2, 2, 64, 128, 64, false, kAdd, kRowsKeys, Dead::none}, DType::BF16, 77);
  p.mh[static_cast<std::size_t>(3 * 128 + 10)] = NAN;  // row 3, key 10
  p.mh[static_cast<std::size_t>(7 * 128 + 0)] = 0.f;   // row 7 sees key 0 at least
  p.mask = from_vector(p.mh, {1, 1, 64, 128}).to(DType::BF16).to(Device::cuda(0));
  const Result got = run(p, true);
  const std::vector<float> o = host(got.out), l = host(got.lse);
  std::cout << "cuDNN, NaN in the additive mask at row 3: logsumexp " << l[3] << ", out[0] " << o[3 * 64] << "; head 1: "
            << l[64 + 3] << "\n";
  // Rows 0..2 and 4.. are untouched by the NaN: close to the CPU.
  const Result cpu = cpu_forward(p);
  const std::vector<float> e = host(cpu.out);
  std::size_t bad = 0;
  for (std::size_t n = 0; n < o.size(); ++n)
    if ((n / 64) % 64 != 3 && !(std::abs(static_cast<double>(o[n]) - e[n]) <= 1e-2 + 3e-2 * std::abs(e[n]))) ++bad;
  EXPECT_EQ(bad, 0u);
}

// ---- Masked backwards on cuDNN ----

// The forward's cases for the backward, the causal grouped-query ones with Hkv = Hq: these tests
// hold cuDNN's gradients to the own backward's with the plain tolerance, which grouped ones
// (rounded per query head before the group sum) need not meet where causal problems' early keys
// gather large per-head gradients. OwnBackwardOnCudnnForwardAgreesWithTheCpu runs one grouped.
const std::vector<Case>& backward_cases() {
  static const std::vector<Case> list = [] {
    std::vector<Case> l = cases();
    for (Case& c : l)
      if (c.causal && c.hq != c.hkv) c.hkv = c.hq;
    return l;
  }();
  return list;
}

// The backward of p from the forward results f: cudnn, sdpa::backward with the mask (which must
// plan the graph; `deterministic` as AttentionOptions::deterministic); else the own F16/BF16
// tensor-core backward (backward_half_mma). Gradients start as NaN so an unwritten element shows.
Grads run_backward(const Problem& p, const Result& f, bool cudnn, bool deterministic = true) {
  const Device gpu = Device::cuda(0);
  AttentionDesc d = desc_of(p);
  d.deterministic = deterministic;
  const Grads g = nan_grads(p.q, p.k, p.v, p.dtype, gpu);
  const Tensor delta = zeros({p.c.b, p.c.hq, p.c.sq}, DType::F32, gpu);
  attention::Pointers ptr = backward_pointers(p.q, p.k, p.v, f.out, p.grad_out, f.lse, delta, g);
  ptr.mask = p.mask.data_ptr();
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  if (cudnn) {
    EXPECT_TRUE(sdpa::masked_eligible(d)) << p.c.what(p.dtype);
    EXPECT_TRUE(sdpa::backward(d, ptr, 0, stream0()))
        << p.c.what(p.dtype) << ": no plan, " << sdpa::cache_info(0).last_unsupported_reason;
  } else {
    EXPECT_TRUE(attention::half_mma_backward_fits(d, ptr)) << p.c.what(p.dtype);
    EXPECT_TRUE(attention::backward_half_mma(d, ptr, stream0())) << p.c.what(p.dtype);
  }
  EXPECT_EQ(cudaStreamSynchronize(stream0()), cudaSuccess);
  return g;
}

class CudnnMaskedBackward : public CudnnMaskedForward {};

// Every case, BF16 and F16, on cuDNN's masked forward: cuDNN's deterministic masked backward
// against the own tensor-core backward on the same out and logsumexp and against the CPU
// backend; fully masked rows (the +inf Stats) give dq rows exactly 0 and a dead batch dk = dv = 0;
// a second call repeats bit for bit.
TEST_F(CudnnMaskedBackward, AgreesWithTheOwnBackwardAndTheCpu) {
  unsigned seed = 200;
  for (const Case& c : backward_cases())
    for (const DType dtype : {DType::BF16, DType::F16}) {
      const Problem p = make(c, dtype, seed++);
      const std::vector<bool> dead = dead_rows(p);
      const Result f = run(p, true);
      const Grads got = run_backward(p, f, true);
      expect_grads_close(got, run_backward(p, f, false), dead, p, "the own half-mma backward", 2);
      expect_grads_close(got, cpu_backward(p), dead, p, "the CPU backend");
      const Grads again = run_backward(p, f, true);
      EXPECT_EQ(bits(again.dq), bits(got.dq)) << "dq repeats, " << c.what(dtype);
      EXPECT_EQ(bits(again.dk), bits(got.dk)) << "dk repeats, " << c.what(dtype);
      EXPECT_EQ(bits(again.dv), bits(got.dv)) << "dv repeats, " << c.what(dtype);
    }
  EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << sdpa::cache_info(0).last_unsupported_reason;
}

// deterministic = false: cuDNN's own choice of backward (a graph of its own, atomics allowed)
// with the same bias and Stats, against the CPU backend; dead rows exactly 0 as above.
TEST_F(CudnnMaskedBackward, NonDeterministicAgreesWithTheCpu) {
  unsigned seed = 300;
  const std::vector<Case>& list = backward_cases();
  for (const Case& c : {list[0], list[3], list[5], list[8], list[10]})
    for (const DType dtype : {DType::BF16, DType::F16}) {
      const Problem p = make(c, dtype, seed++);
      const Result f = run(p, true);
      expect_grads_close(run_backward(p, f, true, false), cpu_backward(p), dead_rows(p), p,
                         "the CPU backend (deterministic = false)");
    }
  EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << sdpa::cache_info(0).last_unsupported_reason;
}

// The cache: a masked backward's graph is its own (not the forward's, not the unmasked
// backward's); the same problem again builds nothing; another mask layout, and deterministic =
// false, build one each.
TEST_F(CudnnMaskedBackward, CacheDistinguishesMaskedBackwards) {
  const Problem keypad = make({2, 4, 2, 128, 128, 64, false, kBool, kKeyPad, Dead::none}, DType::BF16, 31);
  const Result f = run(keypad, true);
  EXPECT_EQ(sdpa::cache_info(0).misses, 1);
  (void)run_backward(keypad, f, true);
  EXPECT_EQ(sdpa::cache_info(0).misses, 2);
  (void)run_backward(keypad, f, true);
  EXPECT_EQ(sdpa::cache_info(0).misses, 2);
  (void)run_backward(keypad, f, true, false);
  EXPECT_EQ(sdpa::cache_info(0).misses, 3);
  const Problem full_mask = make({2, 4, 2, 128, 128, 64, false, kAdd, kFull, Dead::none}, DType::BF16, 32);
  (void)run_backward(full_mask, run(full_mask, true), true);
  EXPECT_EQ(sdpa::cache_info(0).misses, 5);  // its forward's graph and its backward's
  const auto plain = nn::scaled_dot_product_attention(keypad.q, keypad.k, keypad.v);  // unmasked: graphs of their own
  (void)nn::scaled_dot_product_attention_backward(keypad.grad_out, keypad.q, keypad.k, keypad.v, plain.out,
                                                  plain.logsumexp);
  EXPECT_EQ(sdpa::cache_info(0).misses, 7);
  EXPECT_EQ(sdpa::cache_info(0).size, 7u);
  EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << sdpa::cache_info(0).last_unsupported_reason;
}

bool cudnn_masks_on() {
  const char* env = std::getenv("FERRITE_ATTENTION_CUDNN_MASKS");
  return env == nullptr || *env == '\0' || std::string(env) == "on";
}

// Benchmark-sized: seconds natively, too slow under compute-sanitizer (as CudnnAttentionLarge).
class CudnnMaskedBackwardLarge : public CudnnMaskedBackward {};

// A deterministic masked backward whose whole dP (512 MiB) passes the work-area bound (256 MiB)
// runs in blocks, as CudnnAttentionLarge.DeterministicBackwardRunsInBlocks, with the bias pointer
// moved by the bias's own strides: blocks of one batch (B=4, H=4, S=4096, D=64) with a Bool
// key-padding mask [B, 1, 1, S] (its scratch copy moved a batch a block; batch 0 fully masked,
// the others padded at the end) and with an additive [1, 1, S, S] mask read in place, causal
// (stride 0 on the batch: every block reads the same bias; row 3 fully masked), and blocks of one
// key/value head with its four query heads (B=1, Hq=16, Hkv=4, non-causal) with an additive
// [1, Hq, S, S] mask (moved four heads a block). Through the front end: the pool's peak during
// the backward stays below half the whole dP; the gradients are bit for bit those of the
// blocks run as problems of their own (slices of the inputs, the mask sliced where it is not
// broadcast) and agree with cuDNN's non-deterministic backward (one graph, no dP); the dead rows'
// dq (and the dead batch's dk and dv) are exactly 0.
TEST_F(CudnnMaskedBackwardLarge, DeterministicBackwardRunsInBlocks) {
  if (!cudnn_masks_on()) GTEST_SKIP() << "FERRITE_ATTENTION_CUDNN_MASKS=off: masked backwards run on the own kernels";
  const Device gpu = Device::cuda(0);
  const std::int64_t s = 4096, d = 64, whole_dp = 2 * 16 * s * s;
  random::Generator generator(4321, gpu);
  for (int variant = 0; variant < 3; ++variant) {
    sdpa::clear_cache(0);
    const bool grouped = variant == 2, causal = variant == 1;
    const std::int64_t b = grouped ? 1 : 4, hq = grouped ? 16 : 4, hkv = 4, blocks = 4;
    auto normal = [&](Shape shape) {
      return random::randn(std::move(shape), DType::F32, gpu, &generator).to(DType::BF16);
    };
    const Tensor q = normal({b, hq, s, d}), k = normal({b, hkv, s, d}), v = normal({b, hkv, s, d}),
                 grad_out = normal({b, hq, s, d});
    Tensor mask;
    std::vector<bool> dead_row(static_cast<std::size_t>(b * hq * s), false);
    std::string what;
    if (variant == 0) {
      std::vector<bool> keep(static_cast<std::size_t>(b * s));
      for (std::int64_t bb = 0; bb < b; ++bb)
        for (std::int64_t j = 0; j < s; ++j) keep[static_cast<std::size_t>(bb * s + j)] = bb > 0 && j < s - 300 * bb;
      mask = from_vector(keep, {b, 1, 1, s}).to(gpu);
      for (std::int64_t r = 0; r < hq * s; ++r) dead_row[static_cast<std::size_t>(r)] = true;  // batch 0
      what = "blocks of batches, Bool key padding";
    } else if (variant == 1) {
      std::vector<float> m(static_cast<std::size_t>(s * s));
      for (std::int64_t i = 0; i < s; ++i)
        for (std::int64_t j = 0; j < s; ++j)
          m[static_cast<std::size_t>(i * s + j)] =
              i == 3 || (i * 7 + j * 13) % 11 == 0 ? -INFINITY : 0.25f * static_cast<float>((i + j) % 5);
      mask = from_vector(m, {1, 1, s, s}).to(DType::BF16).to(gpu);
      // Under causal, row i is dead when keys 0..i are all hidden (row 3; row 0 too, as (0) % 11 == 0).
      for (std::int64_t i = 0; i < s; ++i) {
        bool dead = true;
        for (std::int64_t j = 0; j <= i && dead; ++j) dead = m[static_cast<std::size_t>(i * s + j)] == -INFINITY;
        for (std::int64_t r = 0; dead && r < b * hq; ++r) dead_row[static_cast<std::size_t>(r * s + i)] = true;
      }
      what = "blocks of batches, additive [1, 1, S, S], causal";
    } else {
      mask = normal({1, hq, s, s});
      what = "blocks of heads, additive [1, Hq, S, S]";
    }
    const nn::AttentionOptions o{.causal = causal, .mask = mask};
    const auto f = nn::scaled_dot_product_attention(q, k, v, o);
    synchronize(gpu);
    const std::int64_t before = memory_stats(gpu).in_use_bytes;
    cuda::reset_peak_memory(0);
    const auto g = nn::scaled_dot_product_attention_backward(grad_out, q, k, v, f.out, f.logsumexp, o);
    synchronize(gpu);
    EXPECT_LT(memory_stats(gpu).peak_bytes - before, whole_dp / 2) << what;
    EXPECT_EQ(sdpa::cache_info(0).misses, 2) << what << ": the masked forward's graph and the backward's";
    EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << what << ": " << sdpa::cache_info(0).last_unsupported_reason;
    // The blocks as problems of their own (the [1, 1, S, S] mask is every block's).
    const attention_test::BlockSlices at{grouped, hq / hkv};
    attention_test::expect_same_as_blocks(g, at, blocks, grad_out, q, k, v, f.out, f.logsumexp, [&](std::int64_t i) {
      return nn::AttentionOptions{.causal = causal, .mask = variant == 1 ? mask : at.query_side(mask, i)};
    }, what);
    const nn::AttentionOptions fast{.causal = causal, .mask = mask, .deterministic = false};
    const auto n = nn::scaled_dot_product_attention_backward(grad_out, q, k, v, f.out, f.logsumexp, fast);
    EXPECT_EQ(conformance::compare(g.dq, n.dq, {3e-2, 1e-2}), "") << "dq against the non-deterministic, " << what;
    EXPECT_EQ(conformance::compare(g.dk, n.dk, {3e-2, 1e-2}), "") << "dk against the non-deterministic, " << what;
    EXPECT_EQ(conformance::compare(g.dv, n.dv, {3e-2, 1e-2}), "") << "dv against the non-deterministic, " << what;
    // Dead rows: dq exactly 0; batch 0 of the key padding adds nothing to its dk and dv.
    const std::vector<float> hdq = host(g.dq);
    std::size_t nonzero = 0;
    for (std::size_t e = 0; e < hdq.size(); ++e)
      if (dead_row[e / static_cast<std::size_t>(d)] && hdq[e] != 0.f) ++nonzero;
    if (variant == 0)
      for (const Tensor* t : {&g.dk, &g.dv}) {
        const std::vector<float> h = host(t->slice(0, 0, 1));
        for (float x : h) nonzero += x != 0.f;
      }
    EXPECT_EQ(nonzero, 0u) << what << ": gradients of fully masked rows";
    EXPECT_EQ(sdpa::cache_info(0).unsupported, 0) << what << ": " << sdpa::cache_info(0).last_unsupported_reason;
  }
}

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA
