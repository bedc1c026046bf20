// The 3xTF32 F32 attention forward and backward (src/cuda/attention/attention_f32_tf32x3.cu,
// attention_f32_tf32x3_bwd.cu), called directly, whatever FERRITE_ATTENTION_F32_TF32X3 says:
// both of their splits against the SIMT tiled kernels (attention_f32_tiled.cu,
// attention_f32_tiled_bwd.cu) on the same inputs, at the tolerances the tiled kernels are held
// to (forward: the conformance suite's F32 attention tolerance on CUDA, rtol 1e-4, atol 1e-5;
// gradients: rtol 2e-4, atol 1e-4, as attention_f32_tiled_test.cpp), on shapes that reach every
// edge of their tiles (ragged rows and keys, several row and key blocks, causal with Sq > Sk
// and Sq < Sk, GQA, Sk = 0, Sq = 0 for the backward), with NaN inputs, and bit for bit against
// themselves on a second run. The backward's 1xTF32 mode (Tf32Mode::single, for operands that
// TF32 holds exactly: F16/BF16 widened to F32) on inputs rounded to BF16 and F16 values, at a
// bound derived from its one rounding of P and dS (Tf32x3Attention.Single*).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "conformance/conformance.hpp"
#include "ferrite/cuda.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include <cuda_runtime_api.h>

#include "attention_test_problems.hpp"
#include "cuda/attention/attention_kernels.cuh"

