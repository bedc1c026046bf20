// Benchmark cases of the matrix products (perf.md): large products against the tensor-core
// and FP32/FP64 ceilings, small ones where launch and host overhead decide, and nn::linear
// with its fused bias and residual.
// Each case counts 2·m·n·k flops per product and reports TFLOP/s.
#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

double product_flops(double batch, double m, double n, double k) { return 2.0 * batch * m * n * k; }

std::string cube_text(std::int64_t n) { return std::to_string(n) + "^3"; }

void matmul_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const bool full = ctx.full_size();
  const std::int64_t big = full ? 8192 : 256, f64_size = full ? 4096 : 128;
  const std::int64_t batch = full ? 64 : 4, batch_size = full ? 1024 : 64;

  // Large square products. The half-precision operands are casts of the F32 ones.
  auto a32 = ctx.random({big, big}, DType::F32, 11);
  auto b32 = ctx.random({big, big}, DType::F32, 12);
  auto a16 = ctx.hold(a32->to(DType::BF16)), b16 = ctx.hold(b32->to(DType::BF16));
  auto ah = ctx.hold(a32->to(DType::F16)), bh = ctx.hold(b32->to(DType::F16));
  auto a64 = ctx.random({f64_size, f64_size}, DType::F64, 13);
  auto b64 = ctx.random({f64_size, f64_size}, DType::F64, 14);
  const double big_flops = product_flops(1, big, big, big);
  cases.push_back({"matmul_f32", cube_text(big), 0, [=] { (void)matmul(*a32, *b32); }, false, big_flops});
  cases.push_back({"matmul_tf32", cube_text(big), 0,
                   [=] { (void)matmul(*a32, *b32, {.compute = MatmulCompute::TF32}); }, false, big_flops});
  cases.push_back({"matmul_f64", cube_text(f64_size), 0, [=] { (void)matmul(*a64, *b64); }, false,
                   product_flops(1, f64_size, f64_size, f64_size)});
  cases.push_back({"matmul_bf16", cube_text(big), 0, [=] { (void)matmul(*a16, *b16); }, false, big_flops});
  cases.push_back({"matmul_f16", cube_text(big), 0, [=] { (void)matmul(*ah, *bh); }, false, big_flops});

  // Strided batches.
  auto ba32 = ctx.random({batch, batch_size, batch_size}, DType::F32, 15);
  auto bb32 = ctx.random({batch, batch_size, batch_size}, DType::F32, 16);
  auto ba16 = ctx.hold(ba32->to(DType::BF16)), bb16 = ctx.hold(bb32->to(DType::BF16));
  const std::string batch_text = std::to_string(batch) + " x " + cube_text(batch_size);
  const double batch_flops = product_flops(batch, batch_size, batch_size, batch_size);
  cases.push_back({"bmm_bf16", batch_text, 0, [=] { (void)bmm(*ba16, *bb16); }, false, batch_flops});
  cases.push_back({"bmm_f32", batch_text, 0, [=] { (void)bmm(*ba32, *bb32); }, false, batch_flops});

  // Small products: the host path (validation, plan lookup, launch) is most of the time.
  for (DType dtype : {DType::F32, DType::BF16}) {
    const std::string suffix = dtype == DType::F32 ? "f32" : "bf16";
    for (std::int64_t n : {64, 256}) {
      auto a = ctx.random({n, n}, dtype, 17), b = ctx.random({n, n}, dtype, 18);
      cases.push_back({"matmul_small_" + suffix + "_" + std::to_string(n), cube_text(n), 0,
                       [=] { (void)matmul(*a, *b); }, false, product_flops(1, n, n, n)});
    }
    const std::int64_t width = full ? 4096 : 256;
    auto x = ctx.random({1, width}, dtype, 19), w = ctx.random({width, width}, dtype, 20);
    cases.push_back({"matmul_row_" + suffix, "[1, " + std::to_string(width) + "] x [" + std::to_string(width) + ", " +
                                                 std::to_string(width) + "]",
                     0, [=] { (void)matmul(*x, *w); }, false, product_flops(1, 1, width, width)});
  }

  // A Linear layer with its bias: gpt2-small's MLP up-projection over a batch of 16 x 1024
  // tokens (x [16384, 768], weight [3072, 768], bias [3072]). nn::linear adds the bias in the
  // GEMM's epilogue (cuBLASLt's BIAS), as PyTorch's F.linear does (nvjet *_bias_* kernels).
  const std::int64_t tokens = full ? 16384 : 256, in_features = full ? 768 : 64, out_features = full ? 3072 : 96;
  auto lx = ctx.random({tokens, in_features}, DType::BF16, 21);
  auto lw = ctx.random({out_features, in_features}, DType::BF16, 22);
  auto lb = ctx.random({out_features}, DType::BF16, 23);
  cases.push_back({"linear_bf16_bias",
                   "[" + std::to_string(tokens) + ", " + std::to_string(in_features) + "] x [" +
                       std::to_string(out_features) + ", " + std::to_string(in_features) + "]ᵀ + [" +
                       std::to_string(out_features) + "]",
                   0, [=] { (void)nn::linear(*lx, *lw, *lb); }, false,
                   product_flops(1, tokens, out_features, in_features)});

  // A transformer block's residual update: gpt2-small's MLP down-projection (x [16384, 3072]
  // BF16, weight [768, 3072]) added to the F32 residual stream [16384, 768] in one cuBLASLt
  // call (LinearOptions::residual as C, the new stream as D), with an F32 bias (cuBLASLt's
  // documented bias type for an F32 output) and with a BF16 one. PyTorch's twin is the
  // composition it replaces: r + F.linear(x, w, b).float().
  const std::int64_t hidden = full ? 3072 : 96, model = full ? 768 : 64;
  auto rx = ctx.random({tokens, hidden}, DType::BF16, 24);
  auto rw = ctx.random({model, hidden}, DType::BF16, 25);
  auto rb32 = ctx.random({model}, DType::F32, 26);
  auto rb16 = ctx.hold(rb32->to(DType::BF16));
  auto rr = ctx.random({tokens, model}, DType::F32, 27);
  const std::string residual_text = "[" + std::to_string(tokens) + ", " + std::to_string(hidden) + "] x [" +
                                    std::to_string(model) + ", " + std::to_string(hidden) + "]ᵀ + bias + F32 [" +
                                    std::to_string(tokens) + ", " + std::to_string(model) + "]";
  for (bool f32_bias : {true, false}) {
    auto bias = f32_bias ? rb32 : rb16;
    cases.push_back({f32_bias ? "linear_bf16_residual_f32" : "linear_bf16_residual_f32_bf16_bias", residual_text, 0,
                     [=] {
                       (void)nn::linear(*rx, *rw, *bias, {.out_dtype = DType::F32, .residual = *rr});
                     },
                     false, product_flops(1, tokens, model, hidden)});
  }
}

FERRITE_BENCH_CASES("matmul", matmul_cases);

}  // namespace
}  // namespace ferrite::bench
