// CPU implementations of the activation backward passes (grad and x in, grad of the input out;
// grad and x read through the layout's strides).
#include "core/activation_functors.hpp"
#include "core/elementwise_dispatch.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_elementwise_engine.hpp"

namespace ferrite::cpu {

void CpuBackend::unary_backward(Op op, const Buffer& grad, const Buffer& x, const Buffer& out,
                                const UnaryParams& params, const ElementwiseLayout& layout) {
  detail::visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::with_backward_functor(op, params, [&](auto fn) {
      run_elementwise(layout, out.data_as<T>(), fn, grad.data_as<const T>(), x.data_as<const T>());
    });
  });
}

}  // namespace ferrite::cpu
