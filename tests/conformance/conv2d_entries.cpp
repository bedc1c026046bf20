// Conformance entries of conv2d: the forward against a direct seven-loop convolution in long
// double written here, the input/weight/bias gradients against central finite differences
// of that forward (conv is linear in each operand, so the differences are exact up to
// rounding) for small cases, and against the direct adjoint loops for the larger ones, whose
// channel counts are multiples of 8 so that cuDNN's tensor-core engines take them on the GPU.
// Stride, padding, dilation, groups (depthwise too), 1x1, 3x3, 7x7, unbatched and empty.
#include <limits>
#include <cmath>

#include "conformance/conv_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace conv_test;

struct ConvParams {
  std::int64_t sh, sw, ph, pw, dh, dw, groups;
  bool bias;
};
ConvParams params_of(const Case& c) {
  const auto& v = c.ints;
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7] != 0};
}
nn::Conv2dOptions options_of(const ConvParams& p) { return {{p.sh, p.sw}, {p.ph, p.pw}, {p.dh, p.dw}, p.groups}; }

struct Geom {
  std::int64_t n, c, h, w, k, r, s, oh, ow;
  Shape out;
};
Geom geom(const Shape& xs, const Shape& ws, const ConvParams& p) {
  Geom g;
  const bool batched = xs.size() == 4;
  g.n = batched ? xs[0] : 1;
  g.c = xs[xs.size() - 3];
  g.h = xs[xs.size() - 2];
  g.w = xs.back();
  g.k = ws[0];
  g.r = ws[2];
  g.s = ws[3];
  g.oh = (g.h + 2 * p.ph - p.dh * (g.r - 1) - 1) / p.sh + 1;
  g.ow = (g.w + 2 * p.pw - p.dw * (g.s - 1) - 1) / p.sw + 1;
  g.out = batched ? Shape{g.n, g.k, g.oh, g.ow} : Shape{g.k, g.oh, g.ow};
  return g;
}

// in: x, weight, bias (zeros when absent)
LVec ref_conv(const std::vector<LVec>& in, const Geom& g, const ConvParams& p) {
  const std::int64_t cg = g.c / p.groups, kg = g.k / p.groups;
  LVec out;
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t k = 0; k < g.k; ++k)
      for (std::int64_t oy = 0; oy < g.oh; ++oy)
        for (std::int64_t ox = 0; ox < g.ow; ++ox) {
          long double sum = p.bias ? in[2][static_cast<std::size_t>(k)] : 0;
          const std::int64_t grp = k / kg;
          for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t i = 0; i < g.r; ++i)
              for (std::int64_t j = 0; j < g.s; ++j) {
                const std::int64_t y = oy * p.sh - p.ph + i * p.dh, x = ox * p.sw - p.pw + j * p.dw;
                if (y < 0 || y >= g.h || x < 0 || x >= g.w) continue;
                sum += in[0][static_cast<std::size_t>(((n * g.c + grp * cg + c) * g.h + y) * g.w + x)] *
                       in[1][static_cast<std::size_t>(((k * cg + c) * g.r + i) * g.s + j)];
              }
          out.push_back(sum);
        }
  return out;
}

// The three gradients of ref_conv for upstream gradient `gy` (the adjoint loops).
std::vector<LVec> ref_conv_backward(const std::vector<LVec>& in, const LVec& gy, const Geom& g, const ConvParams& p) {
  const std::int64_t cg = g.c / p.groups, kg = g.k / p.groups;
  std::vector<LVec> out{LVec(in[0].size()), LVec(in[1].size()), LVec(static_cast<std::size_t>(g.k))};
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t k = 0; k < g.k; ++k)
      for (std::int64_t oy = 0; oy < g.oh; ++oy)
        for (std::int64_t ox = 0; ox < g.ow; ++ox) {
          const long double gv = gy[static_cast<std::size_t>(((n * g.k + k) * g.oh + oy) * g.ow + ox)];
          out[2][static_cast<std::size_t>(k)] += gv;
          const std::int64_t grp = k / kg;
          for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t i = 0; i < g.r; ++i)
              for (std::int64_t j = 0; j < g.s; ++j) {
                const std::int64_t y = oy * p.sh - p.ph + i * p.dh, x = ox * p.sw - p.pw + j * p.dw;
                if (y < 0 || y >= g.h || x < 0 || x >= g.w) continue;
                const auto xi = static_cast<std::size_t>(((n * g.c + grp * cg + c) * g.h + y) * g.w + x);
                const auto wi = static_cast<std::size_t>(((k * cg + c) * g.r + i) * g.s + j);
                out[0][xi] += gv * in[1][wi];
                out[1][wi] += gv * in[0][xi];
              }
        }
  return out;
}

struct ConvSpec {
  Shape x, w;
  std::vector<std::int64_t> ints;  // stride h/w, pad h/w, dilation h/w, groups, bias
};

