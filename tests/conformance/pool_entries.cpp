// Conformance entries of pooling (the convolution family): max/avg/adaptive pooling,
// forward and backward.
//
// Forward references are direct loops over the definitions in long double, written here
// (PyTorch's window rules, NaN handling and divisors). Backward references are central finite
// differences of those long-double forwards (of L = Σ grad · output), so every gradient is
// checked against the derivative of an independent forward, not against a second copy of the
// backward formulas. Cases are small (the differences cost two forwards per input element).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "conformance/conformance.hpp"
#include "conformance/conv_test_support.hpp"
#include "conformance/reference.hpp"

namespace ferrite::conformance {
namespace {

using namespace conv_test;

constexpr long double kNan = std::numeric_limits<long double>::quiet_NaN();
constexpr long double kInf = std::numeric_limits<long double>::infinity();

// ---- pooling ----

struct PoolParams {
  std::int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil_mode, include_pad;
  std::int64_t divisor;
};

PoolParams params_of(const Case& c) {
  const auto& v = c.ints;
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8] != 0, v[9] != 0, v[10]};
}

std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d, bool ceil_mode) {
  const long double exact = static_cast<long double>(in + 2 * p - d * (k - 1) - 1) / s;
  std::int64_t o = static_cast<std::int64_t>(ceil_mode ? std::ceil(exact) : std::floor(exact)) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

struct PoolGeom {
  std::int64_t planes, h, w, oh, ow;
  Shape out_shape;
};

PoolGeom pool_geom(const Shape& s, const PoolParams& p) {
  PoolGeom g;
  g.h = s[s.size() - 2];
  g.w = s.back();
  g.planes = shape_numel(s) / (g.h * g.w);
  g.oh = out_size(g.h, p.kh, p.sh, p.ph, p.dh, p.ceil_mode);
  g.ow = out_size(g.w, p.kw, p.sw, p.pw, p.dw, p.ceil_mode);
  g.out_shape = s;
  g.out_shape[s.size() - 2] = g.oh;
  g.out_shape.back() = g.ow;
  return g;
}

// PyTorch's max pool: taps in row-major order; greater or NaN wins; all -inf: the first tap.
void ref_max(const LVec& x, const Shape& s, const PoolParams& p, LVec& val, LVec& idx) {
  const PoolGeom g = pool_geom(s, p);
  for (std::int64_t pl = 0; pl < g.planes; ++pl)
    for (std::int64_t i = 0; i < g.oh; ++i)
      for (std::int64_t j = 0; j < g.ow; ++j) {
        long double best = -kInf;
        std::int64_t at = -1;
        for (std::int64_t a = 0; a < p.kh; ++a)
          for (std::int64_t b = 0; b < p.kw; ++b) {
            const std::int64_t y = i * p.sh - p.ph + a * p.dh, xx = j * p.sw - p.pw + b * p.dw;
            if (y < 0 || y >= g.h || xx < 0 || xx >= g.w) continue;
            const long double v = x[static_cast<std::size_t>((pl * g.h + y) * g.w + xx)];
            if (at < 0) at = y * g.w + xx;
            if (v > best || std::isnan(v)) best = v, at = y * g.w + xx;
          }
        val.push_back(best);
        idx.push_back(static_cast<long double>(at));
      }
}

LVec ref_avg(const LVec& x, const Shape& s, const PoolParams& p) {
  const PoolGeom g = pool_geom(s, p);
  LVec out;
  for (std::int64_t pl = 0; pl < g.planes; ++pl)
    for (std::int64_t i = 0; i < g.oh; ++i)
      for (std::int64_t j = 0; j < g.ow; ++j) {
        long double sum = 0;
        std::int64_t inside = 0, padded = 0;
        for (std::int64_t a = 0; a < p.kh; ++a)
          for (std::int64_t b = 0; b < p.kw; ++b) {
            const std::int64_t y = i * p.sh - p.ph + a, xx = j * p.sw - p.pw + b;
            if (y < g.h + p.ph && xx < g.w + p.pw) ++padded;  // taps inside input or padding
            if (y < 0 || y >= g.h || xx < 0 || xx >= g.w) continue;
            sum += x[static_cast<std::size_t>((pl * g.h + y) * g.w + xx)];
            ++inside;
          }
        const std::int64_t div = p.divisor ? p.divisor : p.include_pad ? padded : inside;
        out.push_back(inside == 0 ? 0 : sum / div);
      }
  return out;
}

LVec ref_adaptive(const LVec& x, const Shape& s, std::int64_t oh, std::int64_t ow) {
  const std::int64_t h = s[s.size() - 2], w = s.back(), planes = shape_numel(s) / (h * w);
  LVec out;
  for (std::int64_t pl = 0; pl < planes; ++pl)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j) {
        const auto h0 = static_cast<std::int64_t>(std::floor(static_cast<long double>(i * h) / oh));
        const auto h1 = static_cast<std::int64_t>(std::ceil(static_cast<long double>((i + 1) * h) / oh));
        const auto w0 = static_cast<std::int64_t>(std::floor(static_cast<long double>(j * w) / ow));
        const auto w1 = static_cast<std::int64_t>(std::ceil(static_cast<long double>((j + 1) * w) / ow));
        long double sum = 0;
        for (std::int64_t y = h0; y < h1; ++y)
          for (std::int64_t xx = w0; xx < w1; ++xx) sum += x[static_cast<std::size_t>((pl * h + y) * w + xx)];
        out.push_back(sum / ((h1 - h0) * (w1 - w0)));
      }
  return out;
}