namespace ferrite {
namespace {

namespace attention = cuda::attention;
using attention_test::backward_pointers;
using attention_test::bits;
using attention_test::expect_same_bits;
using attention_test::forward_pointers;
using attention_test::Grads;
using attention_test::host;
using attention_test::name_of;
using attention_test::nan_grads;
using attention_test::Problem;
using attention_test::rounded_to;

struct Result {
  Tensor out, lse;
};

AttentionDesc desc_of(const Problem& pr) { return attention_test::desc_of(pr, DType::F32); }

// kernel: 0 the SIMT tiled forward, 1 3xTF32 with rounded splits, 2 with fast splits.
Result run(const Problem& pr, const Tensor& q, const Tensor& k, const Tensor& v, int kernel) {
  const AttentionDesc d = desc_of(pr);
  const Device gpu = Device::cuda(0);
  Result r{empty({pr.b, pr.hq, pr.sq, pr.d}, DType::F32, gpu), empty({pr.b, pr.hq, pr.sq}, DType::F32, gpu)};
  const attention::Pointers p = forward_pointers(q, k, v, nullptr, r.out, r.lse);
  EXPECT_TRUE(attention::tiled_forward_f32_fits(d, p));
  const auto stream = static_cast<cudaStream_t>(cuda::current_stream(0));
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  if (kernel == 0)
    attention::tiled_forward_f32(d, p, stream);
  else
    attention::tiled_forward_f32_tf32x3(d, p, kernel == 2, stream);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  return r;
}

class Tf32x3Attention : public ::testing::Test {};

TEST_F(Tf32x3Attention, AgreesWithTheSimtKernel) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(91, gpu);
  for (const Problem& pr : {Problem{2, 2, 2, 77, 77, 64, false}, Problem{1, 3, 3, 130, 130, 128, true},
                            Problem{2, 4, 2, 130, 77, 64, true}, Problem{1, 4, 1, 77, 200, 128, false},
                            Problem{1, 2, 2, 40, 130, 64, true}, Problem{1, 2, 2, 300, 300, 128, true},
                            Problem{1, 4, 2, 517, 333, 128, false}, Problem{1, 2, 2, 1000, 1000, 128, true},
                            Problem{1, 2, 2, 20, 0, 128, false}}) {
    for (const bool normal : {false, true}) {
      auto make = [&](Shape s) {
        Tensor t = empty(std::move(s), DType::F32, gpu);
        return normal ? random::normal_(t, 0, 1, &generator) : random::uniform_(t, -1, 1, &generator);
      };
      const Tensor q = make({pr.b, pr.hq, pr.sq, pr.d});
      const Tensor k = make({pr.b, pr.hkv, pr.sk, pr.d});
      const Tensor v = make({pr.b, pr.hkv, pr.sk, pr.d});
      const Result simt = run(pr, q, k, v, 0);
      for (const int kernel : {1, 2}) {
        const Result tc = run(pr, q, k, v, kernel);
        const std::string what = "split " + std::to_string(kernel) + ", Sq " + std::to_string(pr.sq) + " Sk " +
                                 std::to_string(pr.sk) + " D " + std::to_string(pr.d) + (pr.causal ? " causal" : "") +
                                 (normal ? " randn" : " uniform");
        EXPECT_EQ(conformance::compare(tc.out, simt.out, {1e-4, 1e-5}), "") << "out, " << what;
        EXPECT_EQ(conformance::compare(tc.lse, simt.lse, {1e-4, 1e-5}), "") << "logsumexp, " << what;
        // Fixed reduction orders: a second run gives the same bits.
        const Result again = run(pr, q, k, v, kernel);
        EXPECT_EQ(bits(again.out), bits(tc.out)) << "out repeats, " << what;
        EXPECT_EQ(bits(again.lse), bits(tc.lse)) << "logsumexp repeats, " << what;
      }
    }
  }
}

// A NaN in a query row makes that row NaN (out and logsumexp), a NaN key makes every row that
// sees it NaN, and a key hidden by causal stays hidden; the other rows match the SIMT kernel.
TEST_F(Tf32x3Attention, NaNRowsAsTheSimtKernel) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(92, gpu);
  const Problem plain{1, 2, 2, 130, 70, 64, false}, causal{1, 2, 2, 130, 70, 64, true};
  const std::int64_t d = plain.d;
  std::vector<float> qh = host(random::randn({1, 2, 130, d}, DType::F32, gpu, &generator));
  std::vector<float> kh = host(random::randn({1, 2, 70, d}, DType::F32, gpu, &generator));
  const Tensor v = random::randn({1, 2, 70, d}, DType::F32, gpu, &generator);
  qh[static_cast<std::size_t>((0 * 130 + 129) * d + 3)] = NAN;  // head 0, query 129
  kh[static_cast<std::size_t>((1 * 70 + 69) * d + 5)] = NAN;    // head 1, key 69
  const Tensor q = from_vector(qh, {1, 2, 130, d}).to(gpu), k = from_vector(kh, {1, 2, 70, d}).to(gpu);
  for (const Problem& pr : {plain, causal}) {
    const Result simt = run(pr, q, k, v, 0);
    for (const int kernel : {1, 2}) {
      const Result tc = run(pr, q, k, v, kernel);
      const std::vector<float> o = host(tc.out), l = host(tc.lse), so = host(simt.out), sl = host(simt.lse);
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t row = 0; row < 130; ++row) {
          // Head 0: row 129 has the NaN query. Head 1: key 69 is NaN; causal hides it from rows < 69.
          const bool nan_row = h == 0 ? row == 129 : (!pr.causal || row >= 69);
          const std::size_t r = static_cast<std::size_t>(h * 130 + row);
          EXPECT_EQ(std::isnan(l[r]), nan_row) << "split " << kernel << " causal " << pr.causal << " head " << h << " row " << row;
          EXPECT_EQ(std::isnan(sl[r]), nan_row) << "SIMT, causal " << pr.causal << " head " << h << " row " << row;
          for (std::int64_t c = 0; c < d; ++c) {
            const std::size_t e = r * static_cast<std::size_t>(d) + static_cast<std::size_t>(c);
            if (nan_row)
              EXPECT_TRUE(std::isnan(o[e])) << "split " << kernel << " head " << h << " row " << row;
            else
              EXPECT_NEAR(o[e], so[e], 1e-5 + 1e-4 * std::abs(so[e])) << "split " << kernel << " head " << h << " row " << row;
          }
        }
    }
  }
}

