// conv2d on the CPU backend: per image and group, the receptive fields are unfolded into a
// [c/g * r * s, oh * ow] column matrix (im2col) and multiplied with the group's weights by
// Eigen's GEMM (single-threaded per call, see cpu/matmul/eigen_gemm.hpp). Images run in
// parallel for the forward and input-gradient passes; the weight gradient sums over images
// in a fixed order with the GEMM tiles in parallel, so results do not depend on the thread
// count. F16/BF16 are widened to float once and rounded once on store (F32 accumulation).
#include "cpu/conv/cpu_conv2d.hpp"

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#include "core/host_scratch.hpp"
#include "core/numeric.hpp"
#include "cpu/matmul/eigen_gemm.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cpu {
namespace {

constexpr std::int64_t kTile = 256;

struct Dims {
  std::int64_t cg, kg, crs, ohw, hw;
};

Dims dims_of(const Conv2dDesc& d) {
  return {d.c / d.groups, d.k / d.groups, d.c / d.groups * d.r * d.s, d.oh * d.ow, d.h * d.w};
}

// col[q, o] for q = (c * r + i) * s + j: the input tap of output o, or 0 in the padding.
template <class W>
void im2col(const Conv2dDesc& d, const W* x, W* col, std::int64_t channels, bool parallel) {
  const std::int64_t rows = channels * d.r * d.s;
#pragma omp parallel for schedule(static) if (parallel)
  for (std::int64_t q = 0; q < rows; ++q) {
    const std::int64_t c = q / (d.r * d.s), i = q / d.s % d.r, j = q % d.s;
    W* dst = col + q * d.oh * d.ow;
    for (std::int64_t oy = 0; oy < d.oh; ++oy) {
      const std::int64_t y = oy * d.stride_h - d.pad_h + i * d.dil_h;
      for (std::int64_t ox = 0; ox < d.ow; ++ox) {
        const std::int64_t xx = ox * d.stride_w - d.pad_w + j * d.dil_w;
        dst[oy * d.ow + ox] = (y >= 0 && y < d.h && xx >= 0 && xx < d.w) ? x[(c * d.h + y) * d.w + xx] : W(0);
      }
    }
  }
}

// The adjoint of im2col: every column entry is added to the input tap it came from.
template <class W>
void col2im(const Conv2dDesc& d, const W* col, W* x, std::int64_t channels) {
  std::fill(x, x + channels * d.h * d.w, W(0));
  for (std::int64_t q = 0; q < channels * d.r * d.s; ++q) {
    const std::int64_t c = q / (d.r * d.s), i = q / d.s % d.r, j = q % d.s;
    const W* src = col + q * d.oh * d.ow;
    for (std::int64_t oy = 0; oy < d.oh; ++oy) {
      const std::int64_t y = oy * d.stride_h - d.pad_h + i * d.dil_h;
      if (y < 0 || y >= d.h) continue;
      for (std::int64_t ox = 0; ox < d.ow; ++ox) {
        const std::int64_t xx = ox * d.stride_w - d.pad_w + j * d.dil_w;
        if (xx >= 0 && xx < d.w) x[(c * d.h + y) * d.w + xx] += src[oy * d.ow + ox];
      }
    }
  }
}

template <class W>
void whole_gemm(const EigenGemmShape& s, const W* a, const W* b, W* c, W beta) {
  eigen_gemm(s, GemmTile{0, s.m, 0, s.n}, a, b, c, W(1), beta);
}

// The work items of the per-image passes run in an OpenMP loop; no exception may leave it.
template <class F>
void parallel_items(std::int64_t items, const char* op, F&& body) {
  bool out_of_memory = false;
#pragma omp parallel for schedule(dynamic) if (items > 1)
  for (std::int64_t it = 0; it < items; ++it) {
    try {
      body(it);
    } catch (...) {
#pragma omp atomic write
      out_of_memory = true;
    }
  }
  FERRITE_CHECK(!out_of_memory, OutOfMemory, op, ": out of host memory for its column buffers");
}

template <class W>
void forward(const Conv2dDesc& d, const W* x, const W* w, const W* bias, W* out) {
  const Dims m = dims_of(d);
  parallel_items(d.n * d.groups, "conv2d", [&](std::int64_t it) {
    const std::int64_t n = it / d.groups, g = it % d.groups;
    std::vector<W> col(static_cast<std::size_t>(m.crs * m.ohw));
    im2col(d, x + (n * d.c + g * m.cg) * m.hw, col.data(), m.cg, false);
    W* o = out + (n * d.k + g * m.kg) * m.ohw;
    if (m.crs == 0) std::fill(o, o + m.kg * m.ohw, W(0));
    else whole_gemm(EigenGemmShape{m.kg, m.ohw, m.crs, false, false}, w + g * m.kg * m.crs, col.data(), o, W(0));
    if (bias)
      for (std::int64_t k = 0; k < m.kg; ++k)
        for (std::int64_t e = 0; e < m.ohw; ++e) o[k * m.ohw + e] += bias[g * m.kg + k];
  });
}

template <class W>
void backward_input(const Conv2dDesc& d, const W* grad, const W* w, W* gx) {
  const Dims m = dims_of(d);
  parallel_items(d.n * d.groups, "conv2d_backward", [&](std::int64_t it) {
    const std::int64_t n = it / d.groups, g = it % d.groups;
    std::vector<W> col(static_cast<std::size_t>(m.crs * m.ohw), W(0));
    if (m.kg > 0 && m.ohw > 0)
      whole_gemm(EigenGemmShape{m.crs, m.ohw, m.kg, true, false}, w + g * m.kg * m.crs,
                 grad + (n * d.k + g * m.kg) * m.ohw, col.data(), W(0));
    col2im(d, col.data(), gx + (n * d.c + g * m.cg) * m.hw, m.cg);
  });
}

template <class W>
void backward_weight(const Conv2dDesc& d, const W* grad, const W* x, W* gw) {
  const Dims m = dims_of(d);
  std::fill(gw, gw + d.k * m.crs, W(0));
  if (m.ohw == 0) return;
  std::vector<W> col = detail::host_scratch<W>(m.crs * m.ohw, "conv2d_backward");
  const std::int64_t row_tiles = (m.kg + kTile - 1) / kTile, col_tiles = (m.crs + kTile - 1) / kTile;
  for (std::int64_t n = 0; n < d.n; ++n)
    for (std::int64_t g = 0; g < d.groups; ++g) {
      im2col(d, x + (n * d.c + g * m.cg) * m.hw, col.data(), m.cg, m.crs * m.ohw >= (1 << 16));
      const EigenGemmShape s{m.kg, m.crs, m.ohw, false, true};
      const W* a = grad + (n * d.k + g * m.kg) * m.ohw;
      W* c = gw + g * m.kg * m.crs;
      parallel_items(row_tiles * col_tiles, "conv2d_backward", [&](std::int64_t t) {
        const std::int64_t row = t / col_tiles * kTile, cl = t % col_tiles * kTile;
        eigen_gemm(s, GemmTile{row, std::min(kTile, m.kg - row), cl, std::min(kTile, m.crs - cl)}, a, col.data(), c,
                   W(1), W(1));
      });
    }
}

template <class H>
std::vector<float> widened(const Buffer& b) {
  std::vector<float> v = detail::host_scratch<float>(b.numel(), "conv2d");
  const H* p = b.data_as<const H>();
  for (std::int64_t i = 0; i < b.numel(); ++i) v[static_cast<std::size_t>(i)] = detail::widen(p[i]);
  return v;
}

template <class H>
void store(const std::vector<float>& v, const Buffer& out) {
  H* p = out.data_as<H>();
  for (std::int64_t i = 0; i < out.numel(); ++i) p[i] = detail::narrow<H>(v[static_cast<std::size_t>(i)]);
}

// Runs `f(a, b, out)` on W-typed data: F32/F64 in place, F16/BF16 through float copies.
template <class F>
void with_wide(const char* op, const Buffer& a, const Buffer& b, const Buffer* bias, const Buffer& out, F&& f) {
  switch (a.dtype()) {
    case DType::F32:
      return f(a.data_as<const float>(), b.data_as<const float>(), bias ? bias->data_as<const float>() : nullptr,
               out.data_as<float>());
    case DType::F64:
      return f(a.data_as<const double>(), b.data_as<const double>(), bias ? bias->data_as<const double>() : nullptr,
               out.data_as<double>());
    case DType::F16:
    case DType::BF16: {
      const bool half = a.dtype() == DType::F16;
      auto wide = [&](const Buffer& x) { return half ? widened<Half>(x) : widened<BFloat16>(x); };
      const std::vector<float> av = wide(a), bv = wide(b);
      const std::vector<float> biasv = bias ? wide(*bias) : std::vector<float>{};
      std::vector<float> ov = detail::host_scratch<float>(out.numel(), op);
      f(av.data(), bv.data(), bias ? biasv.data() : nullptr, ov.data());
      if (half) store<Half>(ov, out);
      else store<BFloat16>(ov, out);
      return;
    }
    default: break;
  }
  FERRITE_THROW(Unsupported, op, ": dtype ", dtype_name(a.dtype()), " is not supported on the cpu backend");
}

}  // namespace

void cpu_conv2d_forward(const Conv2dDesc& d, const Buffer& x, const Buffer& weight, const Buffer* bias,
                        const Buffer& out) {
  if (out.numel() == 0) return;
  with_wide("conv2d", x, weight, bias, out, [&](auto xp, auto wp, auto bp, auto op) { forward(d, xp, wp, bp, op); });
}

void cpu_conv2d_backward_input(const Conv2dDesc& d, const Buffer& grad, const Buffer& weight, const Buffer& grad_x) {
  if (grad_x.numel() == 0) return;
  with_wide("conv2d_backward", grad, weight, nullptr, grad_x,
            [&](auto gp, auto wp, auto, auto op) { backward_input(d, gp, wp, op); });
}

void cpu_conv2d_backward_weight(const Conv2dDesc& d, const Buffer& grad, const Buffer& x, const Buffer& grad_weight) {
  if (grad_weight.numel() == 0) return;
  with_wide("conv2d_backward", grad, x, nullptr, grad_weight,
            [&](auto gp, auto xp, auto, auto op) { backward_weight(d, gp, xp, op); });
}

}  // namespace ferrite::cpu