nn::MaxPool2dOptions max_options(const PoolParams& p) {
  return {{p.kh, p.kw}, nn::Size2{p.sh, p.sw}, {p.ph, p.pw}, {p.dh, p.dw}, p.ceil_mode};
}
nn::AvgPool2dOptions avg_options(const PoolParams& p) {
  nn::AvgPool2dOptions o{{p.kh, p.kw}, nn::Size2{p.sh, p.sw}, {p.ph, p.pw}, p.ceil_mode, p.include_pad};
  if (p.divisor) o.divisor_override = p.divisor;
  return o;
}

// kernel, stride, padding, dilation, ceil_mode, count_include_pad, divisor_override
struct PoolSpec {
  Shape shape;
  std::vector<std::int64_t> ints;
};

std::vector<PoolSpec> pool_specs(bool dilation, bool small) {
  std::vector<PoolSpec> s = {
      {{2, 3, 7, 8}, {3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 0}},
      {{2, 3, 7, 8}, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0}},   // ceil_mode: a window hangs off
      {{2, 3, 7, 8}, {3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0}},   // count_include_pad off
      {{1, 2, 6, 5}, {2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0}},   // rectangular, stride 3 down
      {{1, 1, 5, 5}, {2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 0}},   // ceil_mode with padding
      {{3, 5, 6}, {2, 2, 2, 2, 0, 0, 1, 1, 0, 1, 0}},      // unbatched
      {{0, 3, 5, 5}, {2, 2, 2, 2, 0, 0, 1, 1, 0, 1, 0}},   // empty batch
      {{1, 2, 4, 4}, {3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 5}},   // divisor_override
  };
  if (dilation) {
    s.push_back({{1, 2, 9, 9}, {3, 3, 1, 1, 1, 1, 2, 2, 1, 1, 0}});
    s.push_back({{2, 1, 8, 11}, {2, 3, 2, 2, 1, 1, 3, 2, 0, 1, 0}});
  }
  if (!small) {
    s.push_back({{2, 4, 33, 17}, {3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 0}});
    // Edges of the CUDA forward fast path (bands of output rows staged in shared memory):
    s.push_back({{1, 3, 13, 19}, {3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 0}});   // odd width: unaligned rows
    s.push_back({{2, 3, 9, 10}, {3, 3, 2, 2, 0, 0, 1, 1, 1, 0, 0}});    // ceil_mode: both axes hang off
    s.push_back({{1, 2, 11, 12}, {3, 2, 3, 2, 1, 1, 1, 1, 1, 1, 0}});   // ceil_mode with padding, kh != kw
    s.push_back({{1, 1, 5, 1100}, {3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 0}});  // ow 550 > threads: one row per band
    s.push_back({{1, 1, 4, 2100}, {3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 0}});  // 3 F64 rows > 48 KiB: generic kernel
    s.push_back({{1, 66000, 3, 4}, {3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 0}}); // planes > 65535 (grid y loops)
  }
  return s;
}