// ---- The backward ----

// The routing predicate needs no device. Beyond the SIMT backward's, it wants the row and key
// tile counts (64 a tile) to fit grid y.
TEST(Tf32x3AttentionBackward, TakesWhatTheTiledBackwardTakesWithinGridY) {
  alignas(16) static float storage[8];
  attention::Pointers p;
  p.q = p.k = p.v = p.grad_out = p.out = storage;
  p.dq = p.dk = p.dv = storage;
  for (const std::int64_t d : {64, 128})
    for (const bool causal : {false, true}) {
      Problem pr{2, 4, 2, 77, 130, d, causal};
      EXPECT_TRUE(attention::tiled_backward_f32_tf32x3_fits(desc_of(pr), p)) << d;
      pr.sq = 0;
      EXPECT_TRUE(attention::tiled_backward_f32_tf32x3_fits(desc_of(pr), p)) << "Sq = 0, " << d;
      pr.sq = 20, pr.sk = 0;
      EXPECT_TRUE(attention::tiled_backward_f32_tf32x3_fits(desc_of(pr), p)) << "Sk = 0, " << d;
      pr.sq = pr.sk = 65535 * 64;
      EXPECT_TRUE(attention::tiled_backward_f32_tf32x3_fits(desc_of(pr), p)) << "65535 tiles, " << d;
      pr.sq = 65535 * 64 + 1;
      EXPECT_FALSE(attention::tiled_backward_f32_tf32x3_fits(desc_of(pr), p)) << "65536 row tiles, " << d;
      pr.sq = 20, pr.sk = 65535 * 64 + 1;
      EXPECT_FALSE(attention::tiled_backward_f32_tf32x3_fits(desc_of(pr), p)) << "65536 key tiles, " << d;
    }
  AttentionDesc other = desc_of(Problem{1, 2, 2, 64, 64, 80, false});
  EXPECT_FALSE(attention::tiled_backward_f32_tf32x3_fits(other, p)) << "D = 80";
  other = desc_of(Problem{1, 2, 2, 64, 64, 64, false});
  other.mask = AttentionMaskKind::Bool;
  EXPECT_FALSE(attention::tiled_backward_f32_tf32x3_fits(other, p)) << "explicit mask";
  attention::Pointers off = p;
  off.dk = storage + 1;  // off the 16-byte grid
  EXPECT_FALSE(attention::tiled_backward_f32_tf32x3_fits(desc_of(Problem{1, 2, 2, 64, 64, 64, false}), off));
}

