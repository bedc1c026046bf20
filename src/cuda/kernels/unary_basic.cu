// neg, abs, relu for every real dtype; bitwise_not / logical_not for I32, I64, Bool.
#include "core/elementwise_functors.hpp"
#include "cuda/kernels/unary_kernels.cuh"

namespace ferrite::cuda::kernels {

void unary_basic(Op op, const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream) {
  if (op == Op::BitwiseNot || op == Op::LogicalNot) {
    return detail::visit_integer_or_bool(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      launch_unary<T>(detail::BitwiseNotFn{}, x, out, layout, stream);
    });
  }
  detail::visit_real(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (op) {
      case Op::Neg: return launch_unary<T>(detail::NegFn{}, x, out, layout, stream);
      case Op::Abs: return launch_unary<T>(detail::AbsFn{}, x, out, layout, stream);
      case Op::Relu: return launch_unary<T>(detail::ReluFn{}, x, out, layout, stream);
      default: FERRITE_THROW(Unsupported, op_name(op), " is not a basic unary op");
    }
  });
}

}  // namespace ferrite::cuda::kernels
