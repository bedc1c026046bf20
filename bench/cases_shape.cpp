// Benchmark cases of the shape and indexing family (docs/families/shape.md). Bytes count
// what the op must move: each input element it reads once plus each output written once
// (for embedding and index_select: the rows picked, not the whole table).
#include <cstdint>
#include <vector>

#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

// Distinct, non-zero values made on the device (large inputs: no host generation or upload).
std::shared_ptr<Tensor> ramp(const BenchContext& ctx, Shape shape, DType dtype) {
  const std::int64_t n = shape_numel(shape);
  return ctx.hold(arange(1, static_cast<double>(n) + 1, 1, DType::F32, ctx.device).to(dtype).reshape(shape));
}

// xorshift64: fast enough for 2^28 host values.
struct XorShift {
  std::uint64_t s;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

std::shared_ptr<Tensor> random_index(const BenchContext& ctx, Shape shape, std::int64_t size, std::uint64_t seed) {
  XorShift rng{seed * 0x9E3779B97F4A7C15ull + 1};
  std::vector<std::int64_t> v(static_cast<std::size_t>(shape_numel(shape)));
  for (auto& x : v) x = static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(size));
  return ctx.hold(from_vector(v, shape, ctx.device));
}

void shape_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const bool full = ctx.full_size();
  auto text = [](const Shape& s) { return shape_str(s); };

  // transpose F32 16384 x 16384
  {
    const std::int64_t n = full ? 16384 : 1024;
    auto x = ramp(ctx, {n, n}, DType::F32);
    cases.push_back({"transpose_f32", text({n, n}), 2.0 * 4 * n * n, [=] { (void)transpose(*x, 0, 1); }});
  }
  // permute 0213 BF16 [32, 2048, 16, 128]
  {
    const Shape s = full ? Shape{32, 2048, 16, 128} : Shape{4, 256, 16, 128};
    auto x = ramp(ctx, s, DType::BF16);
    cases.push_back({"permute_0213_bf16", text(s), 2.0 * 2 * shape_numel(s), [=] { (void)permute(*x, {0, 2, 1, 3}); }});
  }
  // cat and split along the last dim: rows of 16 KB each side
  {
    const std::int64_t rows = full ? 16384 : 1024;
    auto a = ramp(ctx, {rows, 4096}, DType::F32);
    auto b = ramp(ctx, {rows, 4096}, DType::F32);
    auto joined = ramp(ctx, {rows, 8192}, DType::F32);
    const double bytes = 2.0 * 4 * rows * 8192;
    cases.push_back({"cat_f32", "2 x " + text({rows, 4096}) + " dim 1", bytes, [=] { (void)cat({*a, *b}, 1); }});
    cases.push_back({"split_f32", text({rows, 8192}) + " into 2 along dim 1", bytes,
                     [=] { (void)split(*joined, {4096, 4096}, 1); }});
  }
  // embedding: 16384 rows of 4096 from a 128000-row table
  {
    const std::int64_t table = full ? 128000 : 4096, picks = full ? 16384 : 1024, d = 4096;
    auto weight = ramp(ctx, {table, d}, DType::F32);
    auto idx = random_index(ctx, {picks}, table, 1);
    cases.push_back({"embedding_f32", text({picks}) + " rows of " + text({table, d}), 2.0 * 4 * picks * d + 8.0 * picks,
                     [=] { (void)nn::embedding(*weight, *idx); }});
  }
  // index_select along a middle dim: 128-byte rows
  {
    const Shape s = full ? Shape{256, 32768, 32} : Shape{16, 4096, 32};
    const std::int64_t picks = s[1] / 2;
    auto x = ramp(ctx, s, DType::F32);
    auto idx = random_index(ctx, {picks}, s[1], 2);
    const double out_bytes = 4.0 * s[0] * picks * s[2];
    cases.push_back({"index_select_f32", text(s) + " dim 1, " + std::to_string(picks) + " picks",
                     2 * out_bytes + 8.0 * picks, [=] { (void)index_select(*x, 1, *idx); }});
  }
  // gather along the last dim, an I64 index as large as the output
  {
    const std::int64_t rows = full ? 16384 : 1024, cols = 4096;
    auto x = ramp(ctx, {rows, cols}, DType::F32);
    auto idx = random_index(ctx, {rows, cols}, cols, 3);
    cases.push_back({"gather_f32", text({rows, cols}) + " dim 1, I64 index", (4.0 + 8.0 + 4.0) * rows * cols,
                     [=] { (void)gather(*x, 1, *idx); }});
  }
  // masked_select F32 with half of the mask true
  {
    const std::int64_t n = full ? (std::int64_t(1) << 28) : (std::int64_t(1) << 22);
    auto x = ramp(ctx, {n}, DType::F32);
    XorShift rng{12345};
    std::vector<bool> m(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = (rng.next() >> 33) & 1;
    auto mask = ctx.hold(from_vector(m, {n}, ctx.device));
    cases.push_back({"masked_select_f32", text({n}) + ", half true", 4.0 * n + 1.0 * n + 4.0 * (n / 2),
                     [=] { (void)masked_select(*x, *mask); }});
  }
  // embedding backward: 16384 rows of 4096 into 32000 rows, each index about 16 times
  {
    const std::int64_t picks = full ? 16384 : 1024, d = 4096, rows = full ? 32000 : 2048, distinct = picks / 16;
    auto grad = ramp(ctx, {picks, d}, DType::F32);
    auto idx = random_index(ctx, {picks}, distinct, 4);
    cases.push_back({"embedding_backward_f32", text({picks, d}) + " into " + text({rows, d}) + ", ~16 duplicates",
                     4.0 * picks * d + 8.0 * picks + 4.0 * rows * d,
                     [=] { (void)nn::embedding_backward(*grad, *idx, rows); }});
  }
  // embedding backward as the GPT example's byte tokens give it: 16384 tokens of width 768
  // into 256 rows, every other token row 32 (skewed text: one row owns half the sources,
  // which a thread-per-run sum walks serially). The same size in both modes: it is small.
  {
    const std::int64_t picks = 16384, d = 768, rows = 256;
    auto grad = ramp(ctx, {picks, d}, DType::F32);
    XorShift rng{5 * 0x9E3779B97F4A7C15ull + 1};
    std::vector<std::int64_t> v(static_cast<std::size_t>(picks));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = i % 2 == 0 ? 32 : static_cast<std::int64_t>(rng.next() % rows);
    auto idx = ctx.hold(from_vector(v, {picks}, ctx.device));
    cases.push_back({"embedding_backward_skewed_f32", text({picks, d}) + " into " + text({rows, d}) + ", half row 32",
                     4.0 * picks * d + 8.0 * picks + 4.0 * rows * d,
                     [=] { (void)nn::embedding_backward(*grad, *idx, rows); }});
  }
}

FERRITE_BENCH_CASES("shape", shape_cases);

}  // namespace
}  // namespace ferrite::bench
