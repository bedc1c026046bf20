// Mixed precision: relu and sigmoid of F16/BF16 into F32 (computed in float, stored once).
#include "core/activation_functors.hpp"
#include "cuda/kernels/unary_kernels.cuh"

namespace ferrite::cuda::kernels {

void unary_mixed(Op op, const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream) {
  FERRITE_CHECK(out.dtype() == DType::F32, Unsupported, op_name(op), ": mixed precision writes F32, not ",
                dtype_name(out.dtype()));
  auto run = [&](auto sample) {
    using T = decltype(sample);
    if (op == Op::Relu) return launch_unary<T, float>(detail::ReluFn{}, x, out, layout, stream);
    if (op == Op::Sigmoid) return launch_unary<T, float>(detail::SigmoidFn{}, x, out, layout, stream);
    FERRITE_THROW(Unsupported, op_name(op), " has no mixed-precision form");
  };
  switch (x.dtype()) {
    case DType::F16: return run(Half{});
    case DType::BF16: return run(BFloat16{});
    default: FERRITE_THROW(Unsupported, op_name(op), ": mixed precision takes F16 or BF16, not ", dtype_name(x.dtype()));
  }
}

}  // namespace ferrite::cuda::kernels
