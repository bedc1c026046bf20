// Benchmark cases of the convolution family (issue #17): conv2d forward and both backward
// passes (TFLOP/s at 2·N·K·OH·OW·C/g·R·S), pooling 3x3 stride 2 (GB/s: input read once,
// outputs and indices written once) and the fused GRU cell (GB/s).
#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

void conv_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const bool full = ctx.full_size();
  // conv2d: N=64, C=K=256, 56x56, 3x3, padding 1 (TF32 off: ferrite's switch is off by default)
  const std::int64_t n = full ? 64 : 2, c = full ? 256 : 16, hw = full ? 56 : 14;
  const std::string conv_text = "[" + std::to_string(n) + ", " + std::to_string(c) + ", " + std::to_string(hw) + ", " +
                                std::to_string(hw) + "] * [" + std::to_string(c) + ", " + std::to_string(c) + ", 3, 3]";
  const double conv_flops = 2.0 * double(n) * double(c) * double(hw * hw) * double(c) * 9.0;
  const nn::Conv2dOptions pad1{.padding = {1, 1}};
  for (DType dt : {DType::F32, DType::BF16}) {
    const std::string sfx = dt == DType::F32 ? "f32" : "bf16";
    auto x = ctx.random({n, c, hw, hw}, dt, 31), w = ctx.random({c, c, 3, 3}, dt, 32);
    auto g = ctx.random({n, c, hw, hw}, dt, 33);
    cases.push_back({"conv2d_fwd_" + sfx, conv_text, 0, [=] { (void)nn::conv2d(*x, *w, std::nullopt, pad1); }, false,
                     conv_flops});
    cases.push_back({"conv2d_bwd_input_" + sfx, conv_text, 0,
                     [=] { (void)nn::conv2d_backward(*g, *x, *w, pad1, {true, false, false}); }, false, conv_flops});
    cases.push_back({"conv2d_bwd_weight_" + sfx, conv_text, 0,
                     [=] { (void)nn::conv2d_backward(*g, *x, *w, pad1, {false, true, false}); }, false, conv_flops});
    if (dt != DType::F32) continue;
    // F32 with TF32 allowed (ferrite's switch on for the call; PyTorch's cudnn.allow_tf32 likewise)
    auto tf32 = [](auto f) {
      return [f] {
        set_allow_tf32(true);
        f();
        set_allow_tf32(false);
      };
    };
    cases.push_back({"conv2d_fwd_f32_tf32", conv_text, 0, tf32([=] { (void)nn::conv2d(*x, *w, std::nullopt, pad1); }),
                     false, conv_flops});
    cases.push_back({"conv2d_bwd_input_f32_tf32", conv_text, 0,
                     tf32([=] { (void)nn::conv2d_backward(*g, *x, *w, pad1, {true, false, false}); }), false,
                     conv_flops});
    cases.push_back({"conv2d_bwd_weight_f32_tf32", conv_text, 0,
                     tf32([=] { (void)nn::conv2d_backward(*g, *x, *w, pad1, {false, true, false}); }), false,
                     conv_flops});
  }

  // pooling 3x3 stride 2 padding 1 on [64, 256, 112, 112] F32
  const std::int64_t pn = full ? 64 : 2, pc = full ? 256 : 8, phw = full ? 112 : 32, po = (phw - 1) / 2 + 1;
  const std::string pool_text = "[" + std::to_string(pn) + ", " + std::to_string(pc) + ", " + std::to_string(phw) +
                                ", " + std::to_string(phw) + "] 3x3/2";
  auto px = ctx.random({pn, pc, phw, phw}, DType::F32, 34);
  const double in_bytes = double(pn * pc * phw * phw) * 4, out_elems = double(pn * pc * po * po);
  cases.push_back({"max_pool2d_f32", pool_text, in_bytes + out_elems * (4 + 8),
                   [=] { (void)nn::max_pool2d(*px, {{3, 3}, nn::Size2{2, 2}, {1, 1}}); }});
  cases.push_back({"avg_pool2d_f32", pool_text, in_bytes + out_elems * 4,
                   [=] { (void)nn::avg_pool2d(*px, {{3, 3}, nn::Size2{2, 2}, {1, 1}}); }});

  // fused GRU cell, B=256, H=1024, F32, with biases
  const std::int64_t b = full ? 256 : 16, h = full ? 1024 : 64;
  auto ig = ctx.random({b, 3 * h}, DType::F32, 35), hg = ctx.random({b, 3 * h}, DType::F32, 36);
  auto hx = ctx.random({b, h}, DType::F32, 37);
  auto ib = ctx.random({3 * h}, DType::F32, 38), hb = ctx.random({3 * h}, DType::F32, 39);
  const std::string gru_text = "B " + std::to_string(b) + ", H " + std::to_string(h);
  cases.push_back({"gru_cell_f32", gru_text, double(b * h) * 4 * (3 + 3 + 1 + 1 + 5) + double(6 * h) * 4,
                   [=] { (void)nn::gru_cell(*ig, *hg, *hx, *ib, *hb); }});
  auto ws = ctx.hold(nn::gru_cell(*ig, *hg, *hx, *ib, *hb).workspace);
  cases.push_back({"gru_cell_backward_f32", gru_text, double(b * h) * 4 * (1 + 5 + 3 + 3 + 1) + double(6 * h) * 4,
                   [=] { (void)nn::gru_cell_backward(*hx, *ws, true); }});
}

FERRITE_BENCH_CASES("conv", conv_cases);

}  // namespace
}  // namespace ferrite::bench
