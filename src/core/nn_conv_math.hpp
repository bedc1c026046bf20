// Per-element arithmetic of pooling and the fused recurrent cells, shared by the CPU backend
// and the CUDA kernels: both backends run this same code per output element (same window
// order, same wide type), so they differ only where the device's exp/tanh differ.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/numeric.hpp"
#include "ferrite/backend_families/conv_ops.hpp"

namespace ferrite::detail {


/// Whether every index of a plane's pooling fits in 32 bits: the kernels then use `int`
/// arithmetic (4x fewer instructions than int64 on the GPU). Both backends use the same rule.
inline bool pool_fits_int(const Pool2dDesc& d) {
  const std::int64_t big = std::int64_t(1) << 30;
  return d.h * d.w < big && d.oh * d.ow < big && (d.oh + 1) * d.sh + d.kh * d.dh + d.ph < big &&
         (d.ow + 1) * d.sw + d.kw * d.dw + d.pw < big && (d.h + 1) * d.oh < big && (d.w + 1) * d.ow < big;
}

/// The descriptor's fields in the index type I.
template <class I>
struct PoolIdx {
  I h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, divisor;
  bool adaptive, count_include_pad;
  FERRITE_HOST_DEVICE explicit PoolIdx(const Pool2dDesc& d)
      : h(I(d.h)), w(I(d.w)), oh(I(d.oh)), ow(I(d.ow)), kh(I(d.kh)), kw(I(d.kw)), sh(I(d.sh)), sw(I(d.sw)),
        ph(I(d.ph)), pw(I(d.pw)), dh(I(d.dh)), dw(I(d.dw)), divisor(I(d.divisor)), adaptive(d.adaptive),
        count_include_pad(d.count_include_pad) {}
};

/// Calls f(PoolIdx<int>) when the plane fits 32-bit indices, else f(PoolIdx<int64_t>).
template <class F>
void with_pool_index(const Pool2dDesc& d, F&& f) {
  if (pool_fits_int(d)) f(PoolIdx<int>(d));
  else f(PoolIdx<std::int64_t>(d));
}

template <class I>
FERRITE_HOST_DEVICE I idx_min(I a, I b) { return a < b ? a : b; }
template <class I>
FERRITE_HOST_DEVICE I idx_max(I a, I b) { return a > b ? a : b; }

/// `plane` holds the plane's rows from `row0` on (0: the whole plane; the CUDA fast path
/// passes a shared-memory copy of a band of rows). Indices stay those of the whole plane.
/// max_pool2d of output (i, j) of one plane, PyTorch's rule: the window starts at its first
/// in-bounds tap; a value wins when it is greater or NaN (so a NaN propagates, the last NaN's
/// index is kept); an all -inf window returns -inf at its first tap.
template <class T, class I>
FERRITE_HOST_DEVICE void max_pool_element(const PoolIdx<I>& d, const T* plane, I i, I j, T* out,
                                          std::int64_t* index, I row0 = 0) {
  using W = wide_t<T>;
  I hs = i * d.sh - d.ph, ws = j * d.sw - d.pw;
  const I he = idx_min<I>(hs + (d.kh - 1) * d.dh + 1, d.h), we = idx_min<I>(ws + (d.kw - 1) * d.dw + 1, d.w);
  while (hs < 0) hs += d.dh;
  while (ws < 0) ws += d.dw;
  W best = -std::numeric_limits<W>::infinity();
  I best_index = hs * d.w + ws;
  for (I y = hs; y < he; y += d.dh)
    for (I x = ws; x < we; x += d.dw) {
      const W v = widen(plane[(y - row0) * d.w + x]);
      if (v > best || v != v) {
        best = v;
        best_index = y * d.w + x;
      }
    }
  *out = narrow<T>(best);
  *index = best_index;
}

/// The window of avg pool output (i, j): rows [hs, he), columns [ws, we) clipped to the
/// input, and the divisor of its sum.
template <class I>
struct AvgWindow {
  I hs, he, ws, we, divisor;
};

template <class I>
FERRITE_HOST_DEVICE AvgWindow<I> avg_window(const PoolIdx<I>& d, I i, I j) {
  AvgWindow<I> a{};
  if (d.adaptive) {
    a.hs = i * d.h / d.oh;
    a.he = ((i + 1) * d.h + d.oh - 1) / d.oh;
    a.ws = j * d.w / d.ow;
    a.we = ((j + 1) * d.w + d.ow - 1) / d.ow;
    a.divisor = (a.he - a.hs) * (a.we - a.ws);
    return a;
  }
  a.hs = i * d.sh - d.ph;
  a.ws = j * d.sw - d.pw;
  a.he = idx_min<I>(a.hs + d.kh, d.h + d.ph);
  a.we = idx_min<I>(a.ws + d.kw, d.w + d.pw);
  const I padded = (a.he - a.hs) * (a.we - a.ws);
  a.hs = idx_max<I>(a.hs, 0);
  a.ws = idx_max<I>(a.ws, 0);
  a.he = idx_min<I>(a.he, d.h);
  a.we = idx_min<I>(a.we, d.w);
  a.divisor = d.divisor != 0 ? d.divisor : d.count_include_pad ? padded : (a.he - a.hs) * (a.we - a.ws);
  return a;
}

template <class T, class I>
FERRITE_HOST_DEVICE T avg_pool_element(const PoolIdx<I>& d, const T* plane, I i, I j, I row0 = 0) {
  using W = wide_t<T>;
  const AvgWindow<I> a = avg_window(d, i, j);
  if (a.hs >= a.he || a.ws >= a.we) return narrow<T>(W(0));  // a window wholly in the padding
  W sum = 0;
  for (I y = a.hs; y < a.he; ++y)
    for (I x = a.ws; x < a.we; ++x) sum += widen(plane[(y - row0) * d.w + x]);
  return narrow<T>(sum / static_cast<W>(a.divisor));
}

/// The outputs along one axis whose windows may cover input position `p`: [first, last).
template <class I>
struct OutRange {
  I first, last;
};

template <class I>
FERRITE_HOST_DEVICE OutRange<I> covering_outputs(I p, I in, I out, I k, I s, I pad, I dil, bool adaptive) {
  if (adaptive) return {p * out / in, idx_min<I>(((p + 1) * out + in - 1) / in, out)};
  const I span = (k - 1) * dil + 1;
  const I first = p + pad < span ? 0 : (p + pad - span) / s + 1;
  return {first, idx_min<I>((p + pad) / s + 1, out)};
}

/// Gradient of one input element of avg pool: Σ grad / divisor over the windows covering it.
template <class T, class I>
FERRITE_HOST_DEVICE T avg_pool_backward_element(const PoolIdx<I>& d, const T* grad_plane, I y, I x) {
  using W = wide_t<T>;
  const OutRange<I> ri = covering_outputs<I>(y, d.h, d.oh, d.kh, d.sh, d.ph, 1, d.adaptive);
  const OutRange<I> rj = covering_outputs<I>(x, d.w, d.ow, d.kw, d.sw, d.pw, 1, d.adaptive);
  W sum = 0;
  for (I i = ri.first; i < ri.last; ++i)
    for (I j = rj.first; j < rj.last; ++j) {
      const AvgWindow<I> a = avg_window(d, i, j);
      if (y >= a.hs && y < a.he && x >= a.ws && x < a.we)
        sum += widen(grad_plane[i * d.ow + j]) / static_cast<W>(a.divisor);
    }
  return narrow<T>(sum);
}

/// Gradient of one input element of max pool: the grads of the outputs that chose it.
template <class T, class I>
FERRITE_HOST_DEVICE T max_pool_backward_element(const PoolIdx<I>& d, const T* grad_plane,
                                                const std::int64_t* index_plane, I y, I x) {
  using W = wide_t<T>;
  const OutRange<I> ri = covering_outputs<I>(y, d.h, d.oh, d.kh, d.sh, d.ph, d.dh, false);
  const OutRange<I> rj = covering_outputs<I>(x, d.w, d.ow, d.kw, d.sw, d.pw, d.dw, false);
  const std::int64_t me = y * d.w + x;
  W sum = 0;
  for (I i = ri.first; i < ri.last; ++i)
    for (I j = rj.first; j < rj.last; ++j)
      if (index_plane[i * d.ow + j] == me) sum += widen(grad_plane[i * d.ow + j]);
  return narrow<T>(sum);
}

// ---- recurrent cells ----

template <class W>
FERRITE_HOST_DEVICE W cell_sigmoid(W x) {
  using std::exp;
  return W(1) / (W(1) + exp(-x));
}

/// One (batch row, hidden unit) of _thnn_fused_gru_cell. Gates r, z, n in thirds of the row.
template <class T>
FERRITE_HOST_DEVICE void gru_element(std::int64_t h, std::int64_t row, std::int64_t j, const T* ig, const T* hg,
                                     const T* hx, const T* ib, const T* hb, T* hy, T* ws) {
  using W = wide_t<T>;
  using std::tanh;
  const T* igr = ig + row * 3 * h;
  const T* hgr = hg + row * 3 * h;
  W in[3], hid[3];
  for (int g = 0; g < 3; ++g) {
    in[g] = widen(igr[g * h + j]) + (ib ? widen(ib[g * h + j]) : W(0));
    hid[g] = widen(hgr[g * h + j]) + (hb ? widen(hb[g * h + j]) : W(0));
  }
  const W r = cell_sigmoid(in[0] + hid[0]);
  const W z = cell_sigmoid(in[1] + hid[1]);
  const W n = tanh(in[2] + r * hid[2]);
  const W prev = widen(hx[row * h + j]);
  hy[row * h + j] = narrow<T>(n + z * (prev - n));
  T* w = ws + row * 5 * h;
  w[j] = narrow<T>(r);
  w[h + j] = narrow<T>(z);
  w[2 * h + j] = narrow<T>(n);
  w[3 * h + j] = narrow<T>(prev);
  w[4 * h + j] = narrow<T>(hid[2]);
}

template <class T>
FERRITE_HOST_DEVICE void gru_backward_element(std::int64_t h, std::int64_t row, std::int64_t j, const T* grad_hy,
                                              const T* ws, T* gig, T* ghg, T* ghx) {
  using W = wide_t<T>;
  const T* w = ws + row * 5 * h;
  const W r = widen(w[j]), z = widen(w[h + j]), n = widen(w[2 * h + j]), prev = widen(w[3 * h + j]),
          hn = widen(w[4 * h + j]);
  const W go = widen(grad_hy[row * h + j]);
  const W d_n = go * (W(1) - z) * (W(1) - n * n);
  const W d_z = go * (prev - n) * z * (W(1) - z);
  const W d_r = d_n * hn * r * (W(1) - r);
  T* gi = gig + row * 3 * h;
  T* gh = ghg + row * 3 * h;
  gi[j] = narrow<T>(d_r);
  gi[h + j] = narrow<T>(d_z);
  gi[2 * h + j] = narrow<T>(d_n);
  gh[j] = narrow<T>(d_r);
  gh[h + j] = narrow<T>(d_z);
  gh[2 * h + j] = narrow<T>(d_n * r);
  ghx[row * h + j] = narrow<T>(go * z);
}

/// One (batch row, hidden unit) of _thnn_fused_lstm_cell. Gates i, f, g, o in quarters.
template <class T>
FERRITE_HOST_DEVICE void lstm_element(std::int64_t h, std::int64_t row, std::int64_t j, const T* ig, const T* hg,
                                      const T* cx, const T* ib, const T* hb, T* hy, T* cy, T* ws) {
  using W = wide_t<T>;
  using std::tanh;
  W pre[4];
  for (int g = 0; g < 4; ++g) {
    const std::int64_t o = row * 4 * h + g * h + j;
    pre[g] = widen(ig[o]) + widen(hg[o]) + (ib ? widen(ib[g * h + j]) : W(0)) + (hb ? widen(hb[g * h + j]) : W(0));
  }
  const W i = cell_sigmoid(pre[0]), f = cell_sigmoid(pre[1]), g = tanh(pre[2]), o = cell_sigmoid(pre[3]);
  const W c = f * widen(cx[row * h + j]) + i * g;
  cy[row * h + j] = narrow<T>(c);
  hy[row * h + j] = narrow<T>(o * tanh(c));
  T* w = ws + row * 4 * h;
  w[j] = narrow<T>(i);
  w[h + j] = narrow<T>(f);
  w[2 * h + j] = narrow<T>(g);
  w[3 * h + j] = narrow<T>(o);
}

template <class T>
FERRITE_HOST_DEVICE void lstm_backward_element(std::int64_t h, std::int64_t row, std::int64_t j, const T* grad_hy,
                                               const T* grad_cy, const T* cx, const T* cy, const T* ws, T* grad_gates,
                                               T* grad_cx) {
  using W = wide_t<T>;
  using std::tanh;
  const T* w = ws + row * 4 * h;
  const W i = widen(w[j]), f = widen(w[h + j]), g = widen(w[2 * h + j]), o = widen(w[3 * h + j]);
  const std::int64_t e = row * h + j;
  const W gh = grad_hy ? widen(grad_hy[e]) : W(0), gc = grad_cy ? widen(grad_cy[e]) : W(0);
  const W t = tanh(widen(cy[e]));
  const W gcx = gh * o * (W(1) - t * t) + gc;
  T* gg = grad_gates + row * 4 * h;
  gg[j] = narrow<T>(gcx * g * i * (W(1) - i));
  gg[h + j] = narrow<T>(gcx * widen(cx[e]) * f * (W(1) - f));
  gg[2 * h + j] = narrow<T>(gcx * i * (W(1) - g * g));
  gg[3 * h + j] = narrow<T>(gh * t * o * (W(1) - o));
  grad_cx[e] = narrow<T>(gcx * f);
}

}  // namespace ferrite::detail