std::vector<ConvSpec> conv_specs(bool small) {
  std::vector<ConvSpec> s = {
      {{2, 4, 7, 8}, {6, 4, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1}},
      {{2, 4, 7, 8}, {6, 2, 3, 2}, {2, 1, 1, 0, 1, 1, 2, 0}},   // groups, stride, rectangular
      {{1, 3, 9, 9}, {3, 1, 3, 3}, {1, 1, 2, 2, 2, 2, 3, 1}},   // depthwise, dilation
      {{2, 5, 5, 6}, {3, 5, 1, 1}, {1, 1, 0, 0, 1, 1, 1, 1}},   // 1x1
      {{4, 5, 5}, {3, 4, 2, 2}, {2, 2, 1, 1, 1, 1, 1, 1}},      // unbatched
      {{0, 4, 5, 5}, {2, 4, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1}},   // empty batch
  };
  if (!small) s.push_back({{2, 16, 12, 10}, {32, 8, 3, 3}, {1, 1, 1, 1, 1, 1, 2, 1}});
  if (small) s.push_back({{1, 2, 9, 9}, {2, 2, 7, 7}, {2, 2, 3, 3, 1, 1, 1, 1}});  // 7x7
  return s;
}

// Cases large enough for the GPU's tensor-core engines (checked by the adjoint loops).
std::vector<ConvSpec> conv_large_specs() {
  return {
      {{2, 32, 10, 10}, {32, 32, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1}},  // 3x3, padding
      {{2, 16, 8, 8}, {32, 16, 1, 1}, {2, 2, 0, 0, 1, 1, 1, 0}},    // 1x1, stride 2
      {{1, 8, 20, 20}, {16, 8, 7, 7}, {2, 2, 3, 3, 1, 1, 1, 1}},    // 7x7, stride 2
      {{2, 3, 16, 16}, {8, 3, 7, 7}, {2, 2, 3, 3, 1, 1, 1, 0}},     // 7x7 stem, 3 channels
      {{2, 32, 9, 9}, {32, 4, 3, 3}, {1, 1, 2, 2, 2, 2, 8, 1}},     // groups 8, dilation 2
      {{2, 32, 8, 8}, {32, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 32, 0}},    // depthwise
      {{0, 32, 8, 8}, {16, 32, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1}},    // empty batch
  };
}

Entry conv_entry() {
  Entry e;
  e.op = "conv2d";
  e.dtypes = kFloat;
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    std::vector<ConvSpec> specs = conv_specs(false);
    for (const ConvSpec& s : conv_large_specs()) specs.push_back(s);
    for (const ConvSpec& s : specs)
      cases.push_back({shape_str(s.x) + " * " + shape_str(s.w),
                       {random(s.x, d, rng, -1, 1), random(s.w, d, rng, -1, 1), random({s.w[0]}, d, rng, -1, 1)},
                       s.ints});
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    const ConvParams p = params_of(c);
    return std::vector<Tensor>{nn::conv2d(c.inputs[0], c.inputs[1],
                                          p.bias ? std::optional<Tensor>(c.inputs[2]) : std::nullopt, options_of(p))};
  };
  e.reference_outputs = [](const Case& c) {
    const ConvParams p = params_of(c);
    const Geom g = geom(c.inputs[0].shape(), c.inputs[1].shape(), p);
    const std::vector<LVec> in{reference::values(c.inputs[0]), reference::values(c.inputs[1]),
                               reference::values(c.inputs[2])};
    return std::vector<Tensor>{to_dtype(ref_conv(in, g, p), g.out, c.inputs[0].dtype())};
  };
  e.reference_tolerance = gemm_order;
  e.backend_tolerance = gemm_order;
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"channels do not match", [d](Device dev) { (void)nn::conv2d(zeros({1, 3, 5, 5}, d, dev), zeros({2, 2, 3, 3}, d, dev)); },
         ErrorKind::ShapeMismatch, "conv2d: weight [2, 2, 3, 3]"},
        {"groups do not divide K", [d](Device dev) {
           (void)nn::conv2d(zeros({1, 4, 5, 5}, d, dev), zeros({3, 2, 3, 3}, d, dev), std::nullopt, {.groups = 2});
         }, ErrorKind::ShapeMismatch, "with groups 2 does not fit input"},
        {"kernel larger than input", [d](Device dev) { (void)nn::conv2d(zeros({1, 1, 2, 2}, d, dev), zeros({1, 1, 3, 3}, d, dev)); },
         ErrorKind::ShapeMismatch, "conv2d: the dilated kernel (3x3) is larger than the padded input (2x2)"},
        {"zero stride", [d](Device dev) {
           (void)nn::conv2d(zeros({1, 1, 4, 4}, d, dev), zeros({1, 1, 3, 3}, d, dev), std::nullopt, {.stride = {0, 1}});
         }, ErrorKind::InvalidArgument, "conv2d: stride must be positive, got (0, 1)"},
        {"bias of the wrong shape", [d](Device dev) {
           (void)nn::conv2d(zeros({1, 1, 4, 4}, d, dev), zeros({2, 1, 3, 3}, d, dev), zeros({3}, d, dev));
         }, ErrorKind::ShapeMismatch, "conv2d: bias [3]"},
        {"dtype mismatch", [d](Device dev) {
           (void)nn::conv2d(zeros({1, 1, 4, 4}, d, dev), zeros({1, 1, 3, 3}, d == DType::F64 ? DType::F32 : DType::F64, dev));
         }, ErrorKind::DTypeMismatch, "conv2d"},
        {"empty kernel", [d](Device dev) { (void)nn::conv2d(zeros({1, 0, 4, 4}, d, dev), zeros({2, 0, 3, 3}, d, dev)); },
         ErrorKind::ShapeMismatch, "conv2d: weight [2, 0, 3, 3]"},
        {"integer input", [](Device dev) {
           (void)nn::conv2d(zeros({1, 1, 4, 4}, DType::I32, dev), zeros({1, 1, 3, 3}, DType::I32, dev));
         }, ErrorKind::Unsupported, "conv2d: dtype I32 is not supported"},
        // Values near 2^63 overflowed the shape arithmetic (UBSan; found by api_fuzz_test).
        {"dilation 2^63 - 1", [d](Device dev) {
           (void)nn::conv2d(zeros({1, 1, 4, 4}, d, dev), zeros({1, 1, 2, 2}, d, dev), std::nullopt,
                            {.dilation = {std::numeric_limits<std::int64_t>::max(), 1}});
         }, ErrorKind::InvalidArgument, "conv2d: padding (0, 0) and dilation (9223372036854775807, 1) on input"},
        {"padding 2^62", [d](Device dev) {
           (void)nn::conv2d(zeros({1, 1, 4, 4}, d, dev), zeros({1, 1, 2, 2}, d, dev), std::nullopt,
                            {.padding = {1, std::int64_t(1) << 62}});
         }, ErrorKind::InvalidArgument, "overflow int64"}};
  };
  return e;
}

