// CPU reductions: sum, mean, prod, amin, amax, any, all, argmax/argmin, masked amin/amax and
// the gradient of prod. One output element per (outer, inner) pair, each a plain loop.
#include <limits>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/dtype_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "core/extent.hpp"
#include "core/host_scratch.hpp"
#include "cpu/reduction/cpu_reduction.hpp"

namespace ferrite::cpu::reduction {
namespace {

template <class A>
bool is_nan(A v) {
  return v != v;
}

// Runs f(o, i) for every output element, in parallel when the total work pays for it.
template <class F>
void for_each_output(const ReduceExtents& e, F&& f) {
  const std::int64_t n = e.outer * e.inner;
#pragma omp parallel for schedule(static) if (n > 1 && e.numel() >= kParallelWork)
  for (std::int64_t k = 0; k < n; ++k) f(k / e.inner, k % e.inner, k);
}

template <class T>
void reduce_typed(Op op, const T* x, const Buffer& out, const ReduceExtents& e) {
  using A = acc_t<T>;
  const bool wide_out = out.dtype() == DType::I64 && !std::is_same_v<T, std::int64_t>;
  for_each_output(e, [&](std::int64_t o, std::int64_t i, std::int64_t k) {
    const T* p = x + o * e.dim * e.inner + i;
    A acc{};
    switch (op) {
      case Op::Sum:
      case Op::Mean:
        acc = 0;
        for (std::int64_t j = 0; j < e.dim; ++j) acc = detail::AddFn{}(acc, load(p, j * e.inner));  // integers wrap
        if (op == Op::Mean) acc = static_cast<A>(acc / static_cast<A>(e.dim));  // 0/0 = NaN, as PyTorch
        break;
      case Op::Prod:
        acc = 1;
        for (std::int64_t j = 0; j < e.dim; ++j) acc = detail::MulFn{}(acc, load(p, j * e.inner));
        break;
      case Op::Amin:
      case Op::Amax: {
        const bool is_max = op == Op::Amax;
        acc = load(p, 0);
        for (std::int64_t j = 1; j < e.dim && !is_nan(acc); ++j) {
          const A v = load(p, j * e.inner);
          if (is_nan(v) || (is_max ? v > acc : v < acc)) acc = v;
        }
        break;
      }
      case Op::Any:
      case Op::All: {
        const bool want = op == Op::Any;
        acc = !want;
        for (std::int64_t j = 0; j < e.dim; ++j)
          if ((load(p, j * e.inner) != 0) == want) {
            acc = want;
            break;
          }
        break;
      }
      default:
        FERRITE_THROW(Unsupported, op_name(op), " is not a reduction");
    }
    if (wide_out)
      out.data_as<std::int64_t>()[k] = static_cast<std::int64_t>(acc);
    else if (out.dtype() == DType::F32 && !std::is_same_v<T, float>)  // F32 result of a half-precision input
      out.data_as<float>()[k] = static_cast<float>(acc);
    else
      out.data_as<T>()[k] = detail::narrow<T>(acc);
  });
}

}  // namespace

void reduce(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T>)
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cpu");
    else
      reduce_typed(op, x.data_as<const T>(), out, e);
  });
}

void arg_reduce(Op op, const Buffer& x, const Buffer& indices, const ReduceExtents& e) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T> || std::is_same_v<T, bool>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cpu");
    } else {
      const bool is_max = op == Op::Argmax;
      for_each_output(e, [&](std::int64_t o, std::int64_t i, std::int64_t k) {
        const T* p = x.data_as<const T>() + o * e.dim * e.inner + i;
        auto best = load(p, 0);
        std::int64_t at = 0;
        for (std::int64_t j = 1; j < e.dim && !is_nan(best); ++j) {  // the first NaN wins
          const auto v = load(p, j * e.inner);
          if (is_nan(v) || (is_max ? v > best : v < best)) best = v, at = j;  // strict: first on ties
        }
        indices.data_as<std::int64_t>()[k] = at;
      });
    }
  });
}

void masked_reduce(Op op, const Buffer& x, const Buffer& mask, const Buffer& out, const ReduceExtents& e) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T> || std::is_same_v<T, bool>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cpu");
    } else {
      using A = acc_t<T>;
      const bool is_max = op == Op::MaskedAmax;
      // The identity of an empty selection: -Inf for max, +Inf for min (integers: their limits).
      A identity;
      if constexpr (std::is_floating_point_v<A>)
        identity = is_max ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
      else
        identity = is_max ? static_cast<A>(std::numeric_limits<T>::min()) : static_cast<A>(std::numeric_limits<T>::max());
      for_each_output(e, [&](std::int64_t o, std::int64_t i, std::int64_t k) {
        const std::int64_t base = o * e.dim * e.inner + i;
        A acc = identity;
        for (std::int64_t j = 0; j < e.dim; ++j) {
          if (!mask.data_as<const bool>()[base + j * e.inner]) continue;
          const A v = load(x.data_as<const T>(), base + j * e.inner);
          if (is_nan(v) || (is_max ? v > acc : v < acc)) acc = v;
          if (is_nan(acc)) break;
        }
        out.data_as<T>()[k] = detail::narrow<T>(acc);
      });
    }
  });
}

void prod_backward(const Buffer& grad, const Buffer& x, const Buffer& out, const ReduceExtents& e) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<detail::wide_t<T>>) {
      FERRITE_THROW(Unsupported, "prod_backward: ", dtype_name(x.dtype()), " on cpu");
    } else {
      // out[j] = grad * (product before j) * (product after j): exact with zeros, no division.
      // One row of scratch per thread, taken before the parallel loop: an exception must not
      // leave an OpenMP region, and host memory that is not there is Error(OutOfMemory).
#ifdef _OPENMP
      const std::int64_t threads = omp_get_max_threads();
#else
      const std::int64_t threads = 1;
#endif
      std::vector<double> scratch = detail::host_scratch<double>(
          detail::checked_mul(threads, e.dim, [] { return std::string("prod_backward: scratch size"); }),
          "prod_backward");
      for_each_output(e, [&](std::int64_t o, std::int64_t i, std::int64_t k) {
        const std::int64_t base = o * e.dim * e.inner + i;
        const T* p = x.data_as<const T>() + base;
        T* q = out.data_as<T>() + base;
        const double g = load(grad.data_as<const T>(), k);
#ifdef _OPENMP
        double* before = scratch.data() + omp_get_thread_num() * e.dim;
#else
        double* before = scratch.data();
#endif
        double run = 1;
        for (std::int64_t j = 0; j < e.dim; ++j) before[j] = run, run *= load(p, j * e.inner);
        run = 1;
        for (std::int64_t j = e.dim - 1; j >= 0; --j) {
          q[j * e.inner] = detail::narrow<T>(g * before[j] * run);
          run *= load(p, j * e.inner);
        }
      });
    }
  });
}

}  // namespace ferrite::cpu::reduction
