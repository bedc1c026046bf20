// Every public API that writes into a caller's tensor (the *_out functions, in-place ops and
// members, compound assignment, strided_scatter/slice_write, the random fills, the optimizers,
// attention's backward_out), given a target that is
//   Offset:     a contiguous view one element into its storage (off the 16-byte grid),
//   Strided:    a view with gaps (every other element), also off the grid,
//   Transposed: a transposed view (rank 2), also off the grid,
//   Blob:       from_blob over caller memory one element past the 16-byte grid (its own
//               storage, offset 0: the pointer, not the offset, is off the grid),
// must leave there the values the same call gives into a fresh tensor, and leave the storage
// around the view alone. Tensor::buffer() of such a view is a dense copy, so an op that wrote
// its result through target.buffer() once lost it silently (matmul_out, attention backward_out,
// the optimizers and normal_/uniform_ did). APIs that refuse a layout are checked to refuse it
// with the documented error kind instead.
#include <gtest/gtest.h>

#include <functional>
#include <new>
#include <string>
#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

enum class Layout { Offset, Strided, Transposed, Blob };

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Offset:
      return "offset";
    case Layout::Strided:
      return "strided";
    case Layout::Transposed:
      return "transposed";
    case Layout::Blob:
      return "from_blob";
  }
  return "?";
}

constexpr double kSentinel = -1234;  // fills the storage around a target view

// A target view of `shape` and `dtype` in `layout`, inside a storage holding kSentinel.
struct Target {
  Tensor storage, view;
};

Target make_target(const Shape& shape, DType dtype, Layout layout) {
  const std::int64_t n = shape_numel(shape);
  Target t;
  switch (layout) {
    case Layout::Offset:
      t.storage = full({n + 2}, kSentinel, dtype);
      t.view = t.storage.narrow(0, 1, n).view(shape);
      EXPECT_TRUE(t.view.is_contiguous());
      break;
    case Layout::Strided: {
      t.storage = full({2 * n + 2}, kSentinel, dtype);
      Strides strides(shape.size());
      std::int64_t s = 2;
      for (std::size_t k = shape.size(); k-- > 0;) {
        strides[k] = s;
        s *= shape[k];
      }
      t.view = t.storage.as_strided(shape, strides, 1);
      EXPECT_FALSE(t.view.is_contiguous() && n > 1);
      break;
    }
    case Layout::Transposed:
      EXPECT_EQ(shape.size(), 2u);
      t.storage = full({n + 2}, kSentinel, dtype);
      t.view = t.storage.narrow(0, 1, n).view({shape[1], shape[0]}).t();
      break;
    case Layout::Blob: {
      // 64-byte aligned caller memory; `storage` owns it and sees the sentinels, `view` wraps
      // the elements from the second one on (declared after storage, so destroyed first).
      const std::size_t bytes = static_cast<std::size_t>(n + 2) * dtype_size(dtype);
      auto* memory = new (std::align_val_t(64)) unsigned char[bytes];
      t.storage = from_blob(memory, {n + 2}, dtype, Device::cpu(),
                            [](void* m) { operator delete[](static_cast<unsigned char*>(m), std::align_val_t(64)); });
      t.storage.fill_(kSentinel);
      t.view = from_blob(memory + dtype_size(dtype), shape, dtype);
      EXPECT_EQ(t.view.storage_offset(), 0);
      break;
    }
  }
  return t;
}

std::vector<double> values(const Tensor& t) { return t.to(DType::F64).to_vector<double>(); }

std::int64_t sentinels(const Tensor& storage) {
  const double sentinel = values(full({1}, kSentinel, storage.dtype()))[0];  // as the dtype rounds it
  std::int64_t count = 0;
  for (const double v : values(storage)) count += v == sentinel;
  return count;
}

