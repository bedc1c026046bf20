// CPU implementations of fill, arange, casts and the unary and binary ops.
#include <cstring>

#include "core/dtype_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "core/scalar_convert.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_elementwise_engine.hpp"

namespace ferrite::cpu {
namespace {

using detail::TypeTag;
using detail::visit_dtype;

template <class Fn>
void run_unary_typed(Fn fn, const Buffer& x, const Buffer& out) {
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T> || std::is_same_v<T, bool>) {
      FERRITE_THROW(Unsupported, "cpu unary op on ", dtype_name(x.dtype()));
    } else {
      run_elementwise(ferrite::contiguous_layout(x.numel(), 1), out.data_as<T>(), fn, x.data_as<const T>());
    }
  });
}

template <class Fn>
void run_binary_typed(Fn fn, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T> || std::is_same_v<T, bool>) {
      FERRITE_THROW(Unsupported, "cpu binary op on ", dtype_name(a.dtype()));
    } else {
      run_elementwise(layout, out.data_as<T>(), fn, a.data_as<const T>(), b.data_as<const T>());
    }
  });
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

void CpuBackend::unary(Op op, const Buffer& x, const Buffer& out, const UnaryParams&) {
  switch (op) {
    case Op::Neg: return run_unary_typed(detail::NegFn{}, x, out);
    case Op::Relu: return run_unary_typed(detail::ReluFn{}, x, out);
    default: FERRITE_THROW(Unsupported, "cpu: ", op_name(op), " is not a unary op");
  }
}

void CpuBackend::binary(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout) {
  switch (op) {
    case Op::Add: return run_binary_typed(detail::AddFn{}, a, b, out, layout);
    case Op::Sub: return run_binary_typed(detail::SubFn{}, a, b, out, layout);
    case Op::Mul: return run_binary_typed(detail::MulFn{}, a, b, out, layout);
    case Op::Div: return run_binary_typed(detail::DivFn{}, a, b, out, layout);
    default: FERRITE_THROW(Unsupported, "cpu: ", op_name(op), " is not a binary op");
  }
}

}  // namespace ferrite::cpu
