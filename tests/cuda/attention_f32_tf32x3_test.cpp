// The 3xTF32 F32 attention forward (src/cuda/attention/attention_f32_tf32x3.cu), called
// directly, whatever FERRITE_ATTENTION_F32_TF32X3 says: both of its splits against the SIMT
// tiled forward (attention_f32_tiled.cu) on the same inputs, at the tolerance the conformance
// suite gives F32 attention on CUDA (rtol 1e-4, atol 1e-5), on shapes that reach every edge
// of its tiles (ragged rows and keys, several row blocks, causal with Sq > Sk and Sq < Sk, GQA,
// Sk = 0), with NaN rows, and bit for bit against itself on a second run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "conformance/conformance.hpp"
#include "ferrite/cuda.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda/attention/attention_kernels.cuh"

namespace ferrite {
namespace {

namespace attention = cuda::attention;

struct Problem {
  std::int64_t b, hq, hkv, sq, sk, d;
  bool causal;
};

struct Result {
  Tensor out, lse;
};

// kernel: 0 the SIMT tiled forward, 1 3xTF32 with rounded splits, 2 with fast splits.
Result run(const Problem& pr, const Tensor& q, const Tensor& k, const Tensor& v, int kernel) {
  AttentionDesc d;
  d.dtype = DType::F32;
  d.batch = pr.b;
  d.heads_q = pr.hq;
  d.heads_kv = pr.hkv;
  d.seq_q = pr.sq;
  d.seq_k = pr.sk;
  d.head_dim = d.value_dim = pr.d;
  d.causal = pr.causal;
  d.scale = 1.0 / std::sqrt(static_cast<double>(pr.d));
  d.set_row_major_strides();
  const Device gpu = Device::cuda(0);
  Result r{empty({pr.b, pr.hq, pr.sq, pr.d}, DType::F32, gpu), empty({pr.b, pr.hq, pr.sq}, DType::F32, gpu)};
  attention::Pointers p;
  p.q = q.data_ptr();
  p.k = k.data_ptr();
  p.v = v.data_ptr();
  p.result = r.out.mutable_data_ptr();
  p.logsumexp = r.lse.mutable_data_ptr();
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

std::vector<float> host(const Tensor& t) { return t.to(Device::cpu()).contiguous().to_vector<float>(); }

class Tf32x3Attention : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

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
        EXPECT_EQ(host(again.out), host(tc.out)) << "out repeats, " << what;
        EXPECT_EQ(host(again.lse), host(tc.lse)) << "logsumexp repeats, " << what;
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

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA
