// CPU inclusive scans along the middle extent: cumsum, cumprod, logcumsumexp, cummax, cummin.
#include <cmath>
#include <limits>

#include "core/dtype_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "cpu/reduction/cpu_reduction.hpp"

namespace ferrite::cpu::reduction {
namespace {

// log(exp(a) + exp(b)) without overflow: the larger term factored out.
double log_add_exp(double a, double b) {
  if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
  const double hi = a > b ? a : b, lo = a > b ? b : a;
  if (hi == -std::numeric_limits<double>::infinity() || hi == std::numeric_limits<double>::infinity()) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

template <class T>
void scan_typed(Op op, const T* x, const Buffer& out, const Buffer& indices, const ReduceExtents& e) {
  using A = acc_t<T>;
  const std::int64_t columns = e.outer * e.inner;
#pragma omp parallel for schedule(static) if (columns > 1 && e.numel() >= kParallelWork)
  for (std::int64_t k = 0; k < columns; ++k) {
    const std::int64_t base = (k / e.inner) * e.dim * e.inner + k % e.inner;
    auto store = [&](std::int64_t j, A v) {
      const std::int64_t at = base + j * e.inner;
      if (out.dtype() == DType::I64)
        out.data_as<std::int64_t>()[at] = static_cast<std::int64_t>(v);
      else
        out.data_as<T>()[at] = detail::narrow<T>(v);
    };
    switch (op) {
      case Op::Cumsum:
      case Op::Cumprod: {
        A acc = op == Op::Cumsum ? 0 : 1;
        for (std::int64_t j = 0; j < e.dim; ++j) {
          const A v = load(x, base + j * e.inner);
          acc = op == Op::Cumsum ? detail::AddFn{}(acc, v) : detail::MulFn{}(acc, v);  // integers wrap
          store(j, acc);
        }
        break;
      }
      case Op::Logcumsumexp: {
        if constexpr (std::is_floating_point_v<A>) {
          A acc = -std::numeric_limits<A>::infinity();
          for (std::int64_t j = 0; j < e.dim; ++j) store(j, acc = log_add_exp(acc, load(x, base + j * e.inner)));
        }
        break;
      }
      case Op::Cummax:
      case Op::Cummin: {
        const bool is_max = op == Op::Cummax;
        A best = load(x, base);
        std::int64_t at = 0;
        for (std::int64_t j = 0; j < e.dim; ++j) {
          const A v = load(x, base + j * e.inner);
          // PyTorch: a NaN takes over (and each later NaN moves the index); equal values move it too.
          if (v != v || (best == best && (is_max ? v >= best : v <= best))) best = v, at = j;
          store(j, best);
          indices.data_as<std::int64_t>()[base + j * e.inner] = at;
        }
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace

void scan(Op op, const Buffer& x, const Buffer& out, const Buffer& indices, const ReduceExtents& e) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T> || std::is_same_v<T, bool>)
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cpu");
    else
      scan_typed(op, x.data_as<const T>(), out, indices, e);
  });
}

}  // namespace ferrite::cpu::reduction
