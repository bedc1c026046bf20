// The shape rule and the checked extent arithmetic (src/core/extent.hpp): shapes with a zero
// dim next to huge ones. Before, `zeros({0, 2^62, 4})` was accepted and every op on it
// overflowed int64 computing strides (undefined behaviour, caught by UBSan), while
// `zeros({4, 2^62, 0})` was refused: acceptance depended on the order of the dims.
#include <gtest/gtest.h>

#include <limits>

#include "conformance/conformance.hpp"
#include "core/extent.hpp"
#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

using conformance::expect_error;

constexpr std::int64_t kHuge = std::int64_t(1) << 62;
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

TEST(ShapeRule, TheOrderOfTheDimsDoesNotMatter) {
  for (const Shape& s : {Shape{0, kHuge, 4}, Shape{4, kHuge, 0}, Shape{kHuge, 0, 4}, Shape{0, kMax, 2}}) {
    EXPECT_EQ(expect_error([&] { (void)zeros(s); }, ErrorKind::InvalidArgument,
                           "shape " + shape_str(s) + " has more elements than an int64 can count"), "")
        << shape_str(s);
    EXPECT_EQ(expect_error([&] { (void)shape_numel(s); }, ErrorKind::InvalidArgument, "more elements than an int64"), "");
  }
  // The non-zero dims fit: accepted, whatever the order, with zero elements.
  for (const Shape& s : {Shape{0, kHuge, 1}, Shape{2, kHuge / 2, 0}, Shape{0, kMax}, Shape{kMax, 0}}) {
    const Tensor t = zeros(s, DType::Bool);
    EXPECT_EQ(t.numel(), 0) << shape_str(s);
    EXPECT_EQ(t.shape(), s);
  }
  const Tensor e = zeros({3, 0});
  EXPECT_EQ(expect_error([&] { (void)e.reshape({0, kHuge, 4}); }, ErrorKind::ShapeMismatch,
                         "(more elements than an int64 can count)"), "");
  EXPECT_EQ(expect_error([&] { (void)e.reshape({4, kHuge, 0}); }, ErrorKind::ShapeMismatch,
                         "(more elements than an int64 can count)"), "");
  EXPECT_EQ(e.reshape({0, kHuge}).shape(), (Shape{0, kHuge}));
}

TEST(ShapeRule, CheckedHelpers) {
  EXPECT_EQ(detail::checked_numel({2, 0, 3}), 0);
  EXPECT_EQ(detail::checked_numel({}), 1);
  EXPECT_EQ(detail::checked_product({2, 3, 4}, 1, 3, "t"), 12);
  EXPECT_EQ(detail::checked_contiguous_strides({2, 0, 3}, "t"), (std::vector<std::int64_t>{0, 3, 1}));
  EXPECT_EQ(expect_error([] { (void)detail::checked_product({kHuge, 4}, 0, 2, "t"); }, ErrorKind::InvalidArgument,
                         "t: the product of dims 0..1 of shape"), "");
  EXPECT_EQ(expect_error([] { (void)detail::checked_numel({2, -1}, "op"); }, ErrorKind::InvalidArgument,
                         "op: shape [2, -1] has a negative dim"), "");
}

