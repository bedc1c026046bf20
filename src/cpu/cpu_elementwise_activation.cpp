// CPU implementations of the activations (sigmoid, tanh, gelu, silu, elu, mish, ...), the
// part of CpuBackend::unary that src/cpu/cpu_elementwise_unary.cpp hands over.
#include "core/activation_functors.hpp"
#include "core/elementwise_dispatch.hpp"
#include "cpu/cpu_unary.hpp"

namespace ferrite::cpu {

void unary_activation(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params,
                      const ElementwiseLayout& layout) {
  detail::visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::with_activation_functor(op, params, [&](auto fn) { run_unary_to<T>(fn, x, out, layout); });
  });
}

}  // namespace ferrite::cpu