// `op` writes into its argument. Into a fresh tensor holding `init`, and into each layout of
// target holding init: the targets must end with the fresh tensor's values, and every storage
// element outside the view must still be the sentinel.
void expect_same_writes(const std::string& what, const Tensor& init, const std::function<void(const Tensor&)>& op,
                        std::vector<Layout> layouts = {Layout::Offset, Layout::Strided, Layout::Blob}) {
  if (init.dim() == 2 && layouts.size() == 3) layouts.push_back(Layout::Transposed);
  const Tensor fresh = init.clone();
  op(fresh);
  const std::vector<double> expected = values(fresh);
  for (const Layout l : layouts) {
    const Target t = make_target(init.shape(), init.dtype(), l);
    t.view.copy_(init);
    op(t.view);
    EXPECT_EQ(values(t.view), expected) << what << " into a " << layout_name(l) << " view";
    EXPECT_EQ(sentinels(t.storage), t.storage.numel() - init.numel())
        << what << " into a " << layout_name(l) << " view wrote outside it";
  }
}

// A target in `layout` holding `init`'s values.
Tensor view_of(const Tensor& init, Layout layout, Target* keep) {
  *keep = make_target(init.shape(), init.dtype(), layout);
  keep->view.copy_(init);
  return keep->view;
}

Tensor randn_f32(Shape shape, std::uint64_t seed) {
  random::Generator g(seed);
  return random::randn(std::move(shape), DType::F32, Device::cpu(), &g);
}

// ---- elementwise *_out and the in-place arithmetic -------------------------------------------

TEST(UnalignedOutputs, ElementwiseOut) {
  const Tensor a = randn_f32({3, 5}, 1), b = randn_f32({3, 5}, 2) + 3.0, row = randn_f32({5}, 3);
  const Tensor init = zeros({3, 5});
  expect_same_writes("add_out", init, [&](const Tensor& out) { add_out(a, b, out); });
  expect_same_writes("sub_out", init, [&](const Tensor& out) { sub_out(a, row, out); });
  expect_same_writes("mul_out", init, [&](const Tensor& out) { mul_out(row, b, out); });
  expect_same_writes("div_out", init, [&](const Tensor& out) { div_out(a, b, out); });
  // out as one operand (a += b through the _out form) and as both.
  expect_same_writes("add_out(out, b, out)", a, [&](const Tensor& out) { add_out(out, b, out); });
  expect_same_writes("mul_out(out, out, out)", a, [&](const Tensor& out) { mul_out(out, out, out); });
  // Half precision: one element off is 2 bytes off the grid.
  const Tensor ah = a.to(DType::BF16), bh = b.to(DType::BF16);
  expect_same_writes("add_out BF16", zeros({3, 5}, DType::BF16), [&](const Tensor& out) { add_out(ah, bh, out); });
}

TEST(UnalignedOutputs, InPlaceArithmetic) {
  const Tensor x = randn_f32({4, 6}, 4), y = randn_f32({4, 6}, 5) + 3.0, col = randn_f32({4, 1}, 6);
  expect_same_writes("add_(tensor)", x, [&](const Tensor& t) { add_(t, y); });
  expect_same_writes("sub_(scalar)", x, [&](const Tensor& t) { sub_(t, 0.25); });
  expect_same_writes("mul_(broadcast)", x, [&](const Tensor& t) { mul_(t, col); });
  expect_same_writes("div_(tensor)", x, [&](const Tensor& t) { div_(t, y); });
  expect_same_writes("Tensor::add_", x, [&](const Tensor& t) { t.add_(y); });
  expect_same_writes("Tensor::mul_(scalar)", x, [&](const Tensor& t) { t.mul_(3.0); });
  expect_same_writes("Tensor::div_(scalar)", x, [&](const Tensor& t) { t.div_(7.0); });
  expect_same_writes("Tensor::sub_", x, [&](const Tensor& t) { t.sub_(col); });
  // The target read through another view of itself (x.add_(x.t()) semantics: old values).
  const Tensor sq = randn_f32({5, 5}, 7);
  expect_same_writes("add_(t, t.t())", sq, [&](const Tensor& t) { add_(t, t.t()); });
}

TEST(UnalignedOutputs, CompoundAssignment) {
  const Tensor x = randn_f32({3, 4}, 8), y = randn_f32({3, 4}, 9) + 3.0;
  expect_same_writes("operator+=", x, [&](const Tensor& t) {
    Tensor lvalue = t;  // shares t's storage
    lvalue += y;
  });
  expect_same_writes("operator-=(scalar)", x, [&](const Tensor& t) {
    Tensor lvalue = t;
    lvalue -= 1.5;
  });
  expect_same_writes("operator*= on a temporary view", x, [&](const Tensor& t) { t.narrow(0, 0, 3) *= y; });
  expect_same_writes("operator/=(scalar) on a temporary view", x, [&](const Tensor& t) { t.view({3, 4}) /= 4.0; });
}