// The ops of the issue, on the largest shapes the rule accepts: each either works (empty
// result) or is an InvalidArgument naming the op, and never overflows (the UBSan build runs
// this file: tests/unit under scripts/cpu-sanitize.sh).
TEST(ShapeRule, OpsOnEmptyTensorsWithHugeDims) {
  const Tensor x = zeros({0, kHuge, 1});
  EXPECT_EQ(transpose(x, 0, 2).shape(), (Shape{1, kHuge, 0}));
  EXPECT_EQ(permute(x, {2, 0, 1}).shape(), (Shape{1, 0, kHuge}));
  const auto pieces = split(x, {kHuge / 2, kHuge / 2}, 1);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[1].shape(), (Shape{0, kHuge / 2, 1}));
  EXPECT_EQ(strided_copy(x, {0, kHuge, 1}, {kHuge, 1, 1}, 0).numel(), 0);
  EXPECT_EQ(sum(x, 1).shape(), (Shape{0, 1}));
  EXPECT_EQ(cumsum(x, 1).shape(), x.shape());
  EXPECT_EQ(sum(x).item<float>(), 0.0f);
  EXPECT_EQ(repeat(zeros({1}), {0, kHuge, 1}).shape(), (Shape{0, kHuge, 1}));
  EXPECT_EQ(repeat(zeros({4, 0}), {kHuge / 4, 1}).shape(), (Shape{kHuge, 0}));
  EXPECT_EQ(repeat(zeros({0, kHuge}), {2, 0}).shape(), (Shape{0, 0}));
  EXPECT_EQ(matmul(zeros({0, kHuge, 1}), zeros({1, 1})).shape(), (Shape{0, kHuge, 1}));
  EXPECT_EQ(matmul(zeros({0, std::int64_t(1) << 40}), zeros({std::int64_t(1) << 40, 0})).shape(), (Shape{0, 0}));

  EXPECT_EQ(expect_error([] { (void)repeat(zeros({1}), {0, kHuge, 4}); }, ErrorKind::InvalidArgument,
                         "shape [0, 4611686018427387904, 4] has more elements"), "");
  EXPECT_EQ(expect_error([] { (void)cat({zeros({0, kHuge}), zeros({0, kHuge})}, 1); }, ErrorKind::InvalidArgument,
                         "cat: the sizes of dim 1 of the 2 tensors"), "");
  EXPECT_EQ(expect_error([] { (void)matmul(zeros({std::int64_t(1) << 40, 0}), zeros({0, std::int64_t(1) << 40})); },
                         ErrorKind::InvalidArgument, "matmul: shape [1099511627776, 1099511627776] has more elements"),
            "");
  EXPECT_EQ(expect_error([] { (void)matmul(zeros({0, kHuge, 1}), zeros({1, 4})); }, ErrorKind::InvalidArgument,
                         "matmul: shape [0, 4611686018427387904, 4] has more elements"), "");
  // Results that are valid shapes but too large for memory are errors too, never wraps.
  EXPECT_EQ(expect_error([&] { (void)sum(x, 0); }, ErrorKind::InvalidArgument, "needs more bytes than an int64"), "");
}

// unfold of an empty tensor's 2^63 - 1 dim into windows of size 0: 2^63 windows, one more
// than an int64 counts (the count overflowed; UBSan, api_fuzz_test).
TEST(ShapeRule, UnfoldWithMoreWindowsThanAnInt64IsAnError) {
  const Tensor x = zeros({0, kMax});
  EXPECT_EQ(expect_error([&] { (void)x.unfold(1, 0, 1); }, ErrorKind::InvalidArgument,
                         "unfold: dim 1 of [0, 9223372036854775807] F32 cpu has more windows of size 0 than an int64"),
            "");
  EXPECT_EQ(x.unfold(1, 0, 2).shape(), (Shape{0, kMax / 2 + 1, 0}));
  EXPECT_EQ(x.unfold(1, 1, 1).shape(), (Shape{0, kMax, 1}));
}

// irfft's default length 2 (n - 1) of an empty tensor's 2^63 - 1 dim overflowed int64
// (UBSan, api_fuzz_test).
TEST(ShapeRule, InverseRealFftDefaultLengthOverflowIsAnError) {
  const Tensor x = zeros({0, kMax}, DType::C64);
  EXPECT_EQ(expect_error([&] { (void)fft::irfft(x); }, ErrorKind::InvalidArgument,
                         "irfft: the default output length 2 * (9223372036854775807 - 1) of dim 1 overflows int64"),
            "");
  EXPECT_EQ(fft::irfft(zeros({0, 3}, DType::C64)).shape(), (Shape{0, 4}));
}