// Infinite inputs: an infinite v element makes the outputs of the rows that weigh its key ±inf
// (as F32 arithmetic), an infinite q element makes its row's scores infinite (NaN rows), an
// infinite k element makes the scores of its key ±inf for every row. Both splits give the SIMT
// kernel's infinities and NaNs in the same places (the fast split clamps big to the largest
// finite TF32, so inf times a b that TF32 holds exactly is not inf * 0), and agree elsewhere.
TEST_F(Tf32x3Attention, InfinitiesAsTheSimtKernel) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(95, gpu);
  for (const std::int64_t d : {64, 128})
    for (const bool causal : {false, true})
      for (int which = 0; which < 3; ++which) {  // the infinity in q, k, v
        const Problem pr{1, 2, 2, 130, 70, d, causal};
        std::vector<float> qh = host(random::randn({1, 2, 130, d}, DType::F32, gpu, &generator));
        std::vector<float> kh = host(random::randn({1, 2, 70, d}, DType::F32, gpu, &generator));
        std::vector<float> vh = host(random::randn({1, 2, 70, d}, DType::F32, gpu, &generator));
        // Exactly representable neighbours: a TF32 split leaves them no small part.
        vh[static_cast<std::size_t>((0 * 70 + 10) * d + 8)] = 1.0f;
        kh[static_cast<std::size_t>((0 * 70 + 11) * d + 2)] = -0.5f;
        if (which == 0) qh[static_cast<std::size_t>((1 * 130 + 100) * d + 2)] = INFINITY;  // head 1, query 100
        if (which == 1) kh[static_cast<std::size_t>((1 * 70 + 40) * d + 4)] = -INFINITY;  // head 1, key 40
        if (which == 2) {
          vh[static_cast<std::size_t>((0 * 70 + 10) * d + 7)] = INFINITY;  // head 0, key 10
          vh[static_cast<std::size_t>((1 * 70 + 3) * d + 0)] = -INFINITY;  // head 1, key 3
        }
        const Tensor q = from_vector(qh, {1, 2, 130, d}).to(gpu), k = from_vector(kh, {1, 2, 70, d}).to(gpu);
        const Tensor v = from_vector(vh, {1, 2, 70, d}).to(gpu);
        const Result simt = run(pr, q, k, v, 0);
        bool any_inf = false;
        for (const float x : host(simt.out)) any_inf = any_inf || std::isinf(x) || std::isnan(x);
        EXPECT_TRUE(any_inf) << "the infinity reaches the SIMT output, input " << which;
        for (const int kernel : {1, 2}) {
          const Result tc = run(pr, q, k, v, kernel);
          const std::string what = "split " + std::to_string(kernel) + ", infinity in input " +
                                   std::to_string(which) + ", D " + std::to_string(d) + (causal ? " causal" : "");
          EXPECT_EQ(conformance::compare(tc.out, simt.out, {1e-4, 1e-5}), "") << "out, " << what;
          EXPECT_EQ(conformance::compare(tc.lse, simt.lse, {1e-4, 1e-5}), "") << "logsumexp, " << what;
        }
      }
}

// The backward's inputs: q, k, v, grad_out, and the SIMT tiled forward's out and logsumexp, with
// delta as backward() computes it (delta_kernel, before whichever dq and dk/dv kernels it picks).
struct BackwardInputs {
  Problem pr;
  Tensor q, k, v, go, out, lse, delta;
};

// The backward's operands from `in`, its gradients into g's tensors.
attention::Pointers backward_pointers(const BackwardInputs& in, const Grads& g) {
  return backward_pointers(in.q, in.k, in.v, in.out, in.go, in.lse, in.delta, g);
}

BackwardInputs prepare(const Problem& pr, Tensor q, Tensor k, Tensor v, Tensor go) {
  const Device gpu = Device::cuda(0);
  BackwardInputs in{pr, std::move(q), std::move(k), std::move(v), std::move(go),
                    zeros({pr.b, pr.hq, pr.sq, pr.d}, DType::F32, gpu), zeros({pr.b, pr.hq, pr.sq}, DType::F32, gpu),
                    zeros({pr.b, pr.hq, pr.sq}, DType::F32, gpu)};
  if (pr.sq == 0) return in;  // nothing to run forward: the dk/dv kernel reads none of them
  Result fwd = run(pr, in.q, in.k, in.v, 0);
  in.out = fwd.out;
  in.lse = fwd.lse;
  const Grads scratch{empty(in.q.shape(), DType::F32, gpu), empty(in.k.shape(), DType::F32, gpu),
                      empty(in.v.shape(), DType::F32, gpu)};
  const attention::Pointers p = backward_pointers(in, scratch);
  const auto stream = static_cast<cudaStream_t>(cuda::current_stream(0));
  attention::backward(desc_of(pr), p, stream);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  return in;
}

