// The fused optimizers on tensors that are contiguous views off the 16-byte grid (parameters and
// state packed into one flat buffer without padding): Tensor::buffer() of such a view is a copy,
// and the step once wrote its update there, so the caller's tensors silently kept their values.
// Each step must give the bits of the same step on aligned tensors.
#include <gtest/gtest.h>

#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

// A contiguous view of `like`'s shape and dtype one element into a fresh storage, holding like's values.
Tensor unaligned_copy(const Tensor& like) {
  const Tensor storage = zeros({like.numel() + 1}, like.dtype(), like.device());
  const Tensor view = storage.slice(0, 1, like.numel() + 1).view(like.shape());
  view.copy_(like);
  return view;
}

std::vector<float> floats(const Tensor& t) { return t.to(DType::F32).to_vector<float>(); }

TEST(OptimUnaligned, SgdWithMomentumUpdatesViewsOffTheGrid) {
  random::manual_seed(3);
  const Tensor p = random::randn({3, 5}), g = random::randn({3, 5}), buf = zeros({3, 5});
  const Tensor p_view = unaligned_copy(p), buf_view = unaligned_copy(buf), g_view = unaligned_copy(g);
  const optim::SgdOptions o{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01};
  for (int step = 0; step < 2; ++step) {
    optim::sgd({.params = {p}, .grads = {g}, .momentum_buffers = {buf}}, step == 0, o);
    optim::sgd({.params = {p_view}, .grads = {g_view}, .momentum_buffers = {buf_view}}, step == 0, o);
  }
  EXPECT_EQ(floats(p_view), floats(p));
  EXPECT_EQ(floats(buf_view), floats(buf));
}

TEST(OptimUnaligned, AdamWithMasterWeightsUpdatesViewsOffTheGrid) {
  random::manual_seed(4);
  const Tensor master = random::randn({7}), g = random::randn({7}).to(DType::BF16);
  const Tensor p = master.to(DType::BF16), m = zeros({7}), v = zeros({7}), master_aligned = master.clone();
  const Tensor p_view = unaligned_copy(p), m_view = unaligned_copy(m), v_view = unaligned_copy(v),
               master_view = unaligned_copy(master);
  const optim::AdamOptions o{.lr = 0.01, .weight_decay = 0.1};
  for (std::int64_t step = 1; step <= 2; ++step) {
    optim::adamw({.params = {p}, .grads = {g}, .exp_avgs = {m}, .exp_avg_sqs = {v}, .master_params = {master_aligned}},
                 step, o);
    optim::adamw({.params = {p_view}, .grads = {g}, .exp_avgs = {m_view}, .exp_avg_sqs = {v_view},
                  .master_params = {master_view}},
                 step, o);
  }
  EXPECT_NE(floats(master_aligned), floats(master));  // the step did something
  EXPECT_EQ(floats(p_view), floats(p));
  EXPECT_EQ(floats(m_view), floats(m));
  EXPECT_EQ(floats(v_view), floats(v));
  EXPECT_EQ(floats(master_view), floats(master_aligned));
}

}  // namespace
}  // namespace ferrite