// ---- copy_, fill_, zero_, clamp_, masked_fill_ ------------------------------------------------

TEST(UnalignedOutputs, CopyFillClampMaskedFill) {
  const Tensor x = randn_f32({3, 5}, 10), src = randn_f32({3, 5}, 11), row = randn_f32({5}, 12);
  expect_same_writes("copy_", x, [&](const Tensor& t) { copy_(t, src); });
  expect_same_writes("copy_ broadcast", x, [&](const Tensor& t) { t.copy_(row); });
  expect_same_writes("copy_ converting F64", x, [&](const Tensor& t) { t.copy_(src.to(DType::F64)); });
  expect_same_writes("copy_ from a transposed source", x,
                     [&](const Tensor& t) { t.copy_(randn_f32({5, 3}, 13).t()); });
  expect_same_writes("fill_", x, [&](const Tensor& t) { fill_(t, 2.5); });
  expect_same_writes("Tensor::fill_", x, [&](const Tensor& t) { t.fill_(-3); });
  expect_same_writes("zero_", x, [&](const Tensor& t) { zero_(t); });
  expect_same_writes("Tensor::zero_", x, [&](const Tensor& t) { t.zero_(); });
  expect_same_writes("fill_ F64", x.to(DType::F64), [&](const Tensor& t) { t.fill_(0.125); });
  expect_same_writes("fill_ BF16", x.to(DType::BF16), [&](const Tensor& t) { t.fill_(4); });
  expect_same_writes("fill_ I32", zeros({3, 5}, DType::I32), [&](const Tensor& t) { t.fill_(9); });
  expect_same_writes("clamp_", x, [&](const Tensor& t) { clamp_(t, -0.5, 0.5); });
  expect_same_writes("Tensor::clamp_ (lower only)", x, [&](const Tensor& t) { t.clamp_(0.0, std::nullopt); });
  const Tensor mask = randn_f32({3, 5}, 14) > 0.0, row_mask = randn_f32({5}, 15) > 0.0;
  expect_same_writes("masked_fill_", x, [&](const Tensor& t) { masked_fill_(t, mask, 7.0); });
  expect_same_writes("Tensor::masked_fill_ broadcast mask", x, [&](const Tensor& t) { t.masked_fill_(row_mask, -1); });
}

// ---- matmul_out and linear_out ---------------------------------------------------------------

TEST(UnalignedOutputs, MatmulOut) {
  const Tensor a = randn_f32({4, 3}, 16), b = randn_f32({3, 5}, 17), init = randn_f32({4, 5}, 18);
  expect_same_writes("matmul_out", init, [&](const Tensor& out) { matmul_out(out, a, b); });
  expect_same_writes("matmul_out alpha, beta", init, [&](const Tensor& out) { matmul_out(out, a, b, 0.5, 2.0); });
  const Tensor x3 = randn_f32({2, 4, 3}, 19);
  expect_same_writes("matmul_out batched", randn_f32({2, 4, 5}, 20),
                     [&](const Tensor& out) { matmul_out(out, x3, b, 1.0, 1.0); });
  const Tensor ah = a.to(DType::BF16), bh = b.to(DType::BF16);
  expect_same_writes("matmul_out BF16", init.to(DType::BF16), [&](const Tensor& out) { matmul_out(out, ah, bh); });
  // A vector result ([8, 3] x [3]), as zeros({9}).narrow(0, 1, 8).
  const Tensor m8 = randn_f32({8, 3}, 34), v3 = randn_f32({3}, 35);
  expect_same_writes("matmul_out vector", zeros({8}), [&](const Tensor& out) { matmul_out(out, m8, v3); });
}