// inputs x, weight, bias, grad; outputs grad of x, weight and bias.
Entry conv_backward_entry() {
  Entry e;
  e.op = "conv2d_backward";
  e.dtypes = kFloat;
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    std::vector<ConvSpec> specs = conv_specs(true);
    const std::size_t small = specs.size();
    for (const ConvSpec& s : conv_large_specs()) specs.push_back(s);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const ConvSpec& s = specs[i];
      ConvParams p{s.ints[0], s.ints[1], s.ints[2], s.ints[3], s.ints[4], s.ints[5], s.ints[6], true};
      const Geom g = geom(s.x, s.w, p);
      std::vector<std::int64_t> ints = s.ints;
      ints[7] = 1;
      ints.push_back(i >= small);  // ints[8]: checked by the adjoint loops, not finite differences
      cases.push_back({shape_str(s.x) + " * " + shape_str(s.w),
                       {random(s.x, d, rng, -1, 1), random(s.w, d, rng, -1, 1), random({s.w[0]}, d, rng, -1, 1),
                        random(g.out, d, rng, -1, 1)},
                       ints});
    }
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    const auto g = nn::conv2d_backward(c.inputs[3], c.inputs[0], c.inputs[1], options_of(params_of(c)));
    return std::vector<Tensor>{g.input, g.weight, g.bias};
  };
  e.reference_outputs = [](const Case& c) {
    const ConvParams p = params_of(c);
    const Geom g = geom(c.inputs[0].shape(), c.inputs[1].shape(), p);
    const std::vector<LVec> in{reference::values(c.inputs[0]), reference::values(c.inputs[1]),
                               reference::values(c.inputs[2])};
    const LVec w = reference::values(c.inputs[3]);
    std::vector<Tensor> out;
    if (c.ints[8] != 0) {
      const std::vector<LVec> grads = ref_conv_backward(in, w, g, p);
      for (std::size_t i = 0; i < 3; ++i) out.push_back(to_dtype(grads[i], c.inputs[i].shape(), c.inputs[0].dtype()));
      return out;
    }
    const auto f = [g, p](const std::vector<LVec>& v) { return ref_conv(v, g, p); };
    for (std::size_t i = 0; i < 3; ++i)
      out.push_back(to_dtype(finite_difference(in, i, w, f, 0.5L), c.inputs[i].shape(), c.inputs[0].dtype()));
    return out;
  };
  e.reference_tolerance = gemm_order;
  e.backend_tolerance = gemm_order;
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{{"grad of the wrong shape", [d](Device dev) {
                                     (void)nn::conv2d_backward(zeros({1, 1, 3, 3}, d, dev), zeros({1, 1, 4, 4}, d, dev),
                                                               zeros({1, 1, 3, 3}, d, dev));
                                   }, ErrorKind::ShapeMismatch, "conv2d_backward: grad [1, 1, 3, 3]"}};
  };
  return e;
}

FERRITE_CONFORMANCE(conv_entry());
FERRITE_CONFORMANCE(conv_backward_entry());

}  // namespace
}  // namespace ferrite::conformance
