// Benchmark cases of the elementwise family (docs/performance.md).
#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

void elementwise_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const std::int64_t n = ctx.full_size() ? (std::int64_t(1) << 28) : (std::int64_t(1) << 22);
  const std::int64_t rows = ctx.full_size() ? 65536 : 1024, cols = 4096;
  const double nf = static_cast<double>(n);
  const std::string n_text = "[" + std::to_string(n) + "]";

  auto x32 = ctx.random({n}, DType::F32, 1);
  auto y32 = ctx.random({n}, DType::F32, 2);
  auto x16 = ctx.random({n}, DType::BF16, 3);
  auto y16 = ctx.random({n}, DType::BF16, 4);
  auto matrix = ctx.random({rows, cols}, DType::F32, 5);
  auto row = ctx.random({cols}, DType::F32, 6);

  cases.push_back({"add_f32", n_text, 3 * 4 * nf, [=] { (void)add(*x32, *y32); }});
  cases.push_back({"add_bf16", n_text, 3 * 2 * nf, [=] { (void)add(*x16, *y16); }});
  cases.push_back({"add_row_broadcast_f32", "[" + std::to_string(rows) + ", 4096] + [4096]",
                   2.0 * 4 * rows * cols + 4.0 * cols, [=] { (void)add(*matrix, *row); }});
  cases.push_back({"cast_f32_to_bf16", n_text, 6 * nf, [=] { (void)x32->to(DType::BF16); }});
  // The contiguous twin of the integer cast cases on views (cases_views.cpp).
  cases.push_back({"cast_f32_to_i32", n_text, 8 * nf, [=] { (void)x32->to(DType::I32); }});
  cases.push_back({"relu_f32", n_text, 2 * 4 * nf, [=] { (void)relu(*x32); }});

  // The rest of the family (issue #3): a transcendental unary op, maximum, where, gelu
  // forward and backward, a comparison into Bool and a mixed-precision add.
  auto cond = ctx.hold(lt(*x32, *y32));
  cases.push_back({"exp_f32", n_text, 2 * 4 * nf, [=] { (void)exp(*x32); }});
  cases.push_back({"exp_bf16", n_text, 2 * 2 * nf, [=] { (void)exp(*x16); }});
  cases.push_back({"maximum_f32", n_text, 3 * 4 * nf, [=] { (void)maximum(*x32, *y32); }});
  cases.push_back({"where_f32", n_text, (1 + 3 * 4) * nf, [=] { (void)where(*cond, *x32, *y32); }});
  cases.push_back({"gelu_f32", n_text, 2 * 4 * nf, [=] { (void)gelu(*x32); }});
  cases.push_back({"gelu_backward_f32", n_text, 3 * 4 * nf, [=] { (void)gelu_backward(*y32, *x32); }});
  cases.push_back({"lt_f32_to_bool", n_text, (2 * 4 + 1) * nf, [=] { (void)lt(*x32, *y32); }});
  cases.push_back({"add_bf16_to_f32", n_text, (2 * 2 + 4) * nf, [=] { (void)add(*x16, *y16, DType::F32); }});
}

FERRITE_BENCH_CASES("elementwise", elementwise_cases);

}  // namespace
}  // namespace ferrite::bench