// kernel: 0 the SIMT tiled backward, else the tensor-core backward in Tf32Mode(kernel): 1 3xTF32
// with rounded splits, 2 with fast splits, 3 1xTF32. The gradients start as NaN, so an element a
// kernel fails to write shows.
Grads run_backward(const BackwardInputs& in, int kernel) {
  const Problem& pr = in.pr;
  const AttentionDesc d = desc_of(pr);
  const Device gpu = Device::cuda(0);
  const Grads g = nan_grads(in.q, in.k, in.v, DType::F32, gpu);
  const attention::Pointers p = backward_pointers(in, g);
  EXPECT_TRUE(attention::tiled_backward_f32_tf32x3_fits(d, p));
  const auto stream = static_cast<cudaStream_t>(cuda::current_stream(0));
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  if (pr.sq > 0) {
    if (kernel == 0)
      attention::tiled_backward_dq_f32(d, p, stream);
    else
      attention::tiled_backward_dq_f32_tf32x3(d, p, static_cast<attention::Tf32Mode>(kernel), stream);
  }
  if (pr.sk > 0) {
    if (kernel == 0)
      attention::tiled_backward_dkdv_f32(d, p, stream);
    else
      attention::tiled_backward_dkdv_f32_tf32x3(d, p, static_cast<attention::Tf32Mode>(kernel), stream);
  }
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  return g;
}

// Every gradient of both splits within the tiled kernels' gradient tolerance of the SIMT
// backward's, and the same bits on a second run.
void expect_backward_agrees(const BackwardInputs& in, const std::string& what0) {
  const Grads simt = run_backward(in, 0);
  for (const int kernel : {1, 2}) {
    const Grads tc = run_backward(in, kernel);
    const std::string what = "split " + std::to_string(kernel) + ", " + what0;
    EXPECT_EQ(conformance::compare(tc.dq, simt.dq, {2e-4, 1e-4}), "") << "dq, " << what;
    EXPECT_EQ(conformance::compare(tc.dk, simt.dk, {2e-4, 1e-4}), "") << "dk, " << what;
    EXPECT_EQ(conformance::compare(tc.dv, simt.dv, {2e-4, 1e-4}), "") << "dv, " << what;
    expect_same_bits(run_backward(in, kernel), tc, what);
  }
}

TEST_F(Tf32x3Attention, BackwardAgreesWithTheSimtKernels) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(93, gpu);
  for (const Problem& pr : {Problem{2, 2, 2, 77, 77, 64, false}, Problem{1, 3, 3, 130, 130, 128, true},
                            Problem{2, 4, 2, 130, 77, 64, true}, Problem{1, 4, 1, 77, 200, 128, false},
                            Problem{1, 2, 2, 40, 130, 64, true}, Problem{1, 2, 2, 300, 300, 128, true},
                            Problem{1, 4, 2, 517, 333, 128, false}, Problem{1, 2, 2, 1000, 1000, 128, true},
                            Problem{1, 6, 2, 200, 330, 64, true}, Problem{1, 2, 2, 20, 0, 128, false},
                            Problem{1, 2, 2, 0, 20, 64, false}, Problem{1, 2, 1, 0, 90, 128, true}}) {
    for (const bool normal : {false, true}) {
      auto make = [&](Shape s) {
        Tensor t = empty(std::move(s), DType::F32, gpu);
        return normal ? random::normal_(t, 0, 1, &generator) : random::uniform_(t, -1, 1, &generator);
      };
      Tensor q = make({pr.b, pr.hq, pr.sq, pr.d}), go = make({pr.b, pr.hq, pr.sq, pr.d});
      Tensor k = make({pr.b, pr.hkv, pr.sk, pr.d}), v = make({pr.b, pr.hkv, pr.sk, pr.d});
      const BackwardInputs in = prepare(pr, std::move(q), std::move(k), std::move(v), std::move(go));
      expect_backward_agrees(in, name_of(pr) + (normal ? " randn" : " uniform"));
    }
  }
}

