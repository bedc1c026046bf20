// Benchmark cases of the reduction group: reductions, scans, softmax and norms
// (issue #4 targets in bench/torch_cases/reduction.py). Bytes: each input read once, each
// output written once.
#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

std::string shape_text(std::int64_t rows, std::int64_t cols) {
  return "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
}

void reduction_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const bool full = ctx.full_size();
  const std::int64_t n = full ? (std::int64_t(1) << 28) : (std::int64_t(1) << 20);
  const double nf = static_cast<double>(n);
  const std::string n_text = "[" + std::to_string(n) + "]";
  auto v32 = ctx.random({n}, DType::F32, 11);
  auto v16 = ctx.hold(v32->to(DType::BF16));
  cases.push_back({"sum_f32", n_text, 4 * nf, [=] { (void)sum(*v32); }});
  cases.push_back({"amax_f32", n_text, 4 * nf, [=] { (void)amax(*v32); }});
  cases.push_back({"sum_bf16", n_text, 2 * nf, [=] { (void)sum(*v16); }});
  cases.push_back({"amax_bf16", n_text, 2 * nf, [=] { (void)amax(*v16); }});

  // Row-wise shapes: the issue's [65536, 4096] (the main shape, no suffix) and two odd ones,
  // whose names carry the shape they run (reduced sizes say so: softmax_f32_4096x128).
  struct RowShape {
    std::int64_t rows, cols;
  };
  const std::vector<RowShape> shapes = full ? std::vector<RowShape>{{65536, 4096}, {1048576, 128}, {256, 262144}}
                                            : std::vector<RowShape>{{256, 4096}, {4096, 128}, {4, 262144}};
  for (const RowShape& s : shapes) {
    const bool main_shape = &s == &shapes.front();
    const std::string suffix = main_shape ? "" : "_" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
    const double rc = static_cast<double>(s.rows) * static_cast<double>(s.cols);
    const double rows = static_cast<double>(s.rows), cols = static_cast<double>(s.cols);
    const std::string text = shape_text(s.rows, s.cols);
    auto x = ctx.random({s.rows, s.cols}, DType::F32, 21);
    auto g = ctx.random({s.rows, s.cols}, DType::F32, 22);
    auto w = ctx.random({s.cols}, DType::F32, 23);
    auto b = ctx.random({s.cols}, DType::F32, 24);
    auto y = ctx.hold(softmax(*x));
    auto ln = layer_norm(*x, *w, *b);
    auto mean_t = ctx.hold(ln.mean), rstd_t = ctx.hold(ln.rstd);
    auto rms_rstd = ctx.hold(rms_norm(*x, *w).rstd);
    const std::string f32 = "_f32" + suffix;
    cases.push_back({"argmax" + f32, text, 4 * rc + 8 * rows, [=] { (void)argmax(*x, -1); }});
    cases.push_back({"softmax" + f32, text, 8 * rc, [=] { (void)softmax(*x, -1); }});
    cases.push_back({"log_softmax" + f32, text, 8 * rc, [=] { (void)log_softmax(*x, -1); }});
    cases.push_back({"softmax_backward" + f32, text, 12 * rc, [=] { (void)softmax_backward(*g, *y, -1); }});
    cases.push_back({"layer_norm" + f32, text, 8 * rc + 8 * cols + 8 * rows, [=] { (void)layer_norm(*x, *w, *b); }});
    cases.push_back({"rms_norm" + f32, text, 8 * rc + 4 * cols + 4 * rows, [=] { (void)rms_norm(*x, *w); }});
    cases.push_back({"layer_norm_backward" + f32, text, 12 * rc + 8 * rows + 12 * cols,
                     [=] { (void)layer_norm_backward(*g, *x, *mean_t, *rstd_t, *w); }});
    cases.push_back({"rms_norm_backward" + f32, text, 12 * rc + 4 * rows + 8 * cols,
                     [=] { (void)rms_norm_backward(*g, *x, *rms_rstd, *w); }});
    cases.push_back({"cumsum" + f32, text, 8 * rc, [=] { (void)cumsum(*x, -1); }});
    if (main_shape) {  // BF16 versions of the main shape
      auto x16 = ctx.hold(x->to(DType::BF16));
      auto w16 = ctx.hold(w->to(DType::BF16));
      auto b16 = ctx.hold(b->to(DType::BF16));
      auto g16 = ctx.hold(g->to(DType::BF16));
      auto ln16 = layer_norm(*x16, *w16, *b16);
      auto mean16 = ctx.hold(ln16.mean), rstd16 = ctx.hold(ln16.rstd);
      cases.push_back({"argmax_bf16", text, 2 * rc + 8 * rows, [=] { (void)argmax(*x16, -1); }});
      cases.push_back({"softmax_bf16", text, 4 * rc, [=] { (void)softmax(*x16, -1); }});
      cases.push_back({"log_softmax_bf16", text, 4 * rc, [=] { (void)log_softmax(*x16, -1); }});
      cases.push_back({"layer_norm_bf16", text, 4 * rc + 4 * cols + 8 * rows, [=] { (void)layer_norm(*x16, *w16, *b16); }});
      cases.push_back({"rms_norm_bf16", text, 4 * rc + 2 * cols + 4 * rows, [=] { (void)rms_norm(*x16, *w16); }});
      cases.push_back({"layer_norm_backward_bf16", text, 6 * rc + 8 * rows + 6 * cols,
                       [=] { (void)layer_norm_backward(*g16, *x16, *mean16, *rstd16, *w16); }});
      cases.push_back({"cumsum_bf16", text, 4 * rc, [=] { (void)cumsum(*x16, -1); }});
      // A BF16 training step's layer-norm backward (F32 x and residual stream, BF16 grad, a
      // BF16 dx for the next matmul): dx_cast in the same pass (grad 2 + x 4 + residual 4 +
      // dx 4 + dx_cast 2 bytes an element), against the same call followed by dx.to(BF16)
      // (which reads dx's 4 bytes again and writes 2).
      auto r32 = ctx.random({s.rows, s.cols}, DType::F32, 25);
      cases.push_back({"layer_norm_backward_dx_cast", text, 16 * rc + 8 * rows + 12 * cols, [=] {
                         (void)layer_norm_backward(*g16, *x, *mean_t, *rstd_t, *w,
                                                   {.residual = *r32, .dx_cast = DType::BF16});
                       }});
      cases.push_back({"layer_norm_backward_then_cast", text, 20 * rc + 8 * rows + 12 * cols, [=] {
                         (void)layer_norm_backward(*g16, *x, *mean_t, *rstd_t, *w, {.residual = *r32})
                             .dx.to(DType::BF16);
                       }});
      cases.push_back({"sum_rows_f32", text, 4 * rc + 4 * rows, [=] { (void)sum(*x, -1); }});
      cases.push_back({"sum_dim0_f32", text, 4 * rc + 4 * cols, [=] { (void)sum(*x, 0); }});
    }
  }
}

FERRITE_BENCH_CASES("reduction", reduction_cases);

}  // namespace
}  // namespace ferrite::bench
