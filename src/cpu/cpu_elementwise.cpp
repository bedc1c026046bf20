// CPU implementations of fill, arange, casts, the binary and compare ops and where.
#include <cstring>

#include "core/elementwise_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "core/scalar_convert.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_elementwise_engine.hpp"

namespace ferrite::cpu {
namespace {

using detail::TypeTag;
using detail::visit_dtype;

// out has the operands' dtype, or F32 for F16/BF16 operands (mixed precision).
template <class T, class Fn>
void run_binary_to(Fn fn, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout) {
  if (out.dtype() == a.dtype())
    run_elementwise(layout, out.data_as<T>(), fn, a.data_as<const T>(), b.data_as<const T>());
  else
    run_elementwise(layout, out.data_as<float>(), fn, a.data_as<const T>(), b.data_as<const T>());
}

}  // namespace

void CpuBackend::fill(const Buffer& out, Scalar value) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = detail::scalar_to<T>(value);
    run_elementwise(ferrite::contiguous_layout(out.numel(), 0), out.data_as<T>(), [v] { return detail::widen(v); });
  });
}

void CpuBackend::arange(const Buffer& out, double start, double step) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = out.data_as<T>();
    for (std::int64_t i = 0; i < out.numel(); ++i)
      data[i] = detail::narrow<T>(start + static_cast<double>(i) * step);
  });
}

void CpuBackend::cast(const Buffer& x, const Buffer& out) {
  visit_dtype(x.dtype(), [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    visit_dtype(out.dtype(), [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      run_elementwise(ferrite::contiguous_layout(x.numel(), 1), out.data_as<Out>(), detail::CastFn{}, x.data_as<const In>());
    });
  });
}

void CpuBackend::binary(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout) {
  if (detail::is_compare_op(op)) {
    const detail::CompareFn fn{detail::compare_op_of(op)};
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_elementwise(layout, out.data_as<bool>(), fn, a.data_as<const T>(), b.data_as<const T>());
    };
    if (a.dtype() == DType::Bool) return run(TypeTag<bool>{});
    return detail::visit_real(a.dtype(), run);
  }
  if (detail::is_integer_fn_op(op)) {
    return detail::visit_integer_or_bool(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_elementwise(layout, out.data_as<T>(), detail::integer_fn_of(op, sizeof(T)), a.data_as<const T>(),
                      b.data_as<const T>());
    });
  }
  detail::visit_real(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (op) {
      case Op::Add: return run_binary_to<T>(detail::AddFn{}, a, b, out, layout);
      case Op::Sub: return run_binary_to<T>(detail::SubFn{}, a, b, out, layout);
      case Op::Mul: return run_binary_to<T>(detail::MulFn{}, a, b, out, layout);
      case Op::Div: return run_binary_to<T>(detail::DivFn{}, a, b, out, layout);
      case Op::Maximum: return run_binary_to<T>(detail::MinMaxFn{true}, a, b, out, layout);
      case Op::Minimum: return run_binary_to<T>(detail::MinMaxFn{false}, a, b, out, layout);
      default: FERRITE_THROW(Unsupported, "cpu: ", op_name(op), " is not a binary op");
    }
  });
}

void CpuBackend::where(const Buffer& cond, const Buffer& x, const Buffer& y, const Buffer& out,
                       const ElementwiseLayout& layout) {
  detail::visit_element_size(dtype_size(out.dtype()), [&](auto tag) {
    using U = typename decltype(tag)::type;
    run_elementwise(layout, out.data_as<U>(), detail::WhereFn{}, cond.data_as<const bool>(), x.data_as<const U>(),
                    y.data_as<const U>());
  });
}

bool CpuBackend::has_inf_nan(const Buffer& x) {
  return detail::visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = x.data_as<const T>();
    const std::int64_t n = x.numel();
    bool found = false;
#pragma omp parallel for reduction(|| : found) schedule(static) if (n >= kParallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto w = detail::widen(data[i]);
      found = found || (w - w != w - w);  // Inf - Inf and NaN - NaN are NaN; finite - itself is 0
    }
    return found;
  });
}

}  // namespace ferrite::cpu
