// Mixed precision: add/sub/mul/div of F16/BF16 operands into F32.
#include "core/elementwise_functors.hpp"
#include "cuda/kernels/unary_kernels.cuh"

namespace ferrite::cuda::kernels {

void binary_mixed(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                  cudaStream_t stream) {
  FERRITE_CHECK(out.dtype() == DType::F32, Unsupported, op_name(op), ": mixed precision writes F32, not ",
                dtype_name(out.dtype()));
  const detail::ArithmeticFn fn{detail::arithmetic_op_of(op)};
  switch (a.dtype()) {
    case DType::F16: return launch_binary<Half, float>(fn, a, b, out, layout, stream);
    case DType::BF16: return launch_binary<BFloat16, float>(fn, a, b, out, layout, stream);
    default: FERRITE_THROW(Unsupported, op_name(op), ": mixed precision takes F16 or BF16, not ", dtype_name(a.dtype()));
  }
}

}  // namespace ferrite::cuda::kernels
