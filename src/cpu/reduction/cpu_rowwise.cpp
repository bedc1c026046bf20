// CPU softmax, log-softmax and the layer and RMS norms, forward and backward, in double.
#include <cmath>
#include <limits>
#include <vector>

#include "core/dtype_dispatch.hpp"
#include "cpu/reduction/cpu_reduction.hpp"

namespace ferrite::cpu::reduction {
namespace {

template <class F>
void visit_float(const Buffer& x, const char* op, F&& f) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<detail::wide_t<T>> || detail::is_complex_v<T>)
      FERRITE_THROW(Unsupported, op, ": ", dtype_name(x.dtype()), " on cpu");
    else
      f(tag);
  });
}

// A double sum with Neumaier's compensation: within an ulp or two of the exact sum whatever
// the length, where a plain running sum of n terms drifts by about sqrt(n) ulps of the total.
// The norms need it for F64: a row of 4096 values near 100 summed plainly has a mean off by
// about 1e-12, which (x - mean) then carries into every xhat.
// Once a term is +-Inf or NaN the compensation is meaningless (its Inf - Inf is NaN), so a
// non-finite plain sum is the value: +Inf, -Inf or NaN exactly as IEEE addition of the terms
// gives in any order (docs/families/reduction.md, "Non-finite values").
class CompensatedSum {
 public:
  void add(double v) {
    const double t = sum_ + v;
    compensation_ += std::abs(sum_) >= std::abs(v) ? (sum_ - t) + v : (v - t) + sum_;
    sum_ = t;
  }
  double value() const { return std::isfinite(sum_) ? sum_ + compensation_ : sum_; }

 private:
  double sum_ = 0, compensation_ = 0;
};

// The saved statistics are F32 for F32/F16/BF16 inputs and F64 for F64.
double load_stat(const Buffer& s, std::int64_t i) {
  return s.dtype() == DType::F64 ? s.data_as<const double>()[i] : s.data_as<const float>()[i];
}
void store_stat(const Buffer& s, std::int64_t i, double v) {
  if (s.dtype() == DType::F64)
    s.data_as<double>()[i] = v;
  else
    s.data_as<float>()[i] = static_cast<float>(v);
}

// Stores an output element of a T computation: narrowed to T (double -> T, one rounding), then,
// for an F16/BF16 output of an F32 input, from that float to the output's dtype: the same
// bits as the T result's .to(dtype) (rounding the double straight to two bytes could differ
// where the float rounding lands on a two-byte tie).
template <class T>
void store_output(const Buffer& out, std::int64_t at, double v) {
  const T t = detail::narrow<T>(v);
  switch (out.dtype()) {
    case DType::BF16:
      if constexpr (std::is_same_v<T, float>) {
        out.data_as<BFloat16>()[at] = detail::narrow<BFloat16>(t);
        return;
      }
      break;
    case DType::F16:
      if constexpr (std::is_same_v<T, float>) {
        out.data_as<Half>()[at] = detail::narrow<Half>(t);
        return;
      }
      break;
    default:
      break;
  }
  out.data_as<T>()[at] = t;
}

// An element of grad widened to double: grad is T, or F16/BF16 for an F32 T (widening is
// exact either way, so the same value as grad.to(T)).
double load_grad(const Buffer& grad, std::int64_t at) {
  switch (grad.dtype()) {
    case DType::BF16: return load(grad.data_as<const BFloat16>(), at);
    case DType::F16: return load(grad.data_as<const Half>(), at);
    case DType::F32: return load(grad.data_as<const float>(), at);
    default: return load(grad.data_as<const double>(), at);
  }
}

template <class F>
void for_each_row(std::int64_t rows, std::int64_t work, F&& f) {
#pragma omp parallel for schedule(static) if (rows > 1 && work >= kParallelWork)
  for (std::int64_t r = 0; r < rows; ++r) f(r);
}

}  // namespace