TEST(UnalignedOutputs, LinearOut) {
  const Tensor x = randn_f32({4, 3}, 21), w = randn_f32({5, 3}, 22), bias = randn_f32({5}, 23);
  const Tensor residual = randn_f32({4, 5}, 24), init = randn_f32({4, 5}, 25);
  expect_same_writes("linear_out", init, [&](const Tensor& out) { nn::linear_out(out, x, w); });
  expect_same_writes("linear_out bias", init, [&](const Tensor& out) { nn::linear_out(out, x, w, bias); });
  expect_same_writes("linear_out residual", init, [&](const Tensor& out) {
    nn::linear_out(out, x, w, bias, {.residual = residual});
  });
  // out is the residual itself: out += x·wᵀ + bias.
  expect_same_writes("linear_out into its residual", init,
                     [&](const Tensor& out) { nn::linear_out(out, x, w, bias, {.residual = out}); });
  const Tensor xh = x.to(DType::BF16), wh = w.to(DType::BF16);
  expect_same_writes("linear_out BF16 -> F32 residual", init, [&](const Tensor& out) {
    nn::linear_out(out, xh, wh, bias, {.out_dtype = DType::F32, .residual = out});
  });
}

// ---- attention backward_out ------------------------------------------------------------------

TEST(UnalignedOutputs, AttentionBackwardOut) {
  const Tensor q = randn_f32({1, 2, 3, 4}, 26), k = randn_f32({1, 2, 5, 4}, 27), v = randn_f32({1, 2, 5, 6}, 28);
  const Tensor grad_out = randn_f32({1, 2, 3, 6}, 29);
  const nn::AttentionOptions o{.causal = true};
  const nn::AttentionResult fwd = nn::scaled_dot_product_attention(q, k, v, o);
  const nn::AttentionGrads expected = nn::scaled_dot_product_attention_backward(grad_out, q, k, v, fwd.out,
                                                                                fwd.logsumexp, o);
  for (const Layout l : {Layout::Offset, Layout::Strided, Layout::Blob}) {
    Target tq, tk, tv;
    const nn::AttentionGrads grads{view_of(zeros(q.shape()), l, &tq), view_of(zeros(k.shape()), l, &tk),
                                   view_of(zeros(v.shape()), l, &tv)};
    nn::scaled_dot_product_attention_backward_out(grads, grad_out, q, k, v, fwd.out, fwd.logsumexp, o);
    EXPECT_EQ(values(grads.dq), values(expected.dq)) << layout_name(l);
    EXPECT_EQ(values(grads.dk), values(expected.dk)) << layout_name(l);
    EXPECT_EQ(values(grads.dv), values(expected.dv)) << layout_name(l);
    for (const Target* t : {&tq, &tk, &tv})
      EXPECT_EQ(sentinels(t->storage), t->storage.numel() - t->view.numel()) << layout_name(l);
  }
}

// ---- strided_scatter, slice_write --------------------------------------------------------------

TEST(UnalignedOutputs, EmptyTargets) {
  // An empty view may carry an offset at the storage's end; nothing is written, nothing throws.
  const Tensor storage = full({5, 3}, kSentinel), empty = storage.narrow(0, 5, 0);
  const Tensor a = zeros({0, 3});
  add_out(a, a, empty);
  empty.fill_(1).add_(2.0).copy_(a);
  matmul_out(empty, zeros({0, 4}), zeros({4, 3}));
  random::normal_(empty);
  EXPECT_EQ(sentinels(storage), 15);
}

TEST(UnalignedOutputs, StridedScatterAndSliceWrite) {
  const Tensor x = randn_f32({4, 6}, 30), src = randn_f32({2, 3}, 31);
  expect_same_writes("strided_scatter", x, [&](const Tensor& dst) { strided_scatter(dst, src, {2, 3}, {6, 2}, 1); });
  const Tensor cache = randn_f32({2, 4, 3}, 32), row = randn_f32({2, 3}, 33);
  expect_same_writes("slice_write", cache, [&](const Tensor& c) { slice_write(c, row, 2); });
}

// ---- random fills: contiguous views off the grid are filled; strided views are refused -------