// Compressed pointers for 2^63 - 1 rows (an empty dense or COO shape): rows + 1 overflowed
// int64 (UBSan, api_fuzz_test).
TEST(ShapeRule, CompressedPointersForMoreRowsThanAnInt64IsAnError) {
  EXPECT_EQ(expect_error([] { (void)sparse::from_dense(zeros({kMax, 0})); }, ErrorKind::InvalidArgument,
                         "sparse::from_dense: 9223372036854775807 rows (or columns) need one more compressed pointer"),
            "");
  const auto coo = sparse::coo(zeros({0}, DType::I64), zeros({0}, DType::I64), zeros({0}), kMax, 2);
  EXPECT_EQ(expect_error([&] { (void)sparse::to_csr(coo); }, ErrorKind::InvalidArgument,
                         "sparse::to_csr: 9223372036854775807 rows"), "");
  EXPECT_EQ(sparse::to_csr(sparse::coo(zeros({0}, DType::I64), zeros({0}, DType::I64), zeros({0}), 3, 2))
                .crow_indices()
                .to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 0, 0, 0}));
}

// chunk into more pieces than a host can hold: the pieces were pushed one by one until memory
// ran out (chunk(x, 2^62, 1) of an empty [0, 2^40, 1], found by api_fuzz_test, seed 23 call
// 17829). The count is known first and refused as OutOfMemory. These counts fail before any
// allocation (under ASan too).
TEST(ShapeRule, ChunkIntoMorePiecesThanMemoryIsOutOfMemory) {
  const Tensor x = zeros({0, kHuge, 1});
  EXPECT_EQ(expect_error([&] { (void)chunk(x, kHuge, 1); }, ErrorKind::OutOfMemory,
                         "chunk: out of host memory for a scratch buffer of 4611686018427387904 elements"), "");
  EXPECT_EQ(expect_error([&] { (void)chunk(x, kMax, 1); }, ErrorKind::OutOfMemory, "chunk: out of host memory"), "");
  EXPECT_EQ(expect_error([&] { (void)chunk(x, kHuge, 0); }, ErrorKind::OutOfMemory, "chunk: out of host memory"), "");
  const auto pieces = chunk(x, 3, 1);  // pieces of ceil(2^62 / 3), the last one shorter
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[2].shape(), (Shape{0, kHuge - 2 * (kHuge / 3 + 1), 1}));
  const auto small = chunk(arange(std::int64_t(7)), 3, 0);
  ASSERT_EQ(small.size(), 3u);
  EXPECT_EQ(small[2].to_vector<std::int64_t>(), (std::vector<std::int64_t>{6}));
}

// An index_select whose result is empty because of a zero dim beside the selected one: the
// CPU kernel looped over every (outer, index) pair, copying zero bytes 7 * 2^40 times (found
// by api_fuzz_test, seed 1, call 89029: x [2^40, 7, 0, 0], dim 2). It returns at once now, and
// still checks the index against the selected dim.
TEST(ShapeRule, IndexSelectIntoAnEmptyResultReturnsAtOnce) {
  constexpr std::int64_t kBig = std::int64_t(1) << 40;
  const Tensor x = zeros({kBig, 7, 0}, DType::I32);
  EXPECT_EQ(index_select(x, 1, tensor<std::int64_t>({6, -7, 0})).shape(), (Shape{kBig, 3, 0}));
  EXPECT_EQ(index_select(zeros({kBig, 0, 0}), 1, zeros({0}, DType::I64)).shape(), (Shape{kBig, 0, 0}));
  EXPECT_EQ(index_select(zeros({0, 5}), 1, tensor<std::int32_t>({4, 1})).shape(), (Shape{0, 2}));
  EXPECT_EQ(expect_error([&] { (void)index_select(x, 1, tensor<std::int64_t>({7})); }, ErrorKind::IndexOutOfRange,
                         "index_select: index 7 is out of range for dim 1 of size 7"), "");
  EXPECT_EQ(expect_error([] { (void)index_select(zeros({kBig, 0, 0}), 2, tensor<std::int64_t>({0})); },
                         ErrorKind::IndexOutOfRange, "index 0 is out of range for dim 2 of size 0"), "");
}

}  // namespace
}  // namespace ferrite
