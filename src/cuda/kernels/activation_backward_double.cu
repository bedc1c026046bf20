// The activation backward passes for F64.
#include "core/activation_functors.hpp"
#include "cuda/kernels/unary_kernels.cuh"

namespace ferrite::cuda::kernels {

void activation_backward_double(Op op, const Buffer& grad, const Buffer& x, const Buffer& out,
                                const UnaryParams& params, const ElementwiseLayout& layout, cudaStream_t stream) {
  auto run = [&](auto sample) {
    using T = decltype(sample);
    detail::with_backward_functor(op, params, [&](auto fn) { launch_backward<T>(fn, grad, x, out, layout, stream); });
  };
  switch (x.dtype()) {
    case DType::F64: return run(double{});
    default: FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " is not F64");
  }
}

}  // namespace ferrite::cuda::kernels