std::vector<Case> pool_cases(DType d, Rng& rng, bool dilation, bool small, bool specials) {
  std::vector<Case> cases;
  for (const PoolSpec& s : pool_specs(dilation, small))
    cases.push_back({shape_str(s.shape), {random(s.shape, d, rng, -4, 4)}, s.ints});
  if (specials) {  // NaN and -inf in windows, a window of only -inf
    const Shape sh{1, 1, 4, 6};
    LVec v(24);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<long double>(i % 7) - 3;
    v[1] = kNan;
    v[9] = kNan;
    v[3] = -kInf;
    v[4] = -kInf;
    v[10] = -kInf;
    v[11] = -kInf;
    v[16] = kInf;
    cases.push_back({"NaN and -inf", {to_dtype(v, sh, d)}, {2, 2, 2, 2, 0, 0, 1, 1, 0, 1, 0}});
    // 3x3 stride 2 padding 1, ceil_mode: overlapping windows share NaN / -inf columns; the last
    // rows are all -inf but one NaN, so windows over them only (and the padding) keep their first tap.
    const Shape sh2{2, 1, 7, 9};
    LVec u(126);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<long double>(i % 5) - 2;
    for (std::size_t i : {2u, 20u, 21u, 40u, 70u, 71u}) u[i] = kNan;
    for (std::size_t i : {4u, 13u, 22u, 30u, 31u, 80u}) u[i] = -kInf;
    for (std::size_t i = 45; i < 63; ++i) u[i] = -kInf;   // rows 5 and 6 of the first plane
    for (std::size_t i = 108; i < 126; ++i) u[i] = -kInf;  // rows 5 and 6 of the second plane
    u[50] = kNan;
    cases.push_back({"NaN and -inf, 3x3/2", {to_dtype(u, sh2, d)}, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0}});
  }
  return cases;
}

std::vector<ErrorCase> pool_errors(const std::string& name, const std::function<void(Device, DType, Shape, PoolParams)>& f,
                                   DType d) {
  const PoolParams ok{2, 2, 2, 2, 0, 0, 1, 1, false, true, 0};
  PoolParams big_pad = ok, zero_stride = ok, too_big = ok, huge_stride = ok, huge_kernel = ok;
  big_pad.ph = 2;
  zero_stride.sw = 0;
  too_big.kh = too_big.kw = 5;
  // Parameters whose index arithmetic overflowed int64 (found by tests/unit/api_fuzz_test.cpp):
  // a stride of 2^62 gives one output column, but (ow + 1) * stride wraps.
  huge_stride.sw = std::int64_t(1) << 62;
  // A kernel of 2^62 fits in ceil mode with padding 1 (one output column, as in PyTorch).
  huge_kernel.kw = huge_kernel.sw = std::int64_t(1) << 62;
  huge_kernel.pw = 1;
  huge_kernel.ceil_mode = true;
  return {
      {"stride 2^62", [f, huge_stride, d](Device dev) { f(dev, d, {1, 1, 4, 4}, huge_stride); },
       ErrorKind::InvalidArgument, name + ": the pooling parameters on input [1, 1, 4, 4]"},
      {"kernel 2^62 in ceil mode", [f, huge_kernel, d](Device dev) { f(dev, d, {1, 1, 4, 4}, huge_kernel); },
       ErrorKind::InvalidArgument, "overflow int64 index arithmetic"},
      {"integer input", [f, ok](Device dev) { f(dev, DType::I32, {1, 1, 4, 4}, ok); }, ErrorKind::Unsupported,
       name + ": dtype I32 is not supported"},
      {"2-D input", [f, ok, d](Device dev) { f(dev, d, {4, 4}, ok); }, ErrorKind::ShapeMismatch,
       name + ": expected a 3-D [C, H, W] or 4-D"},
      {"padding over half the kernel", [f, big_pad, d](Device dev) { f(dev, d, {1, 1, 4, 4}, big_pad); },
       ErrorKind::InvalidArgument, "at most half of kernel_size (2, 2)"},
      {"zero stride", [f, zero_stride, d](Device dev) { f(dev, d, {1, 1, 4, 4}, zero_stride); },
       ErrorKind::InvalidArgument, name + ": stride must be positive, got (2, 0)"},
      {"kernel larger than input", [f, too_big, d](Device dev) { f(dev, d, {1, 1, 4, 4}, too_big); },
       ErrorKind::InvalidArgument, "which is too small"},
  };
}