void softmax(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e) {
  visit_float(x, "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data_as<const T>();
    // The result is T, or F32 for an F16/BF16 input when the caller asked for it.
    const bool f32_out = out.dtype() == DType::F32 && !std::is_same_v<T, float>;
    auto store = [&](std::int64_t at, double v) {
      if (f32_out)
        out.data_as<float>()[at] = static_cast<float>(v);
      else
        out.data_as<T>()[at] = detail::narrow<T>(v);
    };
    for_each_row(e.outer * e.inner, e.numel(), [&](std::int64_t k) {
      const std::int64_t base = (k / e.inner) * e.dim * e.inner + k % e.inner;
      double m = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < e.dim; ++j) m = std::fmax(m, load(in, base + j * e.inner));
      double s = 0;
      for (std::int64_t j = 0; j < e.dim; ++j) s += std::exp(load(in, base + j * e.inner) - m);
      const double log_s = std::log(s);
      for (std::int64_t j = 0; j < e.dim; ++j) {
        const double v = load(in, base + j * e.inner) - m;
        store(base + j * e.inner, op == Op::LogSoftmax ? v - log_s : std::exp(v) / s);
      }
    });
  });
}

void softmax_backward(Op op, const Buffer& grad, const Buffer& y, const Buffer& dx, const ReduceExtents& e) {
  visit_float(y, "softmax_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *g = grad.data_as<const T>(), *yy = y.data_as<const T>();
    T* o = dx.data_as<T>();
    for_each_row(e.outer * e.inner, e.numel(), [&](std::int64_t k) {
      const std::int64_t base = (k / e.inner) * e.dim * e.inner + k % e.inner;
      double s = 0;
      for (std::int64_t j = 0; j < e.dim; ++j) {
        const std::int64_t at = base + j * e.inner;
        s += op == Op::SoftmaxBackward ? load(g, at) * load(yy, at) : load(g, at);
      }
      for (std::int64_t j = 0; j < e.dim; ++j) {
        const std::int64_t at = base + j * e.inner;
        const double v = op == Op::SoftmaxBackward ? load(yy, at) * (load(g, at) - s)
                                                   : load(g, at) - std::exp(load(yy, at)) * s;
        o[at] = detail::narrow<T>(v);
      }
    });
  });
}

void layer_norm(const Buffer& x, const Buffer& weight, const Buffer& bias, const Buffer& y, const Buffer& mean,
                const Buffer& rstd, std::int64_t rows, std::int64_t cols, double eps) {
  visit_float(x, "layer_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data_as<const T>();
    for_each_row(rows, rows * cols, [&](std::int64_t r) {
      const T* p = in + r * cols;
      CompensatedSum s, v;
      for (std::int64_t c = 0; c < cols; ++c) s.add(load(p, c));
      const double mu = s.value() / static_cast<double>(cols);
      for (std::int64_t c = 0; c < cols; ++c) v.add((load(p, c) - mu) * (load(p, c) - mu));
      const double rs = 1 / std::sqrt(v.value() / static_cast<double>(cols) + eps);
      store_stat(mean, r, mu);
      store_stat(rstd, r, rs);
      // y is computed from the stored (rounded) statistics, as every backend does.
      const double mu_s = load_stat(mean, r), rs_s = load_stat(rstd, r);
      for (std::int64_t c = 0; c < cols; ++c) {
        double out = (load(p, c) - mu_s) * rs_s;
        if (weight.defined()) out *= load(weight.data_as<const T>(), c);
        if (bias.defined()) out += load(bias.data_as<const T>(), c);
        store_output<T>(y, r * cols + c, out);
      }
    });
  });
}

void rms_norm(const Buffer& x, const Buffer& weight, const Buffer& y, const Buffer& rstd, std::int64_t rows,
              std::int64_t cols, double eps) {
  visit_float(x, "rms_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data_as<const T>();
    for_each_row(rows, rows * cols, [&](std::int64_t r) {
      const T* p = in + r * cols;
      CompensatedSum s;
      for (std::int64_t c = 0; c < cols; ++c) s.add(load(p, c) * load(p, c));
      store_stat(rstd, r, 1 / std::sqrt(s.value() / static_cast<double>(cols) + eps));
      const double rs = load_stat(rstd, r);
      for (std::int64_t c = 0; c < cols; ++c) {
        double out = load(p, c) * rs;
        if (weight.defined()) out *= load(weight.data_as<const T>(), c);
        store_output<T>(y, r * cols + c, out);
      }
    });
  });
}

