// CPU implementations of the unary ops (basic, floating math, activations) and the
// activation backward passes.
#include "core/activation_functors.hpp"
#include "core/elementwise_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_elementwise_engine.hpp"

namespace ferrite::cpu {
namespace {

// out has x's dtype, or F32 for an F16/BF16 x (mixed precision).
template <class T, class Fn>
void run_unary_to(Fn fn, const Buffer& x, const Buffer& out) {
  const ElementwiseLayout layout = ferrite::contiguous_layout(x.numel(), 1);
  if (out.dtype() == x.dtype())
    run_elementwise(layout, out.data_as<T>(), fn, x.data_as<const T>());
  else
    run_elementwise(layout, out.data_as<float>(), fn, x.data_as<const T>());
}

}  // namespace

void CpuBackend::unary(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params) {
  switch (op) {
    case Op::BitwiseNot:
    case Op::LogicalNot:
      return detail::visit_integer_or_bool(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        run_unary_to<T>(detail::BitwiseNotFn{}, x, out);
      });
    case Op::Neg:
    case Op::Abs:
    case Op::Relu:
      return detail::visit_real(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (op == Op::Neg) return run_unary_to<T>(detail::NegFn{}, x, out);
        if (op == Op::Abs) return run_unary_to<T>(detail::AbsFn{}, x, out);
        return run_unary_to<T>(detail::ReluFn{}, x, out);
      });
    default:
      return detail::visit_floating(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto run = [&](auto fn) { run_unary_to<T>(fn, x, out); };
        if (detail::is_activation(op)) return detail::with_activation_functor(op, params, run);
        return detail::with_math_functor(op, params, run);
      });
  }
}

void CpuBackend::unary_backward(Op op, const Buffer& grad, const Buffer& x, const Buffer& out,
                                const UnaryParams& params) {
  detail::visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::with_backward_functor(op, params, [&](auto fn) {
      run_elementwise(ferrite::contiguous_layout(x.numel(), 2), out.data_as<T>(), fn, grad.data_as<const T>(),
                      x.data_as<const T>());
    });
  });
}

}  // namespace ferrite::cpu