Entry max_pool_entry() {
  Entry e;
  e.op = "max_pool2d";
  e.dtypes = kFloat;
  e.cases = [](DType d, Rng& rng) { return pool_cases(d, rng, true, false, true); };
  e.run_outputs = [](const Case& c) {
    auto r = nn::max_pool2d(c.inputs[0], max_options(params_of(c)));
    return std::vector<Tensor>{r.values, r.indices};
  };
  e.reference_outputs = [](const Case& c) {
    LVec val, idx;
    ref_max(reference::values(c.inputs[0]), c.inputs[0].shape(), params_of(c), val, idx);
    const Shape s = pool_geom(c.inputs[0].shape(), params_of(c)).out_shape;
    return std::vector<Tensor>{to_dtype(val, s, c.inputs[0].dtype()), to_dtype(idx, s, DType::I64)};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType d) {
    auto errors = pool_errors("max_pool2d", [](Device dev, DType t, Shape s, PoolParams p) {
      (void)nn::max_pool2d(zeros(s, t, dev), max_options(p));
    }, d);
    // A dilation of 2^63 - 1 under a kernel of 1: a segfault in the CPU kernel before.
    errors.push_back({"dilation 2^63 - 1",
                      [d](Device dev) {
                        nn::MaxPool2dOptions o{{1, 2}};
                        o.dilation = {std::numeric_limits<std::int64_t>::max(), 1};
                        (void)nn::max_pool2d(zeros({1, 1, 4, 4}, d, dev), o);
                      },
                      ErrorKind::InvalidArgument, "max_pool2d: the pooling parameters on input"});
    return errors;
  };
  return e;
}

Entry avg_pool_entry() {
  Entry e;
  e.op = "avg_pool2d";
  e.dtypes = kFloat;
  e.cases = [](DType d, Rng& rng) { return pool_cases(d, rng, false, false, false); };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{nn::avg_pool2d(c.inputs[0], avg_options(params_of(c)))}; };
  e.reference_outputs = [](const Case& c) {
    const PoolParams p = params_of(c);
    return std::vector<Tensor>{to_dtype(ref_avg(reference::values(c.inputs[0]), c.inputs[0].shape(), p),
                                        pool_geom(c.inputs[0].shape(), p).out_shape, c.inputs[0].dtype())};
  };
  e.reference_tolerance = rounded;
  e.backend_tolerance = exact;  // the same per-element code on both backends
  e.errors = [](DType d) {
    auto errors = pool_errors("avg_pool2d", [](Device dev, DType t, Shape s, PoolParams p) {
      (void)nn::avg_pool2d(zeros(s, t, dev), avg_options(p));
    }, d);
    errors.push_back({"zero divisor", [d](Device dev) {
                        nn::AvgPool2dOptions o{{2, 2}};
                        o.divisor_override = 0;
                        (void)nn::avg_pool2d(zeros({1, 1, 4, 4}, d, dev), o);
                      },
                      ErrorKind::InvalidArgument, "avg_pool2d: divisor_override must be nonzero"});
    return errors;
  };
  return e;
}