// The NaN tests' inputs (B 1, Hq 4, Hkv 2) from host values, with a NaN in input `which`: 0 q
// (head 0, query 100), 1 k (kv head 1, key 69), 2 v (kv head 0, key 10), 3 grad_out (head 3,
// query 129).
BackwardInputs prepare_with_nan(const Problem& pr, std::vector<float> qh, std::vector<float> kh, std::vector<float> vh,
                                std::vector<float> gh, int which) {
  const Device gpu = Device::cuda(0);
  const std::int64_t sq = pr.sq, sk = pr.sk, d = pr.d;
  if (which == 0) qh[static_cast<std::size_t>((0 * sq + 100) * d + 3)] = NAN;
  if (which == 1) kh[static_cast<std::size_t>((1 * sk + 69) * d + 5)] = NAN;
  if (which == 2) vh[static_cast<std::size_t>((0 * sk + 10) * d + 7)] = NAN;
  if (which == 3) gh[static_cast<std::size_t>((3 * sq + 129) * d + 1)] = NAN;
  return prepare(pr, from_vector(qh, {1, 4, sq, d}).to(gpu), from_vector(kh, {1, 2, sk, d}).to(gpu),
                 from_vector(vh, {1, 2, sk, d}).to(gpu), from_vector(gh, {1, 4, sq, d}).to(gpu));
}

// A NaN in q, k, v or grad_out: the gradients it reaches are NaN exactly where the SIMT
// backward's are (a zero weight times a NaN operand is NaN in both: the NaN spreads through
// whole 64-row or 64-key tiles alike), and the rest agree. One head of each GQA group carries
// the NaN, so its partner head and the other group stay finite.
TEST_F(Tf32x3Attention, BackwardNaNAsTheSimtKernels) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(94, gpu);
  const std::int64_t sq = 130, sk = 70;
  for (const std::int64_t d : {64, 128})
    for (const bool causal : {false, true})
      for (int which = 0; which < 4; ++which) {  // the NaN in q, k, v, grad_out
        const Problem pr{1, 4, 2, sq, sk, d, causal};
        std::vector<float> qh = host(random::randn({1, 4, sq, d}, DType::F32, gpu, &generator));
        std::vector<float> kh = host(random::randn({1, 2, sk, d}, DType::F32, gpu, &generator));
        std::vector<float> vh = host(random::randn({1, 2, sk, d}, DType::F32, gpu, &generator));
        std::vector<float> gh = host(random::randn({1, 4, sq, d}, DType::F32, gpu, &generator));
        const BackwardInputs in =
            prepare_with_nan(pr, std::move(qh), std::move(kh), std::move(vh), std::move(gh), which);
        const Grads simt = run_backward(in, 0);
        bool any_nan = false;
        for (const Tensor* t : {&simt.dq, &simt.dk, &simt.dv})
          for (const float x : host(*t)) any_nan = any_nan || std::isnan(x);
        EXPECT_TRUE(any_nan) << "the NaN reaches the SIMT gradients, input " << which;
        expect_backward_agrees(in, "NaN in input " + std::to_string(which) + ", D " + std::to_string(d) +
                                       (causal ? " causal" : ""));
      }
}

// ---- The backward in 1xTF32 (Tf32Mode::single) ----
//
// Its arithmetic against the SIMT backward's plain F32 on the same inputs, which TF32 holds
// exactly (F32 tensors rounded to BF16 or F16 values, as the half route's widened operands):
// q.k and dO.v multiply exactly in both, with F32 sums; only the F32 intermediates P and dS are
// rounded to nearest TF32 before their products (dV = P^T dO, dK = scale dS^T Q, dQ = scale dS
// K), each by a relative delta with |delta| <= 2^-11. A gradient element e = sum_t t over its
// product terms t then moves by sum_t delta_t t, at most 2^-11 sum_t |t|. The tolerance is that
// bound, per element, on top of the 3xTF32 one (2e-4 |e| + 1e-4: F32 sums in other orders):
//   |a - e| <= 2e-4 |e| + 1e-4 + 1.01 x 2^-11 sum_t |t|
// (1.01: the host's sums are of the exact P and dS, the kernel rounds F32 ones). A fixed
// multiple of |e| would not do: e cancels where sum |t| does not, and the host emulation of these
// shapes (scripts/attention-tf32x1-emulation.py: P and dS rounded to nearest TF32, the rest
// exact) moved elements by up to 1.28 x 2^-8 (|e| + rms(e)), where the sum |t| of a causal
// problem's first keys is large; against the bound, by up to 0.96 of it (elements of one or two
// terms: a causal row 0's dq, the last keys' dk and dv). A fault (a lost MMA, a wrong fragment,
// P or dS truncated rather than rounded) breaks the bound: it moves an element by whole terms,
// or every P in one direction.
struct TermSums {
  std::vector<double> dq, dk, dv;
};

