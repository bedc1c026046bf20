// The activation backward passes for F32, F16, BF16.
#include "core/activation_functors.hpp"
#include "cuda/kernels/unary_kernels.cuh"

namespace ferrite::cuda::kernels {

void activation_backward_single(Op op, const Buffer& grad, const Buffer& x, const Buffer& out,
                                const UnaryParams& params, const ElementwiseLayout& layout, cudaStream_t stream) {
  auto run = [&](auto sample) {
    using T = decltype(sample);
    detail::with_backward_functor(op, params, [&](auto fn) { launch_backward<T>(fn, grad, x, out, layout, stream); });
  };
  switch (x.dtype()) {
    case DType::F32: return run(float{});
    case DType::F16: return run(Half{});
    case DType::BF16: return run(BFloat16{});
    default: FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " is not F32, F16, BF16");
  }
}

}  // namespace ferrite::cuda::kernels