// adaptive: ints = output size
Entry adaptive_entry() {
  Entry e;
  e.op = "adaptive_avg_pool2d";
  e.dtypes = kFloat;
  e.cases = [](DType d, Rng& rng) {
    return std::vector<Case>{{"7x8 -> 3x5", {random({2, 3, 7, 8}, d, rng)}, {3, 5}},
                             {"5x5 -> 1x1", {random({2, 3, 5, 5}, d, rng)}, {1, 1}},
                             {"4x4 -> 6x7 (upsampling)", {random({1, 2, 4, 4}, d, rng)}, {6, 7}},
                             {"unbatched", {random({3, 10, 9}, d, rng)}, {4, 4}},
                             {"empty batch", {random({0, 3, 5, 5}, d, rng)}, {2, 2}}};
  };
  e.run_outputs = [](const Case& c) {
    return std::vector<Tensor>{nn::adaptive_avg_pool2d(c.inputs[0], {c.ints[0], c.ints[1]})};
  };
  e.reference_outputs = [](const Case& c) {
    Shape s = c.inputs[0].shape();
    s[s.size() - 2] = c.ints[0];
    s.back() = c.ints[1];
    return std::vector<Tensor>{to_dtype(ref_adaptive(reference::values(c.inputs[0]), c.inputs[0].shape(), c.ints[0],
                                                     c.ints[1]), s, c.inputs[0].dtype())};
  };
  e.reference_tolerance = rounded;
  e.backend_tolerance = exact;
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"negative size", [d](Device dev) { (void)nn::adaptive_avg_pool2d(zeros({1, 1, 4, 4}, d, dev), {-1, 2}); },
         ErrorKind::InvalidArgument, "adaptive_avg_pool2d: output_size must be non-negative, got (-1, 2)"}};
  };
  return e;
}