// sum_t |t| of every gradient element, in double on the host from in's values over the visible
// pairs: dq_ic: scale sum_j |dS_ij| |k_jc|; dk_jc: scale sum over the group's query heads and i
// of |dS_ij| |q_ic|; dv_jc: sum over them of P_ij |dO_ic|. P and dS come from q, k, v and dO
// as the reference computes them (softmax over the visible keys, delta = dO . P V); a NaN input
// makes the sums it reaches NaN.
TermSums term_sums(const BackwardInputs& in) {
  const Problem& pr = in.pr;
  const std::vector<float> q = host(in.q), k = host(in.k), v = host(in.v), go = host(in.go);
  const std::int64_t D = pr.d;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  TermSums t{std::vector<double>(q.size(), 0.0), std::vector<double>(k.size(), 0.0),
             std::vector<double>(v.size(), 0.0)};
  std::vector<double> p(static_cast<std::size_t>(pr.sk)), ds(p.size()), o(static_cast<std::size_t>(D));
  attention_test::for_each_query_row(pr, [&](const attention_test::QueryRow& r) {
    double mx = -INFINITY;
    for (std::int64_t j = 0; j < r.keys; ++j) {
      p[static_cast<std::size_t>(j)] = scale * r.dot(q, k, j);
      mx = std::max(mx, p[static_cast<std::size_t>(j)]);
    }
    double l = 0;
    for (std::int64_t j = 0; j < r.keys; ++j)
      l += (p[static_cast<std::size_t>(j)] = std::exp(p[static_cast<std::size_t>(j)] - mx));
    std::fill(o.begin(), o.end(), 0.0);
    for (std::int64_t j = 0; j < r.keys; ++j) {
      p[static_cast<std::size_t>(j)] /= l;
      for (std::int64_t c = 0; c < D; ++c)
        o[static_cast<std::size_t>(c)] += p[static_cast<std::size_t>(j)] * v[r.kv_at(j, c)];
    }
    double delta = 0;
    for (std::int64_t c = 0; c < D; ++c) delta += go[r.q_at(c)] * o[static_cast<std::size_t>(c)];
    for (std::int64_t j = 0; j < r.keys; ++j) {
      const double pj = p[static_cast<std::size_t>(j)], dsj = std::abs(pj * (r.dot(go, v, j) - delta));
      for (std::int64_t c = 0; c < D; ++c) {
        const std::size_t ei = r.q_at(c), ej = r.kv_at(j, c);
        t.dq[ei] += scale * dsj * std::abs(k[ej]);
        t.dk[ej] += scale * dsj * std::abs(q[ei]);
        t.dv[ej] += pj * std::abs(go[ei]);
      }
    }
  });
  return t;
}

