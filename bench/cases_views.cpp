// Benchmark cases of ops on strided views (docs/api.md "Views"): the same ops as the
// elementwise and reduction cases, on a transposed view (2-D, the hardest access pattern) and
// on a narrowed view (rows that start off the 16-byte grid). Bytes count the logical elements
// each op reads and writes, so the rates compare directly with the contiguous cases
// (add_f32, exp_f32, sum_f32 of the same element count; cast_f32_to_bf16, cast_f32_to_i32
// and gelu_backward_f32 for the cast and backward cases).
#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

void view_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const std::int64_t side = ctx.full_size() ? 16384 : 1024;
  const double nf = static_cast<double>(side) * static_cast<double>(side);
  const double narrowed = static_cast<double>(side) * static_cast<double>(side - 1);
  const std::string square = "[" + std::to_string(side) + ", " + std::to_string(side) + "]";
  const std::string t_text = square + ".t()";
  const std::string n_text = square + ".narrow(1, 1, " + std::to_string(side - 1) + ")";

  auto x = ctx.random({side, side}, DType::F32, 11);
  auto y = ctx.random({side, side}, DType::F32, 12);

  cases.push_back({"add_f32_transposed_view", t_text + " + " + square, 12 * nf, [=] { (void)add(x->t(), *y); }});
  cases.push_back({"add_f32_narrow_view", n_text + " x2", 12 * narrowed,
                   [=] { (void)add(x->narrow(1, 1, side - 1), y->narrow(1, 1, side - 1)); }});
  cases.push_back({"exp_f32_transposed_view", t_text, 8 * nf, [=] { (void)exp(x->t()); }});
  cases.push_back({"exp_f32_narrow_view", n_text, 8 * narrowed, [=] { (void)exp(x->narrow(1, 1, side - 1)); }});
  cases.push_back({"contiguous_f32_transposed_view", t_text, 8 * nf, [=] { (void)x->t().contiguous(); }});
  // A reduction of a transposed view reduces the dense block over the mapped dim (here a sum
  // over dim 0 of x: the column kernel, as sum_dim0_f32), with no copy of the input.
  cases.push_back({"sum_f32_transposed_view", t_text + " dim 1", 4 * nf, [=] { (void)sum(x->t(), 1); }});
  cases.push_back({"amax_f32_transposed_view", t_text + " dim 0", 4 * nf, [=] { (void)amax(x->t(), 0); }});
  cases.push_back({"mul_inplace_f32_transposed_view", t_text + " *= 2", 8 * nf, [=] { x->t().mul_(1.0); }});
  // Casts and backward passes read views through their strides too (no dense copy first).
  cases.push_back({"cast_f32_to_bf16_narrow_view", n_text + ".to(BF16)", 6 * narrowed,
                   [=] { (void)x->narrow(1, 1, side - 1).to(DType::BF16); }});
  // Casts to and from integer, Bool and complex dtypes too: a narrowed view through the
  // strided kernel, a transposed one in memory order (its layout kept, as PyTorch).
  cases.push_back({"cast_f32_to_i32_narrow_view", n_text + ".to(I32)", 8 * narrowed,
                   [=] { (void)x->narrow(1, 1, side - 1).to(DType::I32); }});
  cases.push_back({"cast_f32_to_i32_transposed_view", t_text + ".to(I32)", 8 * nf,
                   [=] { (void)x->t().to(DType::I32); }});
  cases.push_back({"gelu_backward_f32_narrow_view", n_text + " x2", 12 * narrowed,
                   [=] { (void)gelu_backward(y->narrow(1, 1, side - 1), x->narrow(1, 1, side - 1)); }});
  // grad and x transposed alike (the grad of gelu(x.t()) takes its layout): memory order.
  cases.push_back({"gelu_backward_f32_transposed_view", t_text + " x2", 12 * nf,
                   [=] { (void)gelu_backward(y->t(), x->t()); }});
}

FERRITE_BENCH_CASES("views", view_cases);

}  // namespace
}  // namespace ferrite::bench