// Backward entries: inputs x and grad (of the output's shape); reference = finite differences.
Entry pool_backward_entry(const std::string& kind) {
  Entry e;
  e.op = kind + "_backward";
  e.dtypes = kFloat;
  e.cases = [kind](DType d, Rng& rng) {
    std::vector<Case> cases;
    if (kind == "adaptive_avg_pool2d") {
      for (auto [shape, o] : std::vector<std::pair<Shape, Shape>>{{{2, 3, 7, 8}, {3, 5}}, {{1, 2, 4, 4}, {6, 7}}, {{0, 2, 3, 3}, {2, 2}}}) {
        Shape os = shape;
        os[2] = o[0];
        os[3] = o[1];
        cases.push_back({shape_str(shape), {random(shape, d, rng), random(os, d, rng)}, {o[0], o[1]}});
      }
      return cases;
    }
    for (const PoolSpec& s : pool_specs(kind == "max_pool2d", true)) {
      PoolParams p{s.ints[0], s.ints[1], s.ints[2], s.ints[3], s.ints[4], s.ints[5], s.ints[6], s.ints[7],
                   s.ints[8] != 0, s.ints[9] != 0, s.ints[10]};
      // distinct values so the maximum of every window is unique (finite differences)
      const std::int64_t n = shape_numel(s.shape);
      std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
      std::shuffle(perm.begin(), perm.end(), rng);
      LVec v(perm.size());
      // integers below 256 in magnitude: exact in every dtype, BF16 included
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<long double>(perm[i] - n / 2);
      const Tensor x = kind == "max_pool2d" ? to_dtype(v, s.shape, d) : random(s.shape, d, rng);
      cases.push_back({shape_str(s.shape), {x, random(pool_geom(s.shape, p).out_shape, d, rng)}, s.ints});
    }
    return cases;
  };
  e.run_outputs = [kind](const Case& c) {
    const Tensor& x = c.inputs[0];
    const Tensor& g = c.inputs[1];
    if (kind == "adaptive_avg_pool2d") return std::vector<Tensor>{nn::adaptive_avg_pool2d_backward(g, x)};
    const PoolParams p = params_of(c);
    if (kind == "avg_pool2d") return std::vector<Tensor>{nn::avg_pool2d_backward(g, x, avg_options(p))};
    const auto fwd = nn::max_pool2d(x, max_options(p));
    return std::vector<Tensor>{nn::max_pool2d_backward(g, x, fwd.indices, max_options(p))};
  };
  e.reference_outputs = [kind](const Case& c) {
    const Tensor& x = c.inputs[0];
    const Shape s = x.shape();
    std::function<LVec(const std::vector<LVec>&)> f;
    if (kind == "adaptive_avg_pool2d") {
      const std::int64_t oh = c.ints[0], ow = c.ints[1];
      f = [s, oh, ow](const std::vector<LVec>& in) { return ref_adaptive(in[0], s, oh, ow); };
    } else {
      const PoolParams p = params_of(c);
      if (kind == "avg_pool2d") f = [s, p](const std::vector<LVec>& in) { return ref_avg(in[0], s, p); };
      else
        f = [s, p](const std::vector<LVec>& in) {
          LVec val, idx;
          ref_max(in[0], s, p, val, idx);
          return val;
        };
    }
    const LVec g = finite_difference({reference::values(x)}, 0, reference::values(c.inputs[1]), f, 1e-3L);
    return std::vector<Tensor>{to_dtype(g, s, x.dtype())};
  };
  e.reference_tolerance = gradient;
  e.backend_tolerance = exact;
  e.errors = [kind](DType d) {
    return std::vector<ErrorCase>{
        {"grad of the wrong shape",
         [kind, d](Device dev) {
           const Tensor x = zeros({1, 1, 4, 4}, d, dev), g = zeros({1, 1, 3, 3}, d, dev);
           if (kind == "adaptive_avg_pool2d") {
             (void)nn::adaptive_avg_pool2d_backward(g, zeros({1, 2, 4, 4}, d, dev));
           } else if (kind == "avg_pool2d") {
             (void)nn::avg_pool2d_backward(g, x, {{2, 2}});
           } else {
             (void)nn::max_pool2d_backward(g, x, zeros({1, 1, 3, 3}, DType::I64, dev), {{2, 2}});
           }
         },
         ErrorKind::ShapeMismatch, kind + "_backward: grad [1, 1, 3, 3]"},
        // avg_pool2d_backward divided by zero on the CPU for this kernel before (SIGFPE).
        {"kernel 2^62 in ceil mode",
         [kind, d](Device dev) {
           const Tensor x = zeros({1, 1, 4, 4}, d, dev), g = zeros({1, 1, 2, 1}, d, dev);
           const std::int64_t huge = std::int64_t(1) << 62;
           if (kind == "adaptive_avg_pool2d") {
             (void)nn::adaptive_avg_pool2d_backward(zeros({1, 1, huge, 0}, d, dev), x);
           } else if (kind == "avg_pool2d") {
             (void)nn::avg_pool2d_backward(g, x, {{2, huge}, nn::Size2{2, huge}, {0, 1}, true});
           } else {
             nn::MaxPool2dOptions o{{2, huge}, nn::Size2{2, huge}, {0, 1}, {1, 1}, true};
             (void)nn::max_pool2d_backward(g, x, zeros({1, 1, 2, 1}, DType::I64, dev), o);
           }
         },
         ErrorKind::InvalidArgument, kind + "_backward: the pooling parameters on input [1, 1, 4, 4]"}};
  };
  return e;
}

FERRITE_CONFORMANCE(max_pool_entry());
FERRITE_CONFORMANCE(avg_pool_entry());
FERRITE_CONFORMANCE(adaptive_entry());
FERRITE_CONFORMANCE(pool_backward_entry("max_pool2d"));
FERRITE_CONFORMANCE(pool_backward_entry("avg_pool2d"));
FERRITE_CONFORMANCE(pool_backward_entry("adaptive_avg_pool2d"));

}  // namespace
}  // namespace ferrite::conformance