// got against the SIMT backward's `simt` within the bound above; NaN exactly where simt is NaN.
void expect_within_single_bound(const Tensor& got, const Tensor& simt, const std::vector<double>& sums,
                                const std::string& what) {
  const std::vector<float> a = host(got), e = host(simt);
  ASSERT_EQ(a.size(), sums.size()) << what;
  std::size_t failures = 0;
  for (std::size_t n = 0; n < a.size(); ++n) {
    const double bound = 2e-4 * std::abs(e[n]) + 1e-4 + 1.01 * std::ldexp(sums[n], -11);
    const bool ok = std::isnan(e[n]) ? std::isnan(a[n]) : std::abs(static_cast<double>(a[n]) - e[n]) <= bound;
    if (!ok && failures++ < 5)
      ADD_FAILURE() << what << ": element " << n << " got " << a[n] << ", SIMT " << e[n] << ", bound " << bound
                    << " (term sum " << sums[n] << ")";
  }
  EXPECT_EQ(failures, 0u) << what;
}

// The gradients of 1xTF32 within the bound of the SIMT backward's, NaN where its are, and the
// same bits on a second run.
void expect_single_agrees(const BackwardInputs& in, const std::string& what0) {
  const Grads simt = run_backward(in, 0);
  const Grads tc = run_backward(in, 3);
  const TermSums sums = term_sums(in);
  const std::string what = "1xTF32, " + what0;
  expect_within_single_bound(tc.dq, simt.dq, sums.dq, "dq, " + what);
  expect_within_single_bound(tc.dk, simt.dk, sums.dk, "dk, " + what);
  expect_within_single_bound(tc.dv, simt.dv, sums.dv, "dv, " + what);
  expect_same_bits(run_backward(in, 3), tc, what);
}

TEST_F(Tf32x3Attention, SingleBackwardAgreesWithTheSimtKernelsOnHalfValues) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(96, gpu);
  for (const Problem& pr : attention_test::backward_problems()) {
    for (const bool normal : {false, true})
      for (const DType half : {DType::BF16, DType::F16}) {
        auto make = [&](Shape s) { return attention_test::half_values(std::move(s), normal, half, gpu, generator); };
        Tensor q = make({pr.b, pr.hq, pr.sq, pr.d}), go = make({pr.b, pr.hq, pr.sq, pr.d});
        Tensor k = make({pr.b, pr.hkv, pr.sk, pr.d}), v = make({pr.b, pr.hkv, pr.sk, pr.d});
        const BackwardInputs in = prepare(pr, std::move(q), std::move(k), std::move(v), std::move(go));
        expect_single_agrees(in, std::string(dtype_name(half)) + " values, " + name_of(pr) +
                                     (normal ? " randn" : " uniform"));
      }
  }
}

// As BackwardNaNAsTheSimtKernels, in 1xTF32 on BF16 values: a NaN reaches the MMAs as its F32
// bits (a quiet NaN keeps mantissa bits among TF32's 10), and a NaN P or dS survives its
// rounding (cvt.rn.tf32.f32), so the NaN gradients are the SIMT backward's.
TEST_F(Tf32x3Attention, SingleBackwardNaNAsTheSimtKernels) {
  const Device gpu = Device::cuda(0);
  random::Generator generator(97, gpu);
  const std::int64_t sq = 130, sk = 70;
  for (const std::int64_t d : {64, 128})
    for (const bool causal : {false, true})
      for (int which = 0; which < 4; ++which) {  // the NaN in q, k, v, grad_out
        const Problem pr{1, 4, 2, sq, sk, d, causal};
        auto values = [&](Shape s) {
          return host(rounded_to(random::randn(std::move(s), DType::F32, gpu, &generator), DType::BF16));
        };
        std::vector<float> qh = values({1, 4, sq, d}), kh = values({1, 2, sk, d});
        std::vector<float> vh = values({1, 2, sk, d}), gh = values({1, 4, sq, d});
        const BackwardInputs in =
            prepare_with_nan(pr, std::move(qh), std::move(kh), std::move(vh), std::move(gh), which);
        expect_single_agrees(in, "NaN in input " + std::to_string(which) + ", D " + std::to_string(d) +
                                     (causal ? " causal" : ""));
      }
}

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA
