// CPU implementations of the unary ops: the basic ones (neg, abs, relu, bitwise/logical not)
// here; the floating math ops in cpu_elementwise_math.cpp, the activations in
// cpu_elementwise_activation.cpp.
#include "core/activation_functors.hpp"
#include "core/elementwise_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_unary.hpp"

namespace ferrite::cpu {

void CpuBackend::unary(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params,
                       const ElementwiseLayout& layout) {
  switch (op) {
    case Op::BitwiseNot:
    case Op::LogicalNot:
      return detail::visit_integer_or_bool(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        run_unary_to<T>(detail::BitwiseNotFn{}, x, out, layout);
      });
    case Op::Neg:
    case Op::Abs:
    case Op::Relu:
      return detail::visit_real(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (op == Op::Neg) return run_unary_to<T>(detail::NegFn{}, x, out, layout);
        if (op == Op::Abs) return run_unary_to<T>(detail::AbsFn{}, x, out, layout);
        return run_unary_to<T>(detail::ReluFn{}, x, out, layout);
      });
    default:
      if (detail::is_activation(op)) return unary_activation(op, x, out, params, layout);
      return unary_math(op, x, out, params, layout);
  }
}

}  // namespace ferrite::cpu