// Shared by both norms' backward passes. With xhat = (x - mean) * rstd and gw = grad * weight:
//   dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))   (layer norm)
//   dx = rstd * (gw - xhat * mean(gw * xhat))              (RMS norm: mean = 0, no centring)
// dweight = sum over rows of grad * xhat, dbias = sum over rows of grad.
// grad may be two-byte for an F32 T (read through load_grad). A residual (T: F32 or F64) is
// added to dx after dx's rounding to T, in double, and the sum rounded to T: for F32 that is
// float addition (a sum of two floats rounded from double is the float sum), so the bits of
// residual + dx; for F64, the one rounding of residual + the exact-ish dx.
// dx_cast (F16/BF16, F32 T only): the stored dx value, rounded by store_output from that T,
// so the bits of dx.to(dx_cast's dtype).
template <class T>
void norm_backward(bool centred, const Buffer& grad, const Buffer& x, const Buffer& mean, const Buffer& rstd,
                   const Buffer& weight, const Buffer& residual, const Buffer& dx, const Buffer& dx_cast,
                   const Buffer& dweight, const Buffer& dbias, std::int64_t rows, std::int64_t cols) {
  FERRITE_CHECK(!dx_cast.defined() || (std::is_same_v<T, float> && is_half_precision(dx_cast.dtype())), Unsupported,
                centred ? "layer_norm_backward" : "rms_norm_backward", ": dx_cast ",
                dx_cast.defined() ? dtype_name(dx_cast.dtype()) : "", " of ", dtype_name(x.dtype()),
                " input on cpu; allowed: F16/BF16 of an F32 input");
  const T* in = x.data_as<const T>();
  const T* res = residual.defined() ? residual.data_as<const T>() : nullptr;
  auto g = [&](std::int64_t at) { return load_grad(grad, at); };
  auto w = [&](std::int64_t c) { return weight.defined() ? load(weight.data_as<const T>(), c) : 1.0; };
  for_each_row(rows, rows * cols, [&](std::int64_t r) {
    const double mu = centred ? load_stat(mean, r) : 0.0, rs = load_stat(rstd, r);
    CompensatedSum gw_total, gw_xhat_total;
    for (std::int64_t c = 0; c < cols; ++c) {
      const double gw = g(r * cols + c) * w(c);
      gw_total.add(gw);
      gw_xhat_total.add(gw * (load(in, r * cols + c) - mu) * rs);
    }
    const double n = static_cast<double>(cols), sum_gw = gw_total.value(), sum_gw_xhat = gw_xhat_total.value();
    for (std::int64_t c = 0; c < cols; ++c) {
      const double xhat = (load(in, r * cols + c) - mu) * rs;
      const double gw = g(r * cols + c) * w(c);
      const double v = rs * (gw - (centred ? sum_gw / n : 0.0) - xhat * sum_gw_xhat / n);
      const T value = detail::narrow<T>(v);
      const T stored = res ? detail::narrow<T>(load(res, r * cols + c) + static_cast<double>(value)) : value;
      dx.data_as<T>()[r * cols + c] = stored;
      if (dx_cast.defined()) store_output<T>(dx_cast, r * cols + c, static_cast<double>(stored));
    }
  });
  // Column sums, each in row order.
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelWork)
  for (std::int64_t c = 0; c < cols; ++c) {
    CompensatedSum dw, db;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double mu = centred ? load_stat(mean, r) : 0.0;
      dw.add(g(r * cols + c) * (load(in, r * cols + c) - mu) * load_stat(rstd, r));
      db.add(g(r * cols + c));
    }
    if (dweight.defined()) dweight.data_as<T>()[c] = detail::narrow<T>(dw.value());
    if (dbias.defined()) dbias.data_as<T>()[c] = detail::narrow<T>(db.value());
  }
}

void layer_norm_backward(const Buffer& grad, const Buffer& x, const Buffer& mean, const Buffer& rstd,
                         const Buffer& weight, const Buffer& residual, const Buffer& dx, const Buffer& dx_cast,
                         const Buffer& dweight, const Buffer& dbias, std::int64_t rows, std::int64_t cols) {
  visit_float(x, "layer_norm_backward", [&](auto tag) {
    norm_backward<typename decltype(tag)::type>(true, grad, x, mean, rstd, weight, residual, dx, dx_cast, dweight,
                                                dbias, rows, cols);
  });
}

void rms_norm_backward(const Buffer& grad, const Buffer& x, const Buffer& rstd, const Buffer& weight,
                       const Buffer& residual, const Buffer& dx, const Buffer& dx_cast, const Buffer& dweight,
                       std::int64_t rows, std::int64_t cols) {
  visit_float(x, "rms_norm_backward", [&](auto tag) {
    norm_backward<typename decltype(tag)::type>(false, grad, x, Buffer(), rstd, weight, residual, dx, dx_cast,
                                                dweight, Buffer(), rows, cols);
  });
}

}  // namespace ferrite::cpu::reduction
