// Strided views (issue 12): shapes, strides and offsets as PyTorch documents them, values
// against copy-based computations, writes through views, and the refusals.
#include <gtest/gtest.h>

#include <limits>
#include <numeric>

#include "ferrite/ferrite.hpp"
#include "conformance/conformance.hpp"

namespace {

using namespace ferrite;
using conformance::expect_error;

Tensor iota_f32(Shape shape) {
  const std::int64_t n = shape_numel(shape);
  return arange(0, static_cast<double>(n), 1, DType::F32).reshape(std::move(shape));
}

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

TEST(Views, ShapesStridesAndOffsetsMatchPyTorch) {
  const Tensor x = iota_f32({2, 3, 4});
  EXPECT_EQ(x.strides(), (Strides{12, 4, 1}));
  EXPECT_TRUE(x.is_contiguous());

  const Tensor t = x.transpose(0, 2);  // torch: size (4, 3, 2), stride (1, 4, 12)
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.strides(), (Strides{1, 4, 12}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.storage(), x.storage());

  const Tensor s = x.slice(2, 1, 4, 2);  // x[:, :, 1:4:2]: size (2, 3, 2), stride (12, 4, 2), offset 1
  EXPECT_EQ(s.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(s.strides(), (Strides{12, 4, 2}));
  EXPECT_EQ(s.storage_offset(), 1);
  EXPECT_EQ(values(s), (std::vector<float>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}));

  const Tensor sel = x.select(1, -1);  // x[:, -1]: size (2, 4), stride (12, 1), offset 8
  EXPECT_EQ(sel.shape(), (Shape{2, 4}));
  EXPECT_EQ(sel.strides(), (Strides{12, 1}));
  EXPECT_EQ(sel.storage_offset(), 8);
  EXPECT_EQ(values(sel), (std::vector<float>{8, 9, 10, 11, 20, 21, 22, 23}));

  const Tensor n = x.narrow(1, 1, 2);
  EXPECT_EQ(n.shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(n.storage_offset(), 4);

  const Tensor u = x.unsqueeze(1);  // torch: size (2, 1, 3, 4), stride (12, 12, 4, 1)
  EXPECT_EQ(u.strides(), (Strides{12, 12, 4, 1}));
  EXPECT_EQ(x.unsqueeze(-1).strides(), (Strides{12, 4, 1, 1}));
  EXPECT_EQ(u.squeeze().shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(u.squeeze(1).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(u.squeeze(0).shape(), (Shape{2, 1, 3, 4}));  // size 2: unchanged, as PyTorch

  const Tensor p = x.permute({2, 0, 1});  // size (4, 2, 3), stride (1, 12, 4)
  EXPECT_EQ(p.strides(), (Strides{1, 12, 4}));
  EXPECT_EQ(values(p.contiguous()), values(permute(x, {2, 0, 1}).contiguous()));

  const Tensor e = from_vector<float>({1, 2, 3}, {3, 1}).expand({3, 4});  // stride (1, 0)
  EXPECT_EQ(e.strides(), (Strides{1, 0}));
  EXPECT_EQ(values(e), (std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  EXPECT_EQ(from_vector<float>({7}, {}).expand({2, 2}).strides(), (Strides{0, 0}));

  const Tensor m = iota_f32({3, 4});
  EXPECT_EQ(m.t().strides(), (Strides{1, 4}));
  EXPECT_EQ(x.mT().shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(values(m.diagonal()), (std::vector<float>{0, 5, 10}));
  EXPECT_EQ(m.diagonal().strides(), (Strides{5}));
  EXPECT_EQ(values(m.diagonal(1)), (std::vector<float>{1, 6, 11}));
  EXPECT_EQ(values(m.diagonal(-1)), (std::vector<float>{4, 9}));
  EXPECT_EQ(m.diagonal(9).shape(), (Shape{0}));

  const Tensor w = arange(0, 7, 1, DType::F32).unfold(0, 3, 2);  // torch: size (3, 3), stride (2, 1)
  EXPECT_EQ(w.shape(), (Shape{3, 3}));
  EXPECT_EQ(w.strides(), (Strides{2, 1}));
  EXPECT_EQ(values(w), (std::vector<float>{0, 1, 2, 2, 3, 4, 4, 5, 6}));

  const Tensor a = x.as_strided({3, 2}, {1, 3}, 2);
  EXPECT_EQ(values(a), (std::vector<float>{2, 5, 3, 6, 4, 7}));
  EXPECT_EQ(x.flatten(1).shape(), (Shape{2, 12}));
  EXPECT_EQ(x.flatten(1).storage(), x.storage());
  EXPECT_EQ(x.unflatten(2, {2, -1}).shape(), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(x.view({6, 4}).strides(), (Strides{4, 1}));
}

TEST(Views, ReshapeIsAViewWhenStridesAllowAndACopyOtherwise) {
  const Tensor x = iota_f32({4, 6});
  const Tensor rows = x.slice(0, 0, 4, 2);  // [2, 6], stride (12, 1): [2, 6] -> [2, 2, 3] is a view
  EXPECT_EQ(rows.reshape({2, 2, 3}).storage(), x.storage());
  EXPECT_EQ(rows.view({2, 2, 3}).strides(), (Strides{12, 3, 1}));
  const Tensor t = x.t();  // [6, 4] stride (1, 6): flattening needs a copy
  const Tensor flat = t.reshape({24});
  EXPECT_NE(flat.storage(), x.storage());
  EXPECT_EQ(values(flat), values(t.contiguous().reshape({24})));
  EXPECT_EQ(expect_error([&] { (void)t.view({24}); }, ErrorKind::ShapeMismatch, "view: [6, 4] F32 cpu with strides [1, 6] cannot be viewed as [24]"), "");
}

TEST(Views, WritesThroughViewsChangeTheBase) {
  const Tensor x = zeros({3, 4});
  x.select(0, 1).fill_(5);
  x.select(1, 3).add_(1);
  x.slice(1, 0, 4, 2).select(0, 2).copy_(from_vector<float>({7, 8}, {2}));  // a view of a view
  x.t().select(0, 1).mul_(2);  // column 1 through a transposed view
  EXPECT_EQ(values(x), (std::vector<float>{0, 0, 0, 1, 5, 10, 5, 6, 7, 0, 8, 1}));
  x.diagonal().zero_();
  EXPECT_EQ(values(x), (std::vector<float>{0, 0, 0, 1, 5, 0, 5, 6, 7, 0, 0, 1}));
  // clamp_ and masked_fill_ through a strided view.
  x.t().clamp_(std::nullopt, 5.5);
  EXPECT_EQ(values(x), (std::vector<float>{0, 0, 0, 1, 5, 0, 5, 5.5f, 5.5f, 0, 0, 1}));
  x.slice(0, 0, 3, 2).masked_fill_(from_vector(std::vector<bool>{true, false, false, true}, {4}), -1);
  EXPECT_EQ(values(x), (std::vector<float>{-1, 0, 0, -1, 5, 0, 5, 5.5f, -1, 0, 0, -1}));
  // copy_ broadcasts and converts.
  x.select(0, 0).copy_(from_vector<std::int64_t>({3}, {1}));
  EXPECT_EQ(values(x.select(0, 0)), (std::vector<float>{3, 3, 3, 3}));
}

TEST(Views, OverlappingOperandsAreReadBeforeWritten) {
  const Tensor x = iota_f32({3, 3});
  const Tensor expected = add(x, x.t().contiguous());
  x.add_(x.t());  // reads x.t() entirely before any write
  EXPECT_EQ(values(x), values(expected));
  const Tensor y = arange(0, 6, 1, DType::F32);
  y.slice(0, 1, 6).copy_(y.slice(0, 0, 5));  // shift right by one, as memmove would
  EXPECT_EQ(values(y), (std::vector<float>{0, 0, 1, 2, 3, 4}));
}

TEST(Views, ExpandedViewsAndOtherRefusals) {
  const Tensor e = zeros({1, 3}).expand({2, 3});
  EXPECT_EQ(expect_error([&] { e.fill_(1); }, ErrorKind::InvalidArgument,
                         "more than one of its elements refers to a single memory location"),
            "");
  EXPECT_EQ(expect_error([&] { e.add_(1); }, ErrorKind::InvalidArgument, "single memory location"), "");
  EXPECT_EQ(expect_error([&] { copy_(e, ones({2, 3})); }, ErrorKind::InvalidArgument, "single memory location"), "");
  const Tensor x = iota_f32({2, 3});
  EXPECT_EQ(expect_error([&] { (void)x.select(1, 3); }, ErrorKind::IndexOutOfRange, "select: index 3 is out of range for dim 1 of size 3"), "");
  EXPECT_EQ(expect_error([&] { (void)x.narrow(0, 1, 2); }, ErrorKind::IndexOutOfRange, "narrow: start 1 + length 2 exceeds dim 0"), "");
  EXPECT_EQ(expect_error([&] { (void)x.slice(0, 0, 2, 0); }, ErrorKind::InvalidArgument, "slice: step must be positive"), "");
  EXPECT_EQ(expect_error([&] { (void)x.expand({3, 3}); }, ErrorKind::ShapeMismatch, "expand: [2, 3] F32 cpu cannot expand to [3, 3]"), "");
  EXPECT_EQ(expect_error([&] { (void)x.as_strided({2, 3}, {3, 2}); }, ErrorKind::IndexOutOfRange, "as_strided: shape [2, 3], strides [3, 2] and offset 0 reach past the 6 elements"), "");
  EXPECT_EQ(expect_error([&] { (void)x.as_strided({2}, {-1}); }, ErrorKind::InvalidArgument, "negative stride"), "");
  EXPECT_EQ(expect_error([&] { (void)x.permute({0, 0}); }, ErrorKind::InvalidArgument, "permute: dim 0 appears twice"), "");
  EXPECT_EQ(expect_error([&] { (void)iota_f32({2, 2, 2}).t(); }, ErrorKind::InvalidArgument, "t: expects a tensor with <= 2 dims"), "");
  EXPECT_EQ(expect_error([&] { (void)x.unfold(1, 4, 1); }, ErrorKind::IndexOutOfRange, "unfold: size 4 exceeds dim 1 of size 3"), "");
  EXPECT_EQ(expect_error([&] { (void)x.unflatten(1, {2, 2}); }, ErrorKind::ShapeMismatch, "unflatten: sizes [2, 2] do not multiply to dim 1 of size 3"), "");
  EXPECT_EQ(expect_error([&] { x.add_(zeros({2, 2, 3})); }, ErrorKind::ShapeMismatch, "add: out is [2, 3] F32 cpu, expected shape [2, 2, 3]"), "");
}

TEST(Views, ZeroSizeAndZeroStrideViews) {
  const Tensor x = iota_f32({3, 4});
  const Tensor empty_rows = x.slice(0, 2, 1);  // start > end: empty
  EXPECT_EQ(empty_rows.shape(), (Shape{0, 4}));
  EXPECT_EQ(empty_rows.contiguous().numel(), 0);
  EXPECT_EQ((empty_rows + 1).shape(), (Shape{0, 4}));
  EXPECT_EQ(zeros({0, 4}).select(1, 2).shape(), (Shape{0}));
  EXPECT_EQ(sum(x.slice(1, 4, 4), 1).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  const Tensor broadcast_row = from_vector<float>({1, 2, 3, 4}, {4}).expand({3, 4});
  EXPECT_EQ(values(add(x, broadcast_row)), values(add(x, from_vector<float>({1, 2, 3, 4}, {4}))));
  EXPECT_EQ(values(sum(broadcast_row, 0)), (std::vector<float>{3, 6, 9, 12}));
  // A 0-d view.
  const Tensor scalar = x.select(0, 2).select(0, 3);
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.item<float>(), 11);
}

// Steps, offsets and strides near 2^63 (found by api_fuzz_test under UBSan, where each of
// these overflowed int64): a dim of at most one element keeps its input stride, an offset is
// compared before it is negated, and a strided copy's one-element dims step by 0.
TEST(Views, StepsOffsetsAndStridesNear2To63AreDefined) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const Tensor x = arange(std::int64_t(12)).reshape({3, 4});
  const Tensor first_row = x.slice(0, 0, 3, kMax);  // stride 4 * step overflows
  EXPECT_EQ(first_row.shape(), (Shape{1, 4}));
  EXPECT_EQ(first_row.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 3}));
  const Tensor windows = x.unfold(0, 2, std::int64_t(1) << 62);
  EXPECT_EQ(windows.shape(), (Shape{1, 4, 2}));
  EXPECT_EQ(windows.contiguous().to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(x.diagonal(kMin).shape(), (Shape{0}));  // -offset overflows
  EXPECT_EQ(x.diagonal(kMax).shape(), (Shape{0}));
  EXPECT_EQ(x.diagonal(-2).to_vector<std::int64_t>(), (std::vector<std::int64_t>{8}));
  const Tensor one = arange(std::int64_t(4)).as_strided({1, 1}, {kMax, 1}, 2);  // stride sum overflows
  EXPECT_EQ(one.diagonal().to_vector<std::int64_t>(), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(strided_copy(arange(std::int64_t(4)), {1, 2}, {kMax, 1}, 1).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 2}));
}

TEST(Views, StorageOutlivesItsFirstOwnerThroughAView) {
  Tensor view;
  {
    const Tensor base = iota_f32({4, 4});
    view = base.t().slice(0, 1, 3);
  }
  EXPECT_EQ(values(view), (std::vector<float>{1, 5, 9, 13, 2, 6, 10, 14}));
  view.fill_(0);
  EXPECT_EQ(values(view), (std::vector<float>(8, 0)));
}

TEST(Views, OpsOnViewsMatchOpsOnCopies) {
  const Tensor x = iota_f32({5, 6}).mul_(0.25).sub_(3);
  const Tensor tv = x.t();                      // transposed
  const Tensor sv = x.slice(1, 1, 6, 2);        // strided columns, offset 1
  for (const Tensor& v : {tv, sv}) {
    const Tensor c = v.contiguous();
    EXPECT_EQ(values(add(v, v)), values(add(c, c)));
    EXPECT_EQ(values(mul(v, 2.0 * ones(v.shape()))), values(mul(c, 2.0 * ones(c.shape()))));
    EXPECT_EQ(values(exp(v)), values(exp(c)));
    EXPECT_EQ(values(softmax(v, -1)), values(softmax(c, -1)));
    EXPECT_EQ(values(sum(v, 0)), values(sum(c, 0)));
    EXPECT_EQ(values(cumsum(v, 1)), values(cumsum(c, 1)));
    EXPECT_EQ(values(where(v > 0, v, -v)), values(where(c > 0, c, -c)));
    EXPECT_EQ(values(v.to(DType::F64).to(DType::F32)), values(c));
    EXPECT_EQ(values(matmul(v, v.mT())), values(matmul(c, c.mT().contiguous())));
    EXPECT_EQ(v.to_bytes(), c.to_bytes());
    EXPECT_EQ(to_string(v), to_string(c));
  }
  // As PyTorch: an elementwise result of transposed (dense) operands takes their layout, so
  // no transposition happens anywhere; mixed layouts give a contiguous result.
  const Tensor m = iota_f32({3, 5});
  EXPECT_EQ(exp(m.t()).strides(), m.t().strides());
  EXPECT_EQ(values(exp(m.t())), values(exp(m.t().contiguous())));
  EXPECT_EQ(add(m.t(), m.t()).strides(), m.t().strides());
  EXPECT_EQ(values(add(m.t(), m.t())), values(add(m.t().contiguous(), m.t().contiguous())));
  EXPECT_TRUE(add(m.t(), m.t().contiguous()).is_contiguous());
  EXPECT_EQ(m.t().to(DType::F64).strides(), m.t().strides());  // casts keep the layout too
  EXPECT_EQ(values(m.t().to(DType::F64).to(DType::F32)), values(m.t().contiguous()));
  const Tensor p = iota_f32({2, 3, 4});
  EXPECT_EQ(values(relu(p.permute({2, 0, 1}) - 5)), values(relu(p.permute({2, 0, 1}).contiguous() - 5)));
  const Tensor q = iota_f32({4, 3});
  q.t().mul_(2).add_(q.t());  // in place in memory order: q * 2, then doubled again
  EXPECT_EQ(values(q), values(iota_f32({4, 3}) * 4));
  // matmul into a strided out.
  const Tensor out = zeros({4, 4});
  matmul_out(out.t(), iota_f32({4, 2}), iota_f32({2, 4}), 1, 0);
  EXPECT_EQ(values(out), values(matmul(iota_f32({4, 2}), iota_f32({2, 4})).t().contiguous()));
  // permute is a view at any rank (it was limited to rank 8 as a copy).
  const Tensor high = iota_f32({2, 1, 2, 1, 2, 1, 2, 1, 2});
  const Tensor reversed = permute(high, {8, 7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_EQ(reversed.shape(), (Shape{2, 1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(values(reversed.contiguous().reshape({32})).at(1), 16);  // the first dim now steps by 1
  // The seed's copying transpose is transpose(...).contiguous().
  EXPECT_EQ(values(transpose(iota_f32({2, 3}), 0, 1).contiguous()), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // split and chunk are views.
  const std::vector<Tensor> parts = chunk(x, 3, 1);
  EXPECT_EQ(parts[1].storage(), x.storage());
  EXPECT_EQ(values(parts[1]), values(x.narrow(1, 2, 2).contiguous()));
}

// Casts and activation backward passes read narrowed and stepped views through their strides:
// the result is the one allocation (a dense copy of an operand would be a second).
TEST(Views, CastsAndBackwardPassesReadViewsWithoutACopy) {
  const Tensor x = iota_f32({6, 9}).mul_(0.25).sub_(5);
  const Tensor g = iota_f32({6, 9}).mul_(0.5);
  for (const Tensor& v : {x.narrow(1, 1, 7), x.slice(1, 0, 9, 2), x.narrow(0, 1, 4).narrow(1, 2, 5)}) {
    const Tensor gv = g.narrow(0, 0, v.size(0)).narrow(1, 0, v.size(1));
    const auto before = memory_stats(Device::cpu()).allocations;
    const Tensor cast = v.to(DType::BF16);
    const Tensor back = gelu_backward(gv, v);
    EXPECT_EQ(memory_stats(Device::cpu()).allocations - before, 2) << "a view was copied first";
    EXPECT_TRUE(cast.is_contiguous());
    EXPECT_TRUE(back.is_contiguous());
    EXPECT_EQ(cast.to_bytes(), v.contiguous().to(DType::BF16).to_bytes());
    EXPECT_EQ(back.to_bytes(), gelu_backward(gv.contiguous(), v.contiguous()).to_bytes());
  }
  // grad and x transposed alike: computed in memory order, the result in their layout; one
  // transposed operand beside a dense one gives a contiguous result.
  const Tensor m = iota_f32({3, 5}).sub_(7), n = iota_f32({5, 3});
  EXPECT_EQ(tanh_backward(n.t(), n.t()).strides(), n.t().strides());
  EXPECT_EQ(tanh_backward(n.t(), n.t()).to_bytes(), tanh_backward(n.t().contiguous(), n.t().contiguous()).to_bytes());
  EXPECT_TRUE(tanh_backward(n.t(), m).is_contiguous());
  EXPECT_EQ(tanh_backward(n.t(), m).to_bytes(), tanh_backward(n.t().contiguous(), m).to_bytes());
}

// Casts between any two dtypes (integer, Bool and complex included) read narrowed, stepped
// and offset views through their strides: the result is the one allocation.
TEST(Views, CastsOfEveryDTypeReadViewsWithoutACopy) {
  const Tensor x = iota_f32({6, 9}).mul_(0.75).sub_(20);
  const Tensor flat = x.flatten();
  for (const DType from : {DType::F32, DType::I32, DType::I64, DType::Bool, DType::C64, DType::C128}) {
    const Tensor base = x.to(from);
    const Tensor flat_base = flat.to(from);
    for (const DType to : {DType::F64, DType::BF16, DType::I32, DType::I64, DType::Bool, DType::C64, DType::C128}) {
      if (to == from) continue;
      std::vector<Tensor> views = {base.narrow(1, 1, 7), base.narrow(0, 1, 4).narrow(1, 2, 5), flat_base.narrow(0, 1, 53)};
      // A C128 view stepping by 2 has its elements 32 bytes apart: elementwise_operand's rule
      // copies such views first, as for every elementwise op.
      if (from != DType::C128) views.push_back(base.slice(1, 0, 9, 2));
      for (const Tensor& v : views) {
        SCOPED_TRACE(std::string(dtype_name(from)) + " to " + std::string(dtype_name(to)) + " of " + v.description());
        const auto before = memory_stats(Device::cpu()).allocations;
        const Tensor cast = v.to(to);
        EXPECT_EQ(memory_stats(Device::cpu()).allocations - before, 1) << "a view was copied first";
        EXPECT_TRUE(cast.is_contiguous());
        EXPECT_EQ(cast.to_bytes(), v.contiguous().to(to).to_bytes());
      }
    }
  }
}

// A reduction of a transposed or permuted dense tensor reduces the dense block with the dims
// mapped (sum over dim 1 of x.t() is a sum over dim 0 of x): no copy of the input, only the
// result (and a copy of the result when the kept dims lie in another order in memory).
TEST(Views, ReductionsOfPermutedViewsReduceTheDenseBlockWithoutACopy) {
  const Tensor x = iota_f32({6, 9}).mul_(0.25).sub_(5);
  const Tensor xt = x.t();  // [9, 6]
  auto allocations_of = [](auto&& op) {
    const auto before = memory_stats(Device::cpu()).allocations;
    const Tensor out = op();
    return std::make_pair(out, memory_stats(Device::cpu()).allocations - before);
  };
  const Tensor c = xt.contiguous();
  for (const bool keep : {false, true}) {
    for (const std::int64_t d : {0, 1, -1}) {
      SCOPED_TRACE("dim " + std::to_string(d) + (keep ? " keepdim" : ""));
      const auto [s, n] = allocations_of([&] { return sum(xt, d, keep); });
      EXPECT_EQ(n, 1) << "the view was copied first";
      EXPECT_EQ(s.shape(), sum(c, d, keep).shape());
      EXPECT_TRUE(s.is_contiguous());
      // The CPU adds each output's elements in index order along the dim either way.
      EXPECT_EQ(s.to_bytes(), sum(c, d, keep).to_bytes());
      EXPECT_EQ(allocations_of([&] { return amax(xt, d, keep); }).second, 1);
      EXPECT_EQ(amax(xt, d, keep).to_bytes(), amax(c, d, keep).to_bytes());
      // Indices count along the reduced dim, which the mapping leaves as it is.
      EXPECT_EQ(allocations_of([&] { return argmin(xt, d, keep); }).second, 1);
      EXPECT_EQ(argmin(xt, d, keep).to_vector<std::int64_t>(), argmin(c, d, keep).to_vector<std::int64_t>());
      const Tensor b = remainder(x.to(DType::I32), full({}, 3, DType::I32)) == 0;
      EXPECT_EQ(allocations_of([&] { return any(b.t(), d, keep); }).second, 1);
      EXPECT_EQ(any(b.t(), d, keep).to_bytes(), any(b.t().contiguous(), d, keep).to_bytes());
    }
  }
  // Everything: the dense block in memory order.
  EXPECT_EQ(allocations_of([&] { return sum(xt); }).second, 1);
  EXPECT_EQ(allocations_of([&] { return mean(xt, DType::F32); }).second, 1);
  EXPECT_FLOAT_EQ(sum(xt).item<float>(), sum(x).item<float>());
  // argmax over everything counts in the view's own order, so it reads a copy: 2 allocations.
  EXPECT_EQ(allocations_of([&] { return argmax(xt); }).second, 2);
  EXPECT_EQ(argmax(xt).item<std::int64_t>(), argmax(c).item<std::int64_t>());
  // Rank 3: kept dims in memory order [2, 0] come back as [0, 2] (a copy of the small
  // result), keepdim as PyTorch, and lists of dims.
  const Tensor q = iota_f32({2, 3, 4}).sub_(11).permute({2, 0, 1});  // [4, 2, 3]
  const auto [r, rn] = allocations_of([&] { return sum(q, 1, true); });
  EXPECT_EQ(rn, 2);
  EXPECT_EQ(r.shape(), (Shape{4, 1, 3}));
  EXPECT_EQ(r.to_bytes(), sum(q.contiguous(), 1, true).to_bytes());
  EXPECT_EQ(allocations_of([&] { return sum(q, 0); }).second, 1);  // kept [1, 2] of q: in order
  EXPECT_EQ(sum(q, 0).to_bytes(), sum(q.contiguous(), 0).to_bytes());
  // The same block one element into its storage (off the 16-byte grid): buffer() copies the
  // block itself (a contiguous copy, so no result depends on where the block starts).
  const Tensor storage = iota_f32({1 + 2 * 3 * 4}).sub_(12);
  const Tensor p = storage.narrow(0, 1, 24).view({2, 3, 4}).permute({2, 0, 1});  // [4, 2, 3]
  const Tensor pc = p.contiguous();
  EXPECT_EQ(allocations_of([&] { return sum(p, 0); }).second, 2);
  EXPECT_EQ(sum(p, 0).to_bytes(), sum(q, 0).to_bytes());
  EXPECT_EQ(sum(p, 1, true).to_bytes(), sum(pc, 1, true).to_bytes());
  EXPECT_EQ(sum(p, {0, 2}).to_bytes(), sum(pc, {0, 2}).to_bytes());
  EXPECT_EQ(sum(p, {2, 1}, true).shape(), (Shape{4, 1, 1}));
  EXPECT_EQ(sum(p, {2, 1}, true).to_bytes(), sum(pc, {2, 1}, true).to_bytes());
  const auto [values_, indices] = max(p, -1);
  const auto [cvalues, cindices] = max(pc, -1);
  EXPECT_EQ(values_.to_bytes(), cvalues.to_bytes());
  EXPECT_EQ(indices.to_vector<std::int64_t>(), cindices.to_vector<std::int64_t>());
}

}  // namespace
