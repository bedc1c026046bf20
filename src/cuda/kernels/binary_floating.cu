#include "cuda/kernels/binary_kernels.cuh"

namespace ferrite::cuda::kernels {

void binary_floating(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                     cudaStream_t stream) {
  switch (a.dtype()) {
    case DType::F32: return binary_typed<float>(op, a, b, out, layout, stream);
    case DType::F64: return binary_typed<double>(op, a, b, out, layout, stream);
    case DType::F16: return binary_typed<Half>(op, a, b, out, layout, stream);
    case DType::BF16: return binary_typed<BFloat16>(op, a, b, out, layout, stream);
    default: FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(a.dtype()), " is not a floating dtype");
  }
}

}  // namespace ferrite::cuda::kernels