TEST(UnalignedOutputs, RandomFills) {
  const Tensor init = zeros({3, 5});
  expect_same_writes(
      "normal_", init,
      [](const Tensor& t) {
        random::Generator g(40);
        random::normal_(t, 1, 2, &g);
      },
      {Layout::Offset, Layout::Blob});
  expect_same_writes(
      "uniform_ F64", init.to(DType::F64),
      [](const Tensor& t) {
        random::Generator g(41);
        random::uniform_(t, -1, 3, &g);
      },
      {Layout::Offset, Layout::Blob});
  expect_same_writes(
      "normal_ BF16", init.to(DType::BF16),
      [](const Tensor& t) {
        random::Generator g(42);
        random::normal_(t, 0, 1, &g);
      },
      {Layout::Offset, Layout::Blob});
  for (const Layout l : {Layout::Strided, Layout::Transposed}) {
    Target t;
    const Tensor view = view_of(init, l, &t);
    for (const bool normal : {true, false}) {
      try {
        normal ? random::normal_(view) : random::uniform_(view);
        ADD_FAILURE() << (normal ? "normal_" : "uniform_") << " accepted a " << layout_name(l) << " view";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
        EXPECT_NE(std::string(e.what()).find("contiguous"), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(sentinels(t.storage), t.storage.numel() - init.numel());  // a refused call wrote nothing
    EXPECT_EQ(values(view), values(init));
  }
}

// ---- optimizers: off-grid views are stepped (optim_unaligned_test.cpp has more); strided
// params or state are refused -------------------------------------------------------------------

TEST(UnalignedOutputs, OptimizersAdamAmsgradAndRefusals) {
  const Tensor p = randn_f32({3, 5}, 50), g = randn_f32({3, 5}, 51);
  const optim::AdamOptions o{.lr = 0.01, .amsgrad = true};
  // The reference: aligned tensors.
  const Tensor rp = p.clone(), rm = zeros({3, 5}), rv = zeros({3, 5}), rmax = zeros({3, 5});
  for (std::int64_t step = 1; step <= 2; ++step)
    optim::adam({.params = {rp}, .grads = {g}, .exp_avgs = {rm}, .exp_avg_sqs = {rv}, .max_exp_avg_sqs = {rmax}}, step,
                o);
  Target tp, tm, tv, tmax;
  const Tensor vp = view_of(p, Layout::Offset, &tp), vm = view_of(zeros({3, 5}), Layout::Offset, &tm),
               vv = view_of(zeros({3, 5}), Layout::Blob, &tv), vmax = view_of(zeros({3, 5}), Layout::Blob, &tmax);
  for (std::int64_t step = 1; step <= 2; ++step)
    optim::adam({.params = {vp}, .grads = {g}, .exp_avgs = {vm}, .exp_avg_sqs = {vv}, .max_exp_avg_sqs = {vmax}}, step,
                o);
  EXPECT_NE(values(rp), values(p));
  EXPECT_EQ(values(vp), values(rp));
  EXPECT_EQ(values(vm), values(rm));
  EXPECT_EQ(values(vv), values(rv));
  EXPECT_EQ(values(vmax), values(rmax));
  for (const Target* t : {&tp, &tm, &tv, &tmax}) EXPECT_EQ(sentinels(t->storage), t->storage.numel() - 15);

  // A strided param or state tensor is refused before anything is written.
  Target sp, sm;
  const Tensor strided_p = view_of(p, Layout::Strided, &sp), strided_m = view_of(zeros({3, 5}), Layout::Strided, &sm);
  const auto expect_refused = [&](const char* what, const std::function<void()>& call) {
    try {
      call();
      ADD_FAILURE() << what << " accepted a strided tensor";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("contiguous"), std::string::npos) << e.what();
    }
  };
  expect_refused("sgd param", [&] { optim::sgd({.params = {strided_p}, .grads = {g}}, true, {.lr = 0.1}); });
  expect_refused("sgd momentum buffer", [&] {
    optim::sgd({.params = {p.clone()}, .grads = {g}, .momentum_buffers = {strided_m}}, true,
               {.lr = 0.1, .momentum = 0.9});
  });
  expect_refused("adamw exp_avg", [&] {
    optim::adamw({.params = {p.clone()}, .grads = {g}, .exp_avgs = {strided_m}, .exp_avg_sqs = {zeros({3, 5})}}, 1);
  });
  EXPECT_EQ(values(strided_p), values(p));
  EXPECT_EQ(values(strided_m), values(zeros({3, 5})));
}

}  // namespace
}  // namespace ferrite
